package pinned

import (
	"runtime"
	"testing"
)

func TestSetPinsUntilUnpinned(t *testing.T) {
	var s Set[uintptr]
	a := make([]byte, 10, 16)
	pa := s.Pin(a)
	if pa != Addr(a) || pa == 0 {
		t.Fatalf("Pin = %#x, the array is at %#x", pa, Addr(a))
	}
	pe := s.Pin(nil) // an empty result gets an array of its own
	pz := s.Pin(make([]byte, 0))
	if pe == 0 || pz == 0 || pe == pz || pe == pa {
		t.Fatalf("empty buffers at %#x and %#x (a at %#x): want distinct non-zero addresses", pe, pz, pa)
	}
	if s.Len() != 3 || s.Size() != 16+1+1 {
		t.Fatalf("Len %d Size %d, want 3 and 18", s.Len(), s.Size())
	}
	if b, ok := s.Get(pa); !ok || len(b) != 10 || cap(b) != 16 {
		t.Fatalf("Get: %d/%d %v", len(b), cap(b), ok)
	}
	s.Pin(a) // pinned again: counted once
	if s.Len() != 3 || s.Size() != 18 {
		t.Fatalf("after a second Pin: Len %d Size %d", s.Len(), s.Size())
	}
	b, ok := s.Unpin(pa)
	if !ok || cap(b) != 16 || s.Len() != 2 || s.Size() != 2 {
		t.Fatalf("Unpin: cap %d %v, Len %d Size %d", cap(b), ok, s.Len(), s.Size())
	}
	if _, ok := s.Unpin(pa); ok {
		t.Fatal("a second Unpin found the buffer")
	}
	if _, ok := s.Get(pa); ok {
		t.Fatal("Get found an unpinned buffer")
	}
}

func TestRegion(t *testing.T) {
	var s Set[uintptr]
	a := make([]byte, 8, 32)
	for i := range a {
		a[i] = byte(i)
	}
	p := s.Pin(a)
	for _, c := range []struct {
		off, n uint32
		ok     bool
	}{
		{0, 0, true}, {0, 8, true}, {0, 4, true}, {3, 5, true}, {7, 1, true},
		{0, 9, false}, {4, 5, false}, {8, 1, false}, // past len, inside the capacity: not the host's
	} {
		b, ok := s.Region(p+uintptr(c.off), c.n)
		if ok != c.ok {
			t.Errorf("Region(+%d, %d): ok %v, want %v", c.off, c.n, ok, c.ok)
			continue
		}
		if ok && c.n > 0 && (len(b) != int(c.n) || cap(b) != int(c.n) || b[0] != byte(c.off)) {
			t.Errorf("Region(+%d, %d) = %v (cap %d)", c.off, c.n, b, cap(b))
		}
	}
	if _, ok := s.Region(p-1, 2); ok {
		t.Error("a region starting before the buffer")
	}
	if _, ok := s.Region(0, 4); ok {
		t.Error("a region at address 0")
	}
	if b, ok := s.Region(0, 0); !ok || b != nil {
		t.Error("the empty region")
	}
}

func TestPinnedBuffersSurviveCollection(t *testing.T) {
	var s Set[uintptr]
	ps := make([]uintptr, 64)
	for i := range ps {
		b := make([]byte, 4096)
		b[0], b[4095] = byte(i), byte(i)
		ps[i] = s.Pin(b)
	}
	runtime.GC()
	runtime.GC()
	for i, p := range ps {
		b, ok := s.Region(p, 4096)
		if !ok || b[0] != byte(i) || b[4095] != byte(i) {
			t.Fatalf("buffer %d lost after collection", i)
		}
	}
}

func TestSlot(t *testing.T) {
	var s Slot
	if s.Bytes() != nil {
		t.Fatal("a new Slot holds a buffer")
	}
	p := s.Put(nil)
	if p == 0 || cap(s.Bytes()) != 1 || len(s.Bytes()) != 0 {
		t.Fatalf("Put(nil): %#x, %d/%d", p, len(s.Bytes()), cap(s.Bytes()))
	}
	b := []byte("abc")
	if s.Put(b) != Addr(b) || string(s.Bytes()) != "abc" {
		t.Fatal("Put(abc)")
	}
}

func TestYielderResetsWhenDue(t *testing.T) {
	y := Yielder{Calls: 3, Bytes: 100}
	y.Note(10)
	y.Note(10)
	if y.calls != 2 || y.bytes != 20 {
		t.Fatalf("after two notes: %d calls, %d bytes", y.calls, y.bytes)
	}
	y.Note(10) // the third call yields
	if y.calls != 0 || y.bytes != 0 {
		t.Fatalf("after the third: %d calls, %d bytes", y.calls, y.bytes)
	}
	y.Note(100) // the byte budget
	if y.calls != 0 || y.bytes != 0 {
		t.Fatalf("after 100 bytes: %d calls, %d bytes", y.calls, y.bytes)
	}
}
