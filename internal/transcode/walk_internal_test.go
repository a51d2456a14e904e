package transcode

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/kwire/kwire/internal/proto"
)

// allPaths lists the dotted path of every field under struct si.
func allPaths(si uint16, prefix string, out []string, depth int) []string {
	if depth > 16 {
		return out
	}
	s := &schemaStructs[si]
	seen := map[string]bool{}
	for i := range schemaFields[s.first : s.first+s.n] {
		f := &schemaFields[int(s.first)+i]
		if seen[f.name] {
			continue
		}
		seen[f.name] = true
		out = append(out, prefix+f.name)
		if f.typ == tStruct {
			out = allPaths(f.sub, prefix+f.name+".", out, depth+1)
		}
	}
	return out
}

// chunkSource reveals src up to avail.
type chunkSource struct {
	src   []byte
	avail int
}

func (c *chunkSource) At(off, n int) []byte {
	if off >= c.avail {
		return nil
	}
	return c.src[off:c.avail]
}

// walkedScalar is what a walk reports of one scalar: its path and where its value ends.
type walkedScalar struct {
	sel int
	end int
}

// walkAll walks src with plan revealing it in chunks from rnd (whole when rnd is nil),
// and returns the scalars reported, the root-tags offset (-1 when not flexible) and
// the error.
func walkAll(p *WalkPlan, v int16, src []byte, rnd *rand.Rand, stopAtTags bool) ([]walkedScalar, int, error) {
	var w Walker
	if err := w.Reset(p, v, len(src), stopAtTags); err != nil {
		return nil, -1, err
	}
	cs := &chunkSource{src: src}
	if rnd == nil {
		cs.avail = len(src)
	}
	var got []walkedScalar
	for {
		switch w.Next(cs) {
		case WalkMore:
			if cs.avail >= len(src) {
				return got, -1, errStalled
			}
			cs.avail = min(len(src), cs.avail+1+rnd.Intn(8))
		case WalkField:
			ev := w.Event()
			if !ev.Array && !ev.Struct {
				got = append(got, walkedScalar{ev.Sel, ev.Off + max(ev.Len, 0)})
			}
		case WalkRootTags:
			return got, w.Pos(), nil
		case WalkDone:
			return got, -1, nil
		case WalkError:
			return got, -1, w.Err()
		}
	}
}

type stalled struct{}

func (stalled) Error() string { return "the walk asked for bytes past what the body holds" }

var errStalled error = stalled{}

// docScalars lists, in order, the scalars Doc found outside tagged fields, as the
// walker must report them with every path selected.
func docScalars(d *Doc, p *WalkPlan) (out []walkedScalar, rootTags int) {
	inTagged := make([]bool, len(d.nodes))
	rootTags = 0
	for i := range d.nodes {
		n := &d.nodes[i]
		if n.parent >= 0 && (inTagged[n.parent] || n.hdr >= 0) {
			inTagged[i] = true
			continue
		}
		if n.parent == 0 && !inTagged[i] {
			rootTags = int(n.end)
		}
		if n.f == nil || n.kind != dScalar || n.kind == dUnknownTag {
			continue
		}
		if n.f.isArray() && !n.elem {
			continue
		}
		id, _ := p.selected(n.f)
		out = append(out, walkedScalar{id, int(n.end)})
	}
	return out, rootTags
}

// Every request and response, every version, random contents: with every field
// selected, the walker reports the scalars Doc indexes, where Doc found them, in
// any chunking, and stops at the root's tag section where Doc's last field ends.
func TestWalkerMatchesDoc(t *testing.T) {
	var d Doc
	walked := 0
	for _, info := range schemaInfos() {
		if info.Kind != proto.KindRequest && info.Kind != proto.KindResponse {
			continue
		}
		m := lookup(info.Name)
		p, err := newWalkPlan(m, allPaths(m.root, "", nil, 0))
		if err != nil {
			t.Fatal(err)
		}
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			rnd := rand.New(rand.NewSource(int64(v)*131 + int64(len(info.Name))))
			b, err := randomWire(info.Name, v, rnd)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Parse(b, info.Name, v); err != nil {
				t.Fatal(err)
			}
			want, tags := docScalars(&d, p)
			for _, chunked := range []*rand.Rand{nil, rnd} {
				got, _, err := walkAll(p, v, b, chunked, false)
				if err != nil {
					t.Fatalf("%s v%d (chunked %v): %v", info.Name, v, chunked != nil, err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s v%d: walker reported %d scalars, Doc indexed %d", info.Name, v, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s v%d: scalar %d: walker %+v, Doc %+v", info.Name, v, i, got[i], want[i])
					}
				}
			}
			if m.flags&msgHasFlex != 0 && m.flex.has(v) {
				_, at, err := walkAll(p, v, b, rnd, true)
				if err != nil || at != tags {
					t.Fatalf("%s v%d: root tags at %d (%v), Doc's last field ends at %d", info.Name, v, at, err, tags)
				}
			}
			walked++
		}
	}
	if walked < 500 {
		t.Fatalf("only %d message versions walked", walked)
	}
}

