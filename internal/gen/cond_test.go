package main

import (
	"math/rand"
	"testing"
)

func TestSimplifyPrints(t *testing.T) {
	r := func(lo, hi int) vset { return setOf(vrange{lo, hi}) }
	cases := []struct {
		x     expr
		known vset
		want  string
	}{
		{in(vrange{0, 7}), r(0, 7), "true"},
		{in(vrange{3, 7}), r(0, 7), "v >= 3"},
		{in(vrange{0, 4}), r(0, 7), "v <= 4"},
		{in(vrange{2, 2}), r(0, 7), "v == 2"},
		{in(vrange{2, 5}), r(0, 7), "v >= 2 && v <= 5"},
		{in(none), r(0, 7), "false"},
		// Inside `if v >= 3`, a second v >= 3 is true and its negation false.
		{ge(3), r(3, 7), "true"},
		{not(ge(3)), r(3, 7), "false"},
		{and(ge(3), le(9)), r(3, 7), "true"},
		// The known range decides which ends need a test.
		{in(vrange{4, 7}), r(3, 7), "v >= 4"},
		{in(vrange{3, 5}), r(3, 7), "v <= 5"},
		{not(in(vrange{3, 7})), r(0, 7), "v <= 2"},
		{not(in(vrange{2, 4})), r(0, 7), "v <= 1 || v >= 5"},
		{or(in(vrange{0, 1}), in(vrange{5, 5})), r(0, 7), "v <= 1 || v == 5"},
		// Versions that are not known are free: the hole at 2 does not split the test.
		{or(ge(3), le(1)), r(0, 1) | r(3, 7), "true"},
		{ge(5), r(0, 1) | r(3, 7), "v >= 5"},
		{exprTrue, r(0, 7), "true"},
		{exprFalse, r(0, 7), "false"},
		{and(exprTrue, ge(2)), r(0, 7), "v >= 2"},
		{or(exprFalse, le(2)), r(0, 7), "v <= 2"},
	}
	for _, c := range cases {
		if got := simplify(c.x, c.known).String(); got != c.want {
			t.Errorf("simplify(%s, %b) = %s, want %s", c.x, c.known, got, c.want)
		}
	}
}

func randExpr(r *rand.Rand, depth int) expr {
	if depth == 0 || r.Intn(3) == 0 {
		switch r.Intn(4) {
		case 0:
			return ge(r.Intn(10))
		case 1:
			return le(r.Intn(10))
		case 2:
			return exprTrue
		}
		return exprFalse
	}
	switch r.Intn(3) {
	case 0:
		return and(randExpr(r, depth-1), randExpr(r, depth-1))
	case 1:
		return or(randExpr(r, depth-1), randExpr(r, depth-1))
	}
	return not(randExpr(r, depth-1))
}

// evalGo evaluates a printed condition at version v, as Go would.
func evalPrinted(t *testing.T, s string, v int) bool {
	t.Helper()
	x, err := parseCond(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return evalCond(x, v)
}

// TestSimplifyAgrees checks, on random expressions and known sets, that the simplified
// and printed condition selects exactly the known versions the expression selects, and
// that it is a constant exactly when the expression is constant over what is known.
func TestSimplifyAgrees(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		x := randExpr(r, 4)
		known := vset(r.Uint64()) & setOf(vrange{0, 9})
		if known == 0 {
			continue
		}
		s := simplify(x, known)
		printed := s.String()
		sel := x.set() & known
		if (sel == known) != s.isTrue() || (sel == 0) != s.isFalse() {
			t.Fatalf("simplify(%s, %b) = %s: constant mismatch", x, known, printed)
		}
		for v := 0; v <= 9; v++ {
			if known.has(v) && evalPrinted(t, printed, v) != sel.has(v) {
				t.Fatalf("simplify(%s, %b) = %s disagrees at v=%d", x, known, printed, v)
			}
		}
	}
}

func TestNotAndGo(t *testing.T) {
	for in, want := range map[string]string{
		"m.X == 0":                      "m.X != 0",
		"len(m.X) == 0":                 "len(m.X) != 0",
		"!m.B":                          "m.B",
		"m.B":                           "!m.B",
		"m.S.isDefault()":               "!m.S.isDefault()",
		"(m.X != nil && len(m.X) == 0)": "!(m.X != nil && len(m.X) == 0)",
		`m.S == "a"`:                    `!(m.S == "a")`,
		"m.U == (UUID{})":               "m.U != (UUID{})",
		"true":                          "false",
	} {
		if got := notGo(in); got != want {
			t.Errorf("notGo(%s) = %s, want %s", in, got, want)
		}
	}
	if got := andGo("true", "v <= 1 || v >= 5", "m.X != 0"); got != "(v <= 1 || v >= 5) && m.X != 0" {
		t.Errorf("andGo = %s", got)
	}
}
