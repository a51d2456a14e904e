// Command rename rewrites references to the codec's generated names in Go's spelling of
// initialisms (BrokerId -> BrokerID, ApiVersionsRequest -> APIVersionsRequest), across
// every Go module of the tree and the Go code of its Markdown files.
//
// Run it from the root of the tree after `make generate` (for example after merging a
// branch written against the older names):
//
//	go run ./internal/gen/rename          # rewrite
//	go run ./internal/gen/rename -l       # only list the files it would change
//
// The names come from the generated code itself: an identifier X is rewritten to
// goname.Ident(X) when that differs from X, is declared in codec/*_gen.go, and X is not.
// Each package is type-checked (errors tolerated) so that X is left alone where it
// denotes something of another package (franz-go's kmsg keeps its own spelling).
// String literals, comments and generated files are never touched; in Markdown only
// fenced go blocks and inline code that starts with "codec." are rewritten.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kwire/kwire/internal/gen/goname"
)

const codecPath = "github.com/kwire/kwire/codec"

func main() {
	root := flag.String("root", ".", "root of the tree")
	list := flag.Bool("l", false, "list the files that would change, change nothing")
	flag.Parse()
	if err := run(*root, *list); err != nil {
		fmt.Fprintln(os.Stderr, "rename:", err)
		os.Exit(1)
	}
}

// renamer holds the generated names and the rewrite rule.
type renamer struct {
	declared map[string]bool // exported names declared in codec/*_gen.go
}

// target is the new spelling of x, or "" when x is not one of the generated names.
func (r *renamer) target(x string) string {
	if x == "" || !ast.IsExported(x) || r.declared[x] {
		return ""
	}
	if n := goname.Ident(x); n != x && r.declared[n] {
		return n
	}
	return ""
}

func run(root string, list bool) error {
	r := &renamer{declared: map[string]bool{}}
	gens, err := filepath.Glob(filepath.Join(root, "codec", "*_gen.go"))
	if err != nil || len(gens) == 0 {
		return fmt.Errorf("no codec/*_gen.go under %s", root)
	}
	fset := token.NewFileSet()
	for _, g := range gens {
		f, err := parser.ParseFile(fset, g, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		collectDeclared(f, r.declared)
	}

	var goFiles, mdFiles []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "build" || name == "target" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(name, ".go"):
			goFiles = append(goFiles, p)
		case strings.HasSuffix(name, ".md"):
			mdFiles = append(mdFiles, p)
		}
		return nil
	})
	if err != nil {
		return err
	}

	pkgs, err := groupPackages(root, goFiles)
	if err != nil {
		return err
	}
	// One file set for the packages and what they import, so that an object's position
	// tells which file declares it.
	fset = token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	var changed []string
	for _, pk := range pkgs {
		c, err := r.rewritePackage(pk, fset, imp, list)
		if err != nil {
			return err
		}
		changed = append(changed, c...)
	}
	for _, p := range mdFiles {
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := r.rewriteMarkdown(src)
		if !bytes.Equal(out, src) {
			changed = append(changed, p)
			if !list {
				if err := os.WriteFile(p, out, 0o644); err != nil {
					return err
				}
			}
		}
	}
	sort.Strings(changed)
	for _, c := range changed {
		fmt.Println(c)
	}
	return nil
}

// collectDeclared adds every exported type, function, method and field of f.
func collectDeclared(f *ast.File, into map[string]bool) {
	add := func(id *ast.Ident) {
		if id != nil && id.IsExported() {
			into[id.Name] = true
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			add(d.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Name)
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, n := range fl.Names {
								add(n)
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n)
					}
				}
			}
		}
	}
}

// pkg is the files of one package (a folder's package or its external test package).
type pkg struct {
	dir, path string
	files     []string
	imports   map[string]bool
}

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// groupPackages groups the hand-written Go files by package and orders the packages so
// that each comes after the packages of the tree it imports: a package is type-checked
// against dependencies already rewritten.
func groupPackages(root string, files []string) ([]*pkg, error) {
	byKey := map[string]*pkg{}
	var keys []string
	fset := token.NewFileSet()
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if head := src[:fset.Position(f.Package).Offset]; generated.Match(head) {
			continue
		}
		dir := filepath.Dir(p)
		ip, err := importPath(dir)
		if err != nil {
			return nil, err
		}
		key := dir + "\x00" + f.Name.Name
		pk := byKey[key]
		if pk == nil {
			pk = &pkg{dir: dir, path: ip, imports: map[string]bool{}}
			if strings.HasSuffix(f.Name.Name, "_test") {
				pk.path = ip + "_test"
				pk.imports[ip] = true
			}
			byKey[key] = pk
			keys = append(keys, key)
		}
		pk.files = append(pk.files, p)
		for _, is := range f.Imports {
			pk.imports[strings.Trim(is.Path.Value, `"`)] = true
		}
	}
	sort.Strings(keys)
	byPath := map[string][]*pkg{}
	for _, k := range keys {
		byPath[byKey[k].path] = append(byPath[byKey[k].path], byKey[k])
	}
	var order []*pkg
	state := map[*pkg]int{}
	var visit func(p *pkg)
	visit = func(p *pkg) {
		if state[p] != 0 {
			return
		}
		state[p] = 1
		deps := make([]string, 0, len(p.imports))
		for d := range p.imports {
			deps = append(deps, d)
		}
		sort.Strings(deps)
		for _, d := range deps {
			for _, q := range byPath[d] {
				visit(q)
			}
		}
		state[p] = 2
		order = append(order, p)
	}
	for _, k := range keys {
		visit(byKey[k])
	}
	return order, nil
}

