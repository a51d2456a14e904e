package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	gobuild "go/build"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generator's golden files")

// parseCond parses a Go condition.
func parseCond(s string) (ast.Expr, error) { return parser.ParseExpr(s) }

// versionOnly reports whether x is a condition on v alone (comparisons of v with integer
// literals joined by &&, || and !).
func versionOnly(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return versionOnly(x.X)
	case *ast.UnaryExpr:
		return x.Op == token.NOT && versionOnly(x.X)
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND, token.LOR:
			return versionOnly(x.X) && versionOnly(x.Y)
		case token.GEQ, token.LEQ, token.GTR, token.LSS, token.EQL, token.NEQ:
			id, ok := x.X.(*ast.Ident)
			lit, ok2 := x.Y.(*ast.BasicLit)
			return ok && ok2 && id.Name == "v" && lit.Kind == token.INT
		}
	case *ast.Ident:
		return x.Name == "true" || x.Name == "false"
	}
	return false
}

// evalCond evaluates a version condition at v.
func evalCond(x ast.Expr, v int) bool {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return evalCond(x.X, v)
	case *ast.UnaryExpr:
		return !evalCond(x.X, v)
	case *ast.Ident:
		return x.Name == "true"
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND:
			return evalCond(x.X, v) && evalCond(x.Y, v)
		case token.LOR:
			return evalCond(x.X, v) || evalCond(x.Y, v)
		}
		n, _ := strconv.Atoi(x.Y.(*ast.BasicLit).Value)
		switch x.Op {
		case token.GEQ:
			return v >= n
		case token.LEQ:
			return v <= n
		case token.GTR:
			return v > n
		case token.LSS:
			return v < n
		case token.EQL:
			return v == n
		case token.NEQ:
			return v != n
		}
	}
	panic(fmt.Sprintf("not a version condition: %T", x))
}

// synthetic builds a message descriptor with a field of every kind, each present always,
// from a version on, up to a version, nullable from a version, tagged (when the message
// has flexible versions) and, for strings, with its own flexible versions.
func synthetic(name, flexible string) *rawMessage {
	kinds := []string{"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
		"string", "bytes", "records", "uuid", "[]int32", "[]string", "[]uuid", "Sub", "[]Sub"}
	nullable := map[string]bool{"string": true, "bytes": true, "records": true, "[]int32": true, "[]string": true, "[]uuid": true, "Sub": true, "[]Sub": true}
	defaults := map[string]string{"int32": `"-1"`, "bool": `"true"`, "string": `"x"`, "float64": `"1.5"`}
	var fields []*rawField
	tag := 0
	for i, k := range kinds {
		base := strings.NewReplacer("[]", "Arr", "Sub", "Struct").Replace(k)
		base = strings.ToUpper(base[:1]) + base[1:]
		add := func(suffix, versions string, f func(*rawField)) {
			rf := &rawField{Name: base + suffix, Type: k, Versions: versions}
			if f != nil {
				f(rf)
			}
			fields = append(fields, rf)
		}
		add("Always", "0+", nil)
		add("Since2", "2+", func(f *rawField) {
			if d, ok := defaults[k]; ok {
				f.Default = json.RawMessage(d)
			}
		})
		add("Until3", "0-3", func(f *rawField) { f.Ignorable = i%2 == 0 })
		if nullable[k] {
			add("NullSince1", "0+", func(f *rawField) { f.NullableVersions = "1+" })
			add("NullAlways", "0+", func(f *rawField) { f.NullableVersions = "0+"; f.Default = json.RawMessage(`"null"`) })
		}
		if flexible != "none" {
			add("Tagged", "5+", func(f *rawField) {
				f.TaggedVersions = "5+"
				f.Tag = json.RawMessage(strconv.Itoa(tag))
				f.Ignorable = i%3 == 0
				if nullable[k] {
					f.NullableVersions = "5+"
				}
			})
			tag++
		}
	}
	if flexible != "none" {
		none := "none"
		fields = append(fields, &rawField{Name: "ClientId", Type: "string", Versions: "1+", NullableVersions: "1+", FlexibleVersions: &none})
	}
	return &rawMessage{Name: name, Type: "data", ValidVersions: "0-6", FlexibleVersions: flexible, Fields: fields,
		CommonStructs: []*rawStruct{{Name: "Sub", Versions: "0+", Fields: []*rawField{
			{Name: "A", Type: "int32", Versions: "0+"},
			{Name: "TopicIds", Type: "[]uuid", Versions: "3+"},
			{Name: "B", Type: "string", Versions: "1+", NullableVersions: "4+"},
		}}}}
}

var synthetics = []struct{ name, flexible string }{
	{"SynthNeverFlexible", "none"},
	{"SynthAlwaysFlexible", "0+"},
	{"SynthFlexibleFrom3", "3+"},
}

