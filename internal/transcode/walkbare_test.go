package transcode

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/kwire/kwire/internal/proto"
)

// windowSource serves chunkSource's bytes as a proxy's filter does: through one
// reused buffer of a few bytes more than asked for, which each call overwrites.
type windowSource struct {
	chunkSource
	buf []byte
}

func (s *windowSource) At(off, n int) []byte {
	b := s.chunkSource.At(off, n)
	k := min(len(b), max(n, 7))
	s.buf = append(s.buf[:0], b[:k]...)
	return s.buf
}

// walkTrace walks src with a plan that selects nothing, revealing it in chunks drawn
// from seed (whole when seed is 0), and records every stop: status, position, error.
func walkTrace(p *WalkPlan, v int16, src []byte, seed int64, stopAtTags, bare bool) []string {
	defer func(was bool) { bareWalks = was }(bareWalks)
	bareWalks = bare
	var w Walker
	if err := w.Reset(p, v, len(src), stopAtTags); err != nil {
		return []string{err.Error()}
	}
	cs := &chunkSource{src: src, avail: len(src)}
	var rnd *rand.Rand
	if seed != 0 {
		rnd = rand.New(rand.NewSource(seed))
		cs.avail = rnd.Intn(len(src) + 1)
	}
	var ws WalkSource = cs
	if seed&1 != 0 {
		ws = &windowSource{chunkSource: *cs}
	}
	var out []string
	for i := 0; i < 1<<20; i++ {
		if s, ok := ws.(*windowSource); ok {
			s.avail = cs.avail
		}
		st := w.Next(ws)
		line := fmt.Sprintf("%d at %d", st, w.Pos())
		if st == WalkError {
			line += ": " + w.Err().Error()
		}
		out = append(out, line)
		if st != WalkMore {
			return out
		}
		if cs.avail >= len(src) {
			return append(out, "stalled")
		}
		cs.avail = min(len(src), cs.avail+1+rnd.Intn(64))
	}
	return append(out, "did not end")
}

// sameWalk reports how the bare walk of src differs from the general loop's, if it does.
func sameWalk(p *WalkPlan, v int16, src []byte, seed int64, stopAtTags bool) error {
	general := walkTrace(p, v, src, seed, stopAtTags, false)
	bare := walkTrace(p, v, src, seed, stopAtTags, true)
	if len(general) != len(bare) {
		return fmt.Errorf("general loop %q, bare walk %q", general, bare)
	}
	for i := range general {
		if general[i] != bare[i] {
			return fmt.Errorf("stop %d: general loop %q, bare walk %q", i, general[i], bare[i])
		}
	}
	return nil
}

// The bare walk (a plan that selects nothing) stops, fails and moves exactly as the
// general loop does: every request and response at every version, whole and in
// random chunks, to the end and to the root tags, intact and damaged.
func TestBareWalkMatchesGeneral(t *testing.T) {
	rnd := rand.New(rand.NewSource(5))
	walks := 0
	for _, info := range schemaInfos() {
		if info.Kind != proto.KindRequest && info.Kind != proto.KindResponse {
			continue
		}
		p, err := newWalkPlan(lookup(info.Name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !p.none {
			t.Fatalf("%s: a plan without paths is not marked none", info.Name)
		}
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			b, err := randomWire(info.Name, v, rnd)
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 8; k++ {
				src := b
				if k > 0 && len(b) > 0 {
					src = append([]byte(nil), b...)
					switch k % 4 {
					case 0:
						src[rnd.Intn(len(src))] ^= byte(1 + rnd.Intn(255))
					case 1:
						src = src[:rnd.Intn(len(src))]
					case 2:
						src = append(src, byte(rnd.Intn(256)))
					default:
						src[rnd.Intn(len(src))] = 0xff
					}
				}
				for _, stop := range []bool{false, true} {
					if err := sameWalk(p, v, src, int64(k), stop); err != nil {
						t.Fatalf("%s v%d case %d (stop at root tags %v): %v", info.Name, v, k, stop, err)
					}
					walks++
				}
			}
		}
	}
	t.Logf("%d walks compared", walks)
}

// FuzzBareWalk holds the bare walk to the general loop on any bytes, for any message
// and version, in any chunking.
func FuzzBareWalk(f *testing.F) {
	var infos []Info
	for _, info := range schemaInfos() {
		if info.Kind == proto.KindRequest || info.Kind == proto.KindResponse {
			infos = append(infos, info)
		}
	}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 16; i++ {
		info := infos[rnd.Intn(len(infos))]
		v := info.MinVersion + int16(rnd.Intn(int(info.MaxVersion-info.MinVersion)+1))
		if b, err := randomWire(info.Name, v, rnd); err == nil {
			f.Add(uint16(rnd.Intn(len(infos))), uint8(v), int64(i), b)
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, ver uint8, seed int64, src []byte) {
		info := infos[int(which)%len(infos)]
		v := info.MinVersion + int16(int(ver)%(int(info.MaxVersion-info.MinVersion)+1))
		p, err := newWalkPlan(lookup(info.Name), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, stop := range []bool{false, true} {
			if err := sameWalk(p, v, src, seed, stop); err != nil {
				t.Fatalf("%s v%d (stop at root tags %v): %v", info.Name, v, stop, err)
			}
		}
	})
}
