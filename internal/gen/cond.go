package main

import (
	"fmt"
	"math/bits"
	"strings"
)

// Version conditions are built as expressions over the version v, simplified against the
// versions known to hold where they stand, and only then printed. Because a message has
// a few dozen versions at most, an expression is decided by the set of versions where it
// holds: simplifying computes that set, intersects it with what is known, and prints the
// shortest expression that selects the same versions among the known ones.

// vset is a set of versions, bit v for version v.
type vset uint64

const maxVersion = 63

// setOf is the set of versions in r.
func setOf(r vrange) vset {
	if r.empty() {
		return 0
	}
	lo, hi := r.lo, r.hi
	if lo < 0 || hi > maxVersion {
		panic(fmt.Sprintf("version range %s out of bounds", r))
	}
	return vset(^uint64(0)>>(63-uint(hi-lo))) << uint(lo)
}

func (s vset) has(v int) bool { return v >= 0 && v <= maxVersion && s&(1<<uint(v)) != 0 }
func (s vset) min() int       { return bits.TrailingZeros64(uint64(s)) }
func (s vset) max() int       { return 63 - bits.LeadingZeros64(uint64(s)) }

type op uint8

const (
	opFalse op = iota
	opTrue
	opGE // v >= n
	opLE // v <= n
	opAnd
	opOr
	opNot
)

// expr is a condition on v.
type expr struct {
	op   op
	n    int
	args []expr
}

var (
	exprTrue  = expr{op: opTrue}
	exprFalse = expr{op: opFalse}
)

func ge(n int) expr           { return expr{op: opGE, n: n} }
func le(n int) expr           { return expr{op: opLE, n: n} }
func and(xs ...expr) expr     { return expr{op: opAnd, args: xs} }
func or(xs ...expr) expr      { return expr{op: opOr, args: xs} }
func not(x expr) expr         { return expr{op: opNot, args: []expr{x}} }
func (x expr) isTrue() bool   { return x.op == opTrue }
func (x expr) isFalse() bool  { return x.op == opFalse }
func (x expr) constant() bool { return x.op == opTrue || x.op == opFalse }

// in is the condition "v is in r".
func in(r vrange) expr {
	if r.empty() {
		return exprFalse
	}
	return and(ge(r.lo), le(r.hi))
}

// set is the set of versions 0..maxVersion at which x holds.
func (x expr) set() vset {
	all := setOf(vrange{0, maxVersion})
	switch x.op {
	case opFalse:
		return 0
	case opTrue:
		return all
	case opGE:
		if x.n > maxVersion {
			return 0
		}
		return setOf(vrange{max(x.n, 0), maxVersion})
	case opLE:
		if x.n < 0 {
			return 0
		}
		return setOf(vrange{0, min(x.n, maxVersion)})
	case opAnd:
		s := all
		for _, a := range x.args {
			s &= a.set()
		}
		return s
	case opOr:
		var s vset
		for _, a := range x.args {
			s |= a.set()
		}
		return s
	case opNot:
		return all &^ x.args[0].set()
	}
	panic("bad op")
}

// simplify returns the shortest expression that agrees with x at every version in known.
// The result is true or false when x is constant over known; otherwise it is one
// interval test (v >= a, v <= b, v == a, or v >= a && v <= b) or an or of them. An
// interval end is tested only when a known version lies beyond it.
func simplify(x expr, known vset) expr {
	s := x.set() & known
	switch {
	case s == known:
		return exprTrue
	case s == 0:
		return exprFalse
	}
	var terms []expr
	lo, hi := known.min(), known.max()
	for v := lo; v <= hi; {
		if !s.has(v) {
			v++
			continue
		}
		// A run of s, extended over versions that are not known (their value is free).
		a, b := v, v
		for w := v + 1; w <= hi; w++ {
			if s.has(w) {
				b = w
			} else if known.has(w) {
				break
			}
		}
		v = b + 1
		needLo, needHi := a > lo, b < hi
		switch {
		case needLo && needHi:
			terms = append(terms, and(ge(a), le(b)))
		case needLo:
			terms = append(terms, ge(a))
		case needHi:
			terms = append(terms, le(b))
		}
	}
	if len(terms) == 1 {
		return terms[0]
	}
	return or(terms...)
}

// String prints x as Go, with v the version variable.
func (x expr) String() string {
	switch x.op {
	case opFalse:
		return "false"
	case opTrue:
		return "true"
	case opGE:
		return fmt.Sprintf("v >= %d", x.n)
	case opLE:
		return fmt.Sprintf("v <= %d", x.n)
	case opAnd:
		if len(x.args) == 2 && x.args[0].op == opGE && x.args[1].op == opLE && x.args[0].n == x.args[1].n {
			return fmt.Sprintf("v == %d", x.args[0].n)
		}
		return join(x.args, " && ", opOr)
	case opOr:
		return join(x.args, " || ", opAnd)
	case opNot:
		a := x.args[0]
		switch a.op {
		case opGE:
			return fmt.Sprintf("v < %d", a.n)
		case opLE:
			return fmt.Sprintf("v > %d", a.n)
		}
		return "!(" + a.String() + ")"
	}
	panic("bad op")
}

func join(xs []expr, sep string, paren op) string {
	var parts []string
	for _, a := range xs {
		s := a.String()
		if (a.op == paren || a.op == opOr) && !strings.HasPrefix(s, "v == ") {
			s = "(" + s + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, sep)
}

// andGo joins Go boolean operands with &&, parenthesizing those that hold an ||. Empty
// operands are left out; none at all is "true".
func andGo(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p == "" || p == "true" {
			continue
		}
		if strings.Contains(p, "||") && !(strings.HasPrefix(p, "(") && strings.HasSuffix(p, ")")) {
			p = "(" + p + ")"
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return "true"
	}
	return strings.Join(out, " && ")
}

// notGo negates a Go boolean expression, folding a leading ! and the literals.
func notGo(p string) string {
	switch p {
	case "true":
		return "false"
	case "false":
		return "true"
	}
	if strings.HasPrefix(p, "!") && !strings.ContainsAny(p, "&|=<>() ") {
		return p[1:]
	}
	if strings.Count(p, "==") == 1 && !strings.ContainsAny(p, "&|!<>\"") && !strings.HasPrefix(p, "(") {
		return strings.Replace(p, "==", "!=", 1)
	}
	if !strings.ContainsAny(p, "&|=<>! ") || strings.HasPrefix(p, "(") && strings.HasSuffix(p, ")") {
		return "!" + p
	}
	return "!(" + p + ")"
}