var modCache = map[string]string{}

// importPath is the import path of dir, from the nearest go.mod above it.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		mod, ok := modCache[d]
		if !ok {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if strings.HasPrefix(l, "module ") {
						mod = strings.TrimSpace(strings.TrimPrefix(l, "module "))
					}
				}
			}
			modCache[d] = mod
		}
		if mod != "" {
			rel, _ := filepath.Rel(d, abs)
			if rel == "." {
				return mod, nil
			}
			return mod + "/" + filepath.ToSlash(rel), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is in no Go module", dir)
		}
	}
}

// rewritePackage type-checks pk, tolerating errors (the names it uses may be the old
// ones), and rewrites its files.
func (r *renamer) rewritePackage(pk *pkg, fset *token.FileSet, imp types.Importer, list bool) ([]string, error) {
	var files []*ast.File
	srcs := map[*ast.File][]byte{}
	for _, p := range pk.files {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		srcs[f] = src
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp, FakeImportC: true, Error: func(error) {}}
	conf.Check(pk.path, fset, files, info)

	var changed []string
	for _, f := range files {
		// Package names imported from outside the tree: their members keep their names.
		foreign := map[string]bool{}
		for _, is := range f.Imports {
			p := strings.Trim(is.Path.Value, `"`)
			name := p[strings.LastIndex(p, "/")+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			if !strings.HasPrefix(p, "github.com/kwire/kwire") {
				foreign[name] = true
			}
		}
		skip := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				x, ok := se.X.(*ast.Ident)
				if ok && (isForeignPkg(info.Uses[x]) || info.Uses[x] == nil && foreign[x.Name]) {
					skip[se.Sel] = true
				}
			}
			return true
		})
		type edit struct {
			off int
			old string
			new string
		}
		var edits []edit
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || skip[id] {
				return true
			}
			to := r.target(id.Name)
			if to == "" {
				return true
			}
			obj := info.Uses[id]
			if obj == nil {
				obj = info.Defs[id]
			}
			if obj != nil && (obj.Pkg() == nil || obj.Pkg().Path() != codecPath || !strings.HasSuffix(fset.Position(obj.Pos()).Filename, "_gen.go")) {
				return true // not a generated name: something of another package, or written by hand
			}
			edits = append(edits, edit{fset.Position(id.Pos()).Offset, id.Name, to})
			return true
		})
		if len(edits) == 0 {
			continue
		}
		name := fset.Position(f.Package).Filename
		changed = append(changed, name)
		if list {
			continue
		}
		src := srcs[f]
		sort.Slice(edits, func(i, j int) bool { return edits[i].off < edits[j].off })
		var out bytes.Buffer
		last := 0
		for _, e := range edits {
			out.Write(src[last:e.off])
			out.WriteString(e.new)
			last = e.off + len(e.old)
		}
		out.Write(src[last:])
		res := out.Bytes()
		// A longer name can shift the alignment gofmt gave the lines around it.
		if b, err := format.Source(res); err == nil {
			res = b
		}
		if err := os.WriteFile(name, res, 0o644); err != nil {
			return nil, err
		}
	}
	return changed, nil
}

// isForeignPkg reports whether obj is a package name imported from outside the tree.
func isForeignPkg(obj types.Object) bool {
	pn, ok := obj.(*types.PkgName)
	return ok && !strings.HasPrefix(pn.Imported().Path(), "github.com/kwire/kwire")
}

var (
	fence      = regexp.MustCompile("(?ms)^```go[^\n]*\n(.*?)^```")
	inlineCode = regexp.MustCompile("`codec\\.[^`\n]+`")
)

// rewriteMarkdown rewrites the Go code of a Markdown file.
func (r *renamer) rewriteMarkdown(src []byte) []byte {
	src = fence.ReplaceAllFunc(src, func(m []byte) []byte {
		nl := bytes.IndexByte(m, '\n') + 1
		return append(append([]byte{}, m[:nl]...), r.rewriteTokens(m[nl:])...)
	})
	return inlineCode.ReplaceAllFunc(src, func(m []byte) []byte {
		return append(append([]byte{'`'}, r.rewriteTokens(m[1:len(m)-1])...), '`')
	})
}

// rewriteTokens rewrites the identifiers of a Go fragment, leaving strings and comments
// alone, and the members of packages from outside the tree (kmsg.X).
func (r *renamer) rewriteTokens(code []byte) []byte {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(code))
	var s scanner.Scanner
	s.Init(file, code, func(token.Position, string) {}, scanner.ScanComments)
	var out bytes.Buffer
	last := 0
	var prev1, prev2 string // the two tokens before, to spot kmsg.X
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.IDENT {
			qualified := prev1 == "." && prev2 != "" && prev2 != "codec" && !strings.HasPrefix(prev2, "kwire")
			foreignPkg := qualified && (prev2 == "kmsg" || prev2 == "kgo" || prev2 == "kadm")
			if to := r.target(lit); to != "" && !foreignPkg {
				off := file.Offset(pos)
				out.Write(code[last:off])
				out.WriteString(to)
				last = off + len(lit)
			}
		}
		prev2, prev1 = prev1, lit
		if tok != token.IDENT {
			prev1 = tok.String()
		}
	}
	out.Write(code[last:])
	return out.Bytes()
}
