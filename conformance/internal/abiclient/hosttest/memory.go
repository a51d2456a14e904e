package hosttest

import (
	"bytes"
	"testing"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/codec/records"
)

// noMemoryGrowth runs 10^6 kw_decode_message / kw_free cycles (KWIRE_MEM_CYCLES
// overrides the count) after a warm-up and checks that the module's linear memory does
// not grow (by more than one 64 KiB page): every output is released, nothing
// accumulates. Memory is sampled every 10^5 cycles and printed.
func (s *Suite) noMemoryGrowth(t *testing.T) {
	cycles := memCycles(t, 1_000_000)
	in := s.Instance(t)
	smp := s.pickSample(t, in)
	sc := in.Scratch()
	nameAt, err := in.Put([]byte(smp.name), smp.bytes)
	if err != nil {
		t.Fatal(err)
	}
	nl := uint32(len(smp.name))
	cycle := func() {
		st, err := in.Call("kw_decode_message", nameAt, nl, uint32(smp.version), nameAt+nl, uint32(len(smp.bytes)), sc, sc+4)
		if err != nil || st != 0 {
			t.Fatalf("kw_decode_message: %d %v %s", st, err, in.LastError())
		}
		if st := in.Free(in.U32(sc)); st != 0 {
			t.Fatalf("kw_free: %d", st)
		}
	}
	// The Go heap inside the module settles on its size within the first ~10^5 cycles
	// (its goal depends on where collections happen to fall); measure after that.
	warm := cycles / 5
	for i := 0; i < warm; i++ {
		cycle()
	}
	before := in.MemorySize()
	var samples []uint32
	for i := 0; i < cycles; i++ {
		cycle()
		if (i+1)%(cycles/10) == 0 {
			samples = append(samples, in.MemorySize())
		}
	}
	after := in.MemorySize()
	t.Logf("memory every %d cycles: %v", cycles/10, samples)
	t.Logf("%d decode/free cycles of %s v%d (%d bytes -> %d bytes of JSON): memory %d bytes before, %d after (after %d warm-up cycles)",
		cycles, smp.name, smp.version, len(smp.bytes), len(smp.json), before, after, warm)
	// A leak of even a quarter of a byte per cycle would add several 64 KiB pages; the
	// bound tolerates one page, the last step of the heap settling after the warm-up.
	if after > before+65536 {
		t.Errorf("linear memory grew from %d to %d bytes over %d cycles", before, after, cycles)
	} else if after != before {
		t.Logf("note: one page of growth (%d -> %d bytes)", before, after)
	}
	// The instance still decodes correctly.
	js, err := in.DecodeMessage(smp.name, smp.version, smp.bytes)
	if err != nil || !bytes.Equal(js, smp.json) {
		t.Fatalf("after the cycles: %v", err)
	}
}

// leakIsVisible is the control for TestNoMemoryGrowth: the same cycle without
// kw_free must make memory grow, or the measurement could not see a leak.
func (s *Suite) leakIsVisible(t *testing.T) {
	in := s.Instance(t)
	smp := s.pickSample(t, in)
	before := in.MemorySize()
	for i := 0; i < 5000; i++ {
		if _, err := in.Call("kw_decode_message", 0, 0, 0, 0, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		p, err := in.Put([]byte(smp.name), smp.bytes)
		if err != nil {
			t.Fatal(err)
		}
		nl := uint32(len(smp.name))
		if st, err := in.Call("kw_decode_message", p, nl, uint32(smp.version), p+nl, uint32(len(smp.bytes)), in.Scratch(), in.Scratch()+4); st != 0 || err != nil {
			t.Fatalf("%d %v", st, err)
		}
	}
	after := in.MemorySize()
	t.Logf("5000 decodes without kw_free: memory %d -> %d bytes", before, after)
	if after <= before {
		t.Errorf("memory did not grow although no output was freed")
	}
}

// frameRecordsSteadyState runs 10^5 kw_decode_response_frame_records / kw_free
// cycles (KWIRE_MEM_CYCLES overrides the count) of a 10-record Fetch response in layout 3,
// 10^4 in layout 2, and 10^3 of a 1000-record lz4 Fetch response, each after a warm-up:
// the module's runtime must start no GC cycle and allocate no heap object
// (kw_runtime_stats, from runtime/metrics: small objects are counted when a cache is
// refilled, so no GC cycle is the firmer bound: a few dozen bytes per call would start
// one), and its linear memory must not grow.
func (s *Suite) frameRecordsSteadyState(t *testing.T) {
	cycles := memCycles(t, 100_000)
	small, err := codectest.FetchFrameOf(records.CompressionNone, 0, 1, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	big, err := codectest.FetchFrame(records.CompressionLZ4, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		frame  []byte
		flags  int32
		cycles int
	}{{small, abi.FlagInputSpans, cycles}, {small, 0, cycles / 10}, {big, abi.FlagInputSpans, cycles / 100}} {
		frame, flags, cycles := c.frame, c.flags, c.cycles
		in := s.Instance(t)
		p, err := in.Put(frame)
		if err != nil {
			t.Fatal(err)
		}
		sc := in.Scratch()
		cycle := func() {
			st := in.MustCall("kw_decode_response_frame_records", p, uint32(len(frame)), 1, 11, uint32(flags), 0, sc, sc+4)
			if st != 0 {
				t.Fatalf("kw_decode_response_frame_records: %d %s", st, in.LastError())
			}
			if st := in.Free(in.U32(sc)); st != 0 {
				t.Fatalf("kw_free: %d", st)
			}
		}
		for i := 0; i < 200; i++ {
			cycle()
		}
		before, mem := readStats(t, in), in.MemorySize()
		for i := 0; i < cycles; i++ {
			cycle()
		}
		after, mem2 := readStats(t, in), in.MemorySize()
		t.Logf("flags %d: %d cycles: GC cycles %d -> %d, heap objects allocated %d -> %d, linear memory %d -> %d bytes",
			flags, cycles, before["gcCycles"], after["gcCycles"], before["heapAllocs"], after["heapAllocs"], mem, mem2)
		// kw_runtime_stats itself allocates nothing either; the bound allows none.
		if after["gcCycles"] != before["gcCycles"] || after["heapAllocs"] != before["heapAllocs"] || mem2 != mem {
			t.Errorf("flags %d: not a steady state: %v -> %v, memory %d -> %d", flags, before, after, mem, mem2)
		}
	}
}

// steadyStateIsVisible is the control: decoding without kw_free allocates, and
// kw_runtime_stats sees it.
func (s *Suite) steadyStateIsVisible(t *testing.T) {
	in := s.Instance(t)
	frame, err := codectest.FetchFrame(records.CompressionNone, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := in.Put(frame)
	if err != nil {
		t.Fatal(err)
	}
	sc := in.Scratch()
	before := readStats(t, in)
	for i := 0; i < 50; i++ {
		if st := in.MustCall("kw_decode_response_frame_records", p, uint32(len(frame)), 1, 11, 0, 0, sc, sc+4); st != 0 {
			t.Fatal(in.LastError())
		}
	}
	after := readStats(t, in)
	if after["heapAllocs"] <= before["heapAllocs"] || after["liveBuffers"] < before["liveBuffers"]+50 {
		t.Fatalf("50 unfreed outputs went unseen: %v -> %v", before, after)
	}
}