func generateSynthetic(t *testing.T) map[string][]byte {
	t.Helper()
	var msgs []*Message
	for _, s := range synthetics {
		m, err := buildMessage("test", synthetic(s.name, s.flexible))
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if err := finish(msgs); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, m := range msgs {
		src, err := format.Source([]byte(genMessage(m)))
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		out[snake(m.Name)+"_gen.go"] = src
	}
	return out
}

// TestSyntheticGolden compares the code written for the synthetic descriptors with the
// committed goldens (go test -run Golden -update rewrites them).
func TestSyntheticGolden(t *testing.T) {
	for name, src := range generateSynthetic(t) {
		path := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(path, src, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(src, want) {
			t.Errorf("%s differs from %s (go test ./internal/gen -run Golden -update rewrites it)", name, path)
		}
	}
}

// TestSyntheticProperties checks what a person would write, on the synthetic messages:
// no constant operands or conditions, no version test that the enclosing tests already
// decide, no blank assignments but bounds-check hints, Go initialisms in names.
func TestSyntheticProperties(t *testing.T) {
	for name, src := range generateSynthetic(t) {
		checkProperties(t, name, src, setOf(vrange{0, 6}))
	}
}

// TestCodecProperties checks the same of the committed codec: a version test that the
// enclosing ones decide, whatever the message's valid versions.
func TestCodecProperties(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "codec", "*_gen.go"))
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkProperties(t, p, src, setOf(vrange{0, maxVersion}))
	}
}

func checkProperties(t *testing.T, name string, src []byte, valid vset) {
	t.Helper()
	{
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		fail := func(n ast.Node, format string, args ...any) {
			t.Errorf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...))
		}
		isConst := func(x ast.Expr) bool {
			for {
				p, ok := x.(*ast.ParenExpr)
				if !ok {
					break
				}
				x = p.X
			}
			id, ok := x.(*ast.Ident)
			return ok && (id.Name == "true" || id.Name == "false")
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ParenExpr:
				if isConst(n.X) {
					fail(n, "parenthesized constant")
				}
			case *ast.BinaryExpr:
				if (n.Op == token.LAND || n.Op == token.LOR) && (isConst(n.X) || isConst(n.Y)) {
					fail(n, "constant operand of %s", n.Op)
				}
			case *ast.UnaryExpr:
				if n.Op == token.NOT && versionOnly(n.X) {
					fail(n, "negated version test")
				}
			case *ast.AssignStmt:
				if id, ok := n.Lhs[0].(*ast.Ident); ok && id.Name == "_" {
					if _, hint := n.Rhs[0].(*ast.IndexExpr); !hint {
						fail(n, "blank assignment")
					}
				}
			case *ast.GenDecl:
				for _, s := range n.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok && vs.Names[0].Name == "_" {
						fail(n, "blank declaration")
					}
				}
			case *ast.Ident:
				if n.IsExported() && (strings.HasSuffix(n.Name, "Id") || strings.HasSuffix(n.Name, "Ids") || strings.Contains(n.Name, "Api")) {
					fail(n, "%s breaks Go's initialisms", n.Name)
				}
			case *ast.FuncDecl:
				if n.Body != nil {
					checkIfs(t, fset, n.Body.List, valid)
				}
			}
			return true
		})
	}
}

// checkIfs walks statements knowing that v is in known, and fails on a version test
// whose outcome is already decided there.
func checkIfs(t *testing.T, fset *token.FileSet, stmts []ast.Stmt, known vset) {
	for _, s := range stmts {
		walkStmt(t, fset, s, known)
	}
}

func walkStmt(t *testing.T, fset *token.FileSet, s ast.Stmt, known vset) {
	switch s := s.(type) {
	case *ast.IfStmt:
		thenK, elseK := known, known
		if versionOnly(s.Cond) {
			var sel vset
			for v := 0; v <= maxVersion; v++ {
				if known.has(v) && evalCond(s.Cond, v) {
					sel |= 1 << uint(v)
				}
			}
			if sel == 0 || sel == known {
				t.Errorf("%s: version test decided by the enclosing ones", fset.Position(s.Pos()))
			}
			thenK, elseK = sel, known&^sel
		}
		checkIfs(t, fset, s.Body.List, thenK)
		if s.Else != nil {
			walkStmt(t, fset, s.Else, elseK)
		}
	case *ast.BlockStmt:
		checkIfs(t, fset, s.List, known)
	case *ast.ForStmt:
		checkIfs(t, fset, s.Body.List, known)
	case *ast.RangeStmt:
		checkIfs(t, fset, s.Body.List, known)
	case *ast.SwitchStmt:
		checkIfs(t, fset, s.Body.List, known)
	case *ast.CaseClause:
		checkIfs(t, fset, s.Body, known)
	}
}

// TestSyntheticCompiles type-checks the synthetic messages inside the codec package.
func TestSyntheticCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the codec package")
	}
	dir := filepath.Join("..", "..", "codec")
	fset := token.NewFileSet()
	var files []*ast.File
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := gobuild.Default.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for name, src := range generateSynthetic(t) {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check("github.com/kwire/kwire/codec", fset, files, nil); err != nil {
		t.Fatal(err)
	}
}
