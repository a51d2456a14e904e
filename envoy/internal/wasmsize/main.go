// Command wasmsize reports where the bytes of a Go-built WebAssembly module go: the
// size of each section, and the function bodies of the code section summed per Go
// package (from the name section, so build without -ldflags='-s -w'):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o /tmp/m.wasm ./envoy
//	go run ./envoy/internal/wasmsize -top 40 /tmp/m.wasm
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

var sectionNames = map[byte]string{0: "custom", 1: "type", 2: "import", 3: "function", 4: "table", 5: "memory",
	6: "global", 7: "export", 8: "start", 9: "element", 10: "code", 11: "data", 12: "datacount"}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) u32() uint32 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 || v > 1<<32-1 {
		r.err = fmt.Errorf("bad LEB128 at %d", r.off)
		return 0
	}
	r.off += n
	return uint32(v)
}

func (r *reader) bytes(n uint32) []byte {
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)-r.off) {
		r.err = fmt.Errorf("length %d at %d runs past the end", n, r.off)
		return nil
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

func (r *reader) name() string { return string(r.bytes(r.u32())) }

// Module is what wasmsize reads from a module.
type Module struct {
	Sections map[string]int // section name (custom sections by their name) -> bytes
	Bodies   []int          // code section body sizes, by defined function index
	Imported int            // imported functions (they precede defined ones in the index space)
	Names    map[uint32]string
}

// Read parses the sections wasmsize needs.
func Read(b []byte) (*Module, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm module")
	}
	m := &Module{Sections: map[string]int{}, Names: map[uint32]string{}}
	r := &reader{b: b, off: 8}
	for r.off < len(b) && r.err == nil {
		id := r.b[r.off]
		r.off++
		body := r.bytes(r.u32())
		if r.err != nil {
			break
		}
		s := &reader{b: body}
		name := sectionNames[id]
		switch id {
		case 0:
			name = "custom:" + s.name()
			if name == "custom:name" {
				readNames(s, m)
			}
		case 2:
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				s.name()
				s.name()
				kind := s.bytes(1)
				if s.err != nil {
					break
				}
				switch kind[0] {
				case 0:
					s.u32()
					m.Imported++
				case 1:
					s.bytes(1)
					limits(s)
				case 2:
					limits(s)
				case 3:
					s.bytes(2)
				}
			}
		case 10:
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				size := s.u32()
				s.bytes(size)
				m.Bodies = append(m.Bodies, int(size))
			}
		}
		if s.err != nil {
			return nil, fmt.Errorf("section %s: %w", name, s.err)
		}
		m.Sections[name] += len(body)
	}
	return m, r.err
}

func limits(s *reader) {
	flags := s.bytes(1)
	s.u32()
	if len(flags) == 1 && flags[0]&1 != 0 {
		s.u32()
	}
}

func readNames(s *reader, m *Module) {
	for s.off < len(s.b) && s.err == nil {
		sub := s.bytes(1)
		body := s.bytes(s.u32())
		if s.err != nil || sub[0] != 1 {
			continue
		}
		f := &reader{b: body}
		for n := f.u32(); n > 0 && f.err == nil; n-- {
			idx := f.u32()
			m.Names[idx] = f.name()
		}
	}
}

// pkgOf is the Go package of a symbol as the wasm name section spells it ('/' and
// the receiver's "(*" and ")" become '_'): "github.com_x_y.__T_.M" -> "github.com_x_y".
func pkgOf(sym string) string {
	start := 0
	if i := strings.IndexByte(sym, '_'); i > 0 {
		switch seg := sym[:i]; seg[strings.LastIndexByte(seg, '.')+1:] {
		case "com", "org", "net", "io", "in", "dev":
			start = i // a module path starting with a domain name
		}
	}
	dot := strings.IndexByte(sym[start:], '.')
	if dot < 0 {
		return sym
	}
	return sym[:start+dot]
}

func main() {
	top := flag.Int("top", 30, "packages (and functions) to list")
	funcs := flag.Bool("funcs", false, "also list the largest functions")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: wasmsize [-top N] [-funcs] module.wasm")
		os.Exit(2)
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err == nil {
		var m *Module
		if m, err = Read(b); err == nil {
			report(m, len(b), *top, *funcs)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "wasmsize:", err)
	os.Exit(1)
}

type kv struct {
	k string
	v int
}

func sorted(m map[string]int) []kv {
	var s []kv
	for k, v := range m {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v || s[i].v == s[j].v && s[i].k < s[j].k })
	return s
}

func report(m *Module, total, top int, funcs bool) {
	fmt.Printf("module: %d bytes\n\nsections:\n", total)
	for _, e := range sorted(m.Sections) {
		fmt.Printf("  %10d  %s\n", e.v, e.k)
	}
	pkgs, fns := map[string]int{}, map[string]int{}
	code := 0
	for i, size := range m.Bodies {
		name, ok := m.Names[uint32(m.Imported+i)]
		if !ok {
			name = "?"
		}
		pkgs[pkgOf(name)] += size
		fns[name] += size
		code += size
	}
	fmt.Printf("\nfunction bodies by package (%d functions, %d bytes):\n", len(m.Bodies), code)
	for i, e := range sorted(pkgs) {
		if i == top {
			break
		}
		fmt.Printf("  %10d  %5.1f%%  %s\n", e.v, 100*float64(e.v)/float64(code), e.k)
	}
	if funcs {
		fmt.Printf("\nlargest functions:\n")
		for i, e := range sorted(fns) {
			if i == top {
				break
			}
			fmt.Printf("  %10d  %s\n", e.v, e.k)
		}
	}
}
