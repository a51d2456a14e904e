package kwwazero

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// TestNoMemoryGrowth runs 10^6 kw_decode_message / kw_free cycles (KWIRE_MEM_CYCLES
// overrides the count) after a warm-up and checks that the module's linear memory does
// not grow (by more than one 64 KiB page): every output is released, nothing
// accumulates. Memory is sampled every 10^5 cycles and printed.
func TestNoMemoryGrowth(t *testing.T) {
	cycles := 1_000_000
	if s := os.Getenv("KWIRE_MEM_CYCLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			t.Fatalf("KWIRE_MEM_CYCLES=%q", s)
		}
		cycles = n
	}
	in := instance(t)
	s := pickSample(t, in)
	sc := in.Scratch()
	nameAt, err := in.Put([]byte(s.name), s.bytes)
	if err != nil {
		t.Fatal(err)
	}
	nl := uint32(len(s.name))
	cycle := func() {
		st, err := in.Call("kw_decode_message", nameAt, nl, uint32(s.version), nameAt+nl, uint32(len(s.bytes)), sc, sc+4)
		if err != nil || st != 0 {
			t.Fatalf("kw_decode_message: %d %v %s", st, err, in.LastError())
		}
		if st := in.Free(in.u32(sc)); st != 0 {
			t.Fatalf("kw_free: %d", st)
		}
	}
	// The Go heap inside the module settles on its size within the first ~10^5 cycles
	// (its goal depends on where collections happen to fall); measure after that.
	warm := cycles / 5
	for i := 0; i < warm; i++ {
		cycle()
	}
	before := in.Memory().Size()
	var samples []uint32
	for i := 0; i < cycles; i++ {
		cycle()
		if (i+1)%(cycles/10) == 0 {
			samples = append(samples, in.Memory().Size())
		}
	}
	after := in.Memory().Size()
	t.Logf("memory every %d cycles: %v", cycles/10, samples)
	t.Logf("%d decode/free cycles of %s v%d (%d bytes -> %d bytes of JSON): memory %d bytes before, %d after (after %d warm-up cycles)",
		cycles, s.name, s.version, len(s.bytes), len(s.json), before, after, warm)
	// A leak of even a quarter of a byte per cycle would add several 64 KiB pages; the
	// bound tolerates one page, the last step of the heap settling after the warm-up.
	if after > before+65536 {
		t.Errorf("linear memory grew from %d to %d bytes over %d cycles", before, after, cycles)
	} else if after != before {
		t.Logf("note: one page of growth (%d -> %d bytes)", before, after)
	}
	// The instance still decodes correctly.
	js, err := in.DecodeMessage(s.name, s.version, s.bytes)
	if err != nil || !bytes.Equal(js, s.json) {
		t.Fatalf("after the cycles: %v", err)
	}
}

// TestLeakIsVisible is the control for TestNoMemoryGrowth: the same cycle without
// kw_free must make memory grow, or the measurement could not see a leak.
func TestLeakIsVisible(t *testing.T) {
	in := instance(t)
	s := pickSample(t, in)
	before := in.Memory().Size()
	for i := 0; i < 5000; i++ {
		if _, err := in.Call("kw_decode_message", 0, 0, 0, 0, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		p, err := in.Put([]byte(s.name), s.bytes)
		if err != nil {
			t.Fatal(err)
		}
		nl := uint32(len(s.name))
		if st, err := in.Call("kw_decode_message", p, nl, uint32(s.version), p+nl, uint32(len(s.bytes)), in.Scratch(), in.Scratch()+4); st != 0 || err != nil {
			t.Fatalf("%d %v", st, err)
		}
	}
	after := in.Memory().Size()
	t.Logf("5000 decodes without kw_free: memory %d -> %d bytes", before, after)
	if after <= before {
		t.Errorf("memory did not grow although no output was freed")
	}
}
