// Package pinned keeps the buffers a WebAssembly reactor hands to its host reachable
// while the host uses them. The host addresses a buffer by its linear-memory address,
// which Go's collector knows nothing of: a buffer only the host refers to must stay
// referenced from Go until the host gives it back. kwire's three reactors (the kw_
// module, the proxy-wasm filter and the inspector) hold such buffers through this
// package, and yield to the collector the same way.
//
// Nothing here is safe for concurrent use: a reactor runs one export at a time.
package pinned

import (
	"runtime"
	"unsafe"
)

// Addr is the address of b's array (0 when it has none).
func Addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// own gives b an array of its own when it has none (capacity 0), so that every buffer
// handed out has a distinct, non-zero address.
func own(b []byte) []byte {
	if cap(b) == 0 {
		return make([]byte, 0, 1)
	}
	return b
}

// Address is the type of an address: uint32 in wasm32's linear memory (a map keyed by
// uint32 is the smaller code there), uintptr in the tests of a 64-bit host.
type Address interface{ ~uint32 | ~uintptr }

// Set holds the buffers handed to the host, by address, until each is unpinned. The
// zero Set is empty and ready.
type Set[A Address] struct {
	m    map[A][]byte
	size int // the capacity of the buffers held
}

// Pin holds b until Unpin of its address and returns that address. The host may
// address b's len(b) bytes; its whole array (its capacity) is held and counted in Size.
func (s *Set[A]) Pin(b []byte) A {
	n := len(b)
	b = own(b)
	p := A(Addr(b))
	if s.m == nil {
		s.m = map[A][]byte{}
	}
	if old, ok := s.m[p]; ok {
		s.size -= cap(old)
	}
	s.size += cap(b)
	s.m[p] = b[:n]
	return p
}

// Get returns the buffer pinned at p.
func (s *Set[A]) Get(p A) ([]byte, bool) {
	b, ok := s.m[p]
	return b, ok
}

// Unpin releases the buffer pinned at p and returns it (with its capacity); ok is
// false when none is.
func (s *Set[A]) Unpin(p A) ([]byte, bool) {
	b, ok := s.m[p]
	if !ok {
		return nil, false
	}
	delete(s.m, p)
	s.size -= cap(b)
	return b, true
}

// Region returns the n bytes at p when they lie inside one pinned buffer (n = 0 is
// always a region, of no bytes). The result's capacity is n.
func (s *Set[A]) Region(p A, n uint32) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	if b, ok := s.m[p]; ok {
		if uint64(n) <= uint64(len(b)) {
			return b[:n:n], true
		}
		return nil, false
	}
	end := uint64(p) + uint64(n)
	for base, b := range s.m {
		if p > base && end <= uint64(base)+uint64(len(b)) {
			o := uint64(p - base)
			return b[o : o+uint64(n) : o+uint64(n)], true
		}
	}
	return nil, false
}

// Len is the number of pinned buffers.
func (s *Set[A]) Len() int { return len(s.m) }

// Size is the capacity of the pinned buffers, in bytes.
func (s *Set[A]) Size() int { return s.size }

// Slot holds one buffer for the host: putting another releases the one before.
type Slot struct{ b []byte }

// Put holds b (given an array of its own when it has none) and returns its address.
func (s *Slot) Put(b []byte) uintptr {
	s.b = own(b)
	return Addr(s.b)
}

// Bytes is the buffer held (nil before the first Put).
func (s *Slot) Bytes() []byte { return s.b }

// Yielder lets the Go scheduler run the collector's background workers. In a reactor
// goroutines run only while an export runs, and an export that never yields leaves a
// started collection unfinished, so the heap (linear memory) grows without bound.
// Each export that allocates notes what it handed out or copied in; every Calls notes,
// or once Bytes were noted since the last yield, one note yields (runtime.Gosched).
// Yielding on every call would cost a goroutine switch (an unwind and rewind of the
// wasm stack) each time.
type Yielder struct {
	Calls, Bytes int
	calls, bytes int
}

// Note counts one call that handed out or took in n bytes, and yields when due.
func (y *Yielder) Note(n int) {
	if y.Due(n) {
		y.Yield()
	}
}

// Due counts one call that handed out or took in n bytes and reports whether to
// Yield now. It inlines where Note would be a call of its own: a hot export writes
// `if gc.Due(n) { gc.Yield() }`.
func (y *Yielder) Due(n int) bool {
	y.calls++
	y.bytes += n
	return y.calls >= y.Calls || y.bytes >= y.Bytes
}

// Yield starts the count again and lets the scheduler run.
func (y *Yielder) Yield() {
	y.calls, y.bytes = 0, 0
	runtime.Gosched()
}
