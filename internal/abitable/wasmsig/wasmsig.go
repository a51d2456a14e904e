// Package wasmsig reads the exported functions of a WebAssembly module: their names and
// signatures, from its type, import, function and export sections. The ABI table's tests
// use it to compare build/kwire.wasm with the table.
package wasmsig

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Func is one exported function: its name and its signature, as "(i32,i32)->(i32)".
type Func struct {
	Name string
	Sig  string
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errors.New("wasmsig: truncated module")
	}
}

func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail()
	return 0
}

func (r *reader) bytes(n uint32) []byte {
	if r.err != nil || uint64(n) > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) name() string { return string(r.bytes(r.u32())) }

var valTypes = map[byte]string{0x7f: "i32", 0x7e: "i64", 0x7d: "f32", 0x7c: "f64", 0x7b: "v128", 0x70: "funcref", 0x6f: "externref"}

func (r *reader) types(n uint32) string {
	ts := make([]string, 0, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		c := r.byte()
		t, ok := valTypes[c]
		if !ok {
			t = fmt.Sprintf("0x%02x", c)
		}
		ts = append(ts, t)
	}
	return "(" + strings.Join(ts, ",") + ")"
}

// Exports returns the module's exported functions, sorted by name.
func Exports(module []byte) ([]Func, error) {
	if len(module) < 8 || string(module[:4]) != "\x00asm" {
		return nil, errors.New("wasmsig: not a WebAssembly module")
	}
	var sigs []string  // by type index
	var funcs []uint32 // type index by function index (imports first)
	type export struct {
		name string
		idx  uint32
	}
	var exps []export
	r := &reader{b: module[8:]}
	for len(r.b) > 0 && r.err == nil {
		id := r.byte()
		sec := &reader{b: r.bytes(r.u32())}
		switch id {
		case 1: // type
			for n := sec.u32(); n > 0 && sec.err == nil; n-- {
				if sec.byte() != 0x60 {
					return nil, errors.New("wasmsig: unknown type form")
				}
				params := sec.types(sec.u32())
				results := sec.types(sec.u32())
				sigs = append(sigs, params+"->"+results)
			}
		case 2: // import
			for n := sec.u32(); n > 0 && sec.err == nil; n-- {
				sec.name()
				sec.name()
				switch sec.byte() {
				case 0: // func
					funcs = append(funcs, sec.u32())
				case 1: // table: reftype, limits
					sec.byte()
					if sec.byte()&1 != 0 {
						sec.u32()
					}
					sec.u32()
				case 2: // memory: limits
					if sec.byte()&1 != 0 {
						sec.u32()
					}
					sec.u32()
				case 3: // global
					sec.byte()
					sec.byte()
				}
			}
		case 3: // function
			for n := sec.u32(); n > 0 && sec.err == nil; n-- {
				funcs = append(funcs, sec.u32())
			}
		case 7: // export
			for n := sec.u32(); n > 0 && sec.err == nil; n-- {
				name := sec.name()
				kind := sec.byte()
				idx := sec.u32()
				if kind == 0 {
					exps = append(exps, export{name, idx})
				}
			}
		}
		if sec.err != nil {
			return nil, sec.err
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	out := make([]Func, 0, len(exps))
	for _, e := range exps {
		if int(e.idx) >= len(funcs) || int(funcs[e.idx]) >= len(sigs) {
			return nil, fmt.Errorf("wasmsig: export %s names a missing function", e.name)
		}
		out = append(out, Func{e.name, sigs[funcs[e.idx]]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
