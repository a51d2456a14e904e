package compkit

import (
	"bytes"
	"math/rand"
	"testing"
)

func TestMatchLen(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		a := make([]byte, r.Intn(40))
		r.Read(a)
		b := append([]byte(nil), a...)
		if k := r.Intn(len(a) + 1); k < len(a) && r.Intn(2) == 0 {
			b[k]++
		}
		b = b[:r.Intn(len(b)+1)]
		want := 0
		for want < len(a) && want < len(b) && a[want] == b[want] {
			want++
		}
		if got := MatchLen(a, b); got != want {
			t.Fatalf("MatchLen(%x, %x) = %d, want %d", a, b, got, want)
		}
		if got := MatchLen(b, a); got != want {
			t.Fatalf("MatchLen(%x, %x) = %d, want %d", b, a, got, want)
		}
	}
}

func TestHuffmanLengths(t *testing.T) {
	var h HuffmanBuilder
	lengths := make([]uint8, 8)
	if d := h.Lengths([]uint32{0, 5, 0}, 15, lengths); d != 0 {
		t.Fatalf("one symbol: deepest %d, want 0", d)
	}
	// Fibonacci counts make a deep code; a limit of 4 must flatten it.
	count := []uint32{1, 1, 2, 3, 5, 8, 13, 21}
	d := h.Lengths(count, 4, lengths)
	if d == 0 || d > 4 {
		t.Fatalf("deepest %d, want 1..4", d)
	}
	kraft := 0
	for _, l := range lengths {
		if l == 0 || uint32(l) > d {
			t.Fatalf("lengths %v, deepest %d", lengths, d)
		}
		kraft += 1 << (d - uint32(l))
	}
	if kraft != 1<<d {
		t.Fatalf("lengths %v do not make a complete code", lengths)
	}
	if d := h.Lengths(count, 15, lengths); d != 7 || !bytes.Equal(lengths, []uint8{7, 7, 6, 5, 4, 3, 2, 1}) {
		t.Fatalf("unlimited: deepest %d, lengths %v", d, lengths)
	}
}