// Damaged bodies: whatever Doc parses, the walker walks to its end; a walk that fails
// is of a body Doc refuses too. No input makes the walker loop or read past the body.
func TestWalkerOnDamagedBodies(t *testing.T) {
	var d Doc
	rnd := rand.New(rand.NewSource(7))
	cases := 0
	for _, info := range schemaInfos() {
		if info.Kind != proto.KindRequest && info.Kind != proto.KindResponse {
			continue
		}
		m := lookup(info.Name)
		p, err := newWalkPlan(m, allPaths(m.root, "", nil, 0))
		if err != nil {
			t.Fatal(err)
		}
		v := info.MaxVersion
		b, err := randomWire(info.Name, v, rnd)
		if err != nil || len(b) == 0 {
			continue
		}
		for k := 0; k < 40; k++ {
			bad := append([]byte(nil), b...)
			switch k % 3 {
			case 0:
				bad[rnd.Intn(len(bad))] ^= byte(1 + rnd.Intn(255))
			case 1:
				bad = bad[:rnd.Intn(len(bad))]
			default:
				bad = append(bad, byte(rnd.Intn(256)))
			}
			docErr := d.Parse(bad, info.Name, v)
			_, _, walkErr := walkAll(p, v, bad, rnd, false)
			if walkErr == errStalled {
				t.Fatalf("%s v%d case %d: %v", info.Name, v, k, walkErr)
			}
			if docErr == nil && walkErr != nil {
				t.Fatalf("%s v%d case %d: Doc parses it, the walker fails: %v", info.Name, v, k, walkErr)
			}
			cases++
		}
	}
	t.Logf("%d damaged bodies", cases)
}

// A plan that selects no fixed-size scalar steps over them without reading them:
// what it reports is what the full plan reports of the fields it selects, its walk
// ends (and finds the root tags) where the full plan's does, and on damaged bodies it
// fails where the full plan fails.
func TestWalkerStepsOverUnselected(t *testing.T) {
	rnd := rand.New(rand.NewSource(11))
	walked := 0
	for _, info := range schemaInfos() {
		if info.Kind != proto.KindRequest && info.Kind != proto.KindResponse {
			continue
		}
		m := lookup(info.Name)
		paths := allPaths(m.root, "", nil, 0)
		full, err := newWalkPlan(m, paths)
		if err != nil {
			t.Fatal(err)
		}
		// The variable-size paths keep their index in full; the others select nothing.
		var varPaths []string
		varIndex := map[int]int{} // index in varPaths -> index in paths
		for i, path := range paths {
			if p1, _ := newWalkPlan(m, []string{path}); p1 != nil && !onlyFixed(p1) {
				varIndex[len(varPaths)] = i
				varPaths = append(varPaths, path)
			}
		}
		part, err := newWalkPlan(m, varPaths)
		if err != nil {
			t.Fatal(err)
		}
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			b, err := randomWire(info.Name, v, rnd)
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 4; k++ {
				body := b
				if k > 0 && len(b) > 0 {
					body = append([]byte(nil), b...)
					if k == 1 {
						body[rnd.Intn(len(body))] ^= byte(1 + rnd.Intn(255))
					} else if k == 2 {
						body = body[:rnd.Intn(len(body))]
					}
				}
				want, _, wantErr := walkAll(full, v, body, nil, false)
				got, _, gotErr := walkAll(part, v, body, rnd, false)
				if (wantErr == nil) != (gotErr == nil) {
					t.Fatalf("%s v%d case %d: full plan %v, partial plan %v", info.Name, v, k, wantErr, gotErr)
				}
				var wantVar []walkedScalar
				selected := map[int]int{}
				for j, i := range varIndex {
					selected[i] = j
				}
				for _, s := range want {
					if j, ok := selected[s.sel]; ok {
						wantVar = append(wantVar, walkedScalar{j, s.end})
					}
				}
				if wantErr == nil && !slices.Equal(got, wantVar) {
					t.Fatalf("%s v%d case %d: partial plan reported %v, the full plan's %v", info.Name, v, k, got, wantVar)
				}
				if k == 0 && m.flags&msgHasFlex != 0 && m.flex.has(v) {
					_, at1, err1 := walkAll(full, v, body, nil, true)
					_, at2, err2 := walkAll(part, v, body, rnd, true)
					if at1 != at2 || err1 != nil || err2 != nil {
						t.Fatalf("%s v%d: root tags at %d (%v) with the full plan, %d (%v) with the partial one", info.Name, v, at1, err1, at2, err2)
					}
				}
				walked++
			}
		}
	}
	if walked < 2000 {
		t.Fatalf("only %d walks", walked)
	}
}

// onlyFixed reports whether a plan selects only fixed-size scalars.
func onlyFixed(p *WalkPlan) bool {
	for i, s := range p.sel {
		if s != 0 {
			f := &schemaFields[i]
			if fixedSize[f.typ&15] == 0 || f.flags&fArray != 0 {
				return false
			}
		}
	}
	return true
}
