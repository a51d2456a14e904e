package crc32c

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"
)

var castagnoliRef = crc32.MakeTable(crc32.Castagnoli)

// ref is hash/crc32's CRC-32C.
func ref(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoliRef, b) }

// check fails t unless Update, updateGeneric and hash/crc32 agree on (crc, b).
func check(t *testing.T, what string, crc uint32, b []byte) {
	t.Helper()
	want := ref(crc, b)
	if got := Update(crc, b); got != want {
		t.Fatalf("%s: Update(%#08x, %d bytes) = %#08x, hash/crc32 says %#08x", what, crc, len(b), got, want)
	}
	if got := updateGeneric(crc, b); got != want {
		t.Fatalf("%s: updateGeneric(%#08x, %d bytes) = %#08x, hash/crc32 says %#08x", what, crc, len(b), got, want)
	}
}

func TestKnownValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0},
		{"a", 0xc1d04330},
		{"123456789", 0xe3069283}, // the check value of CRC-32C
		{"The quick brown fox jumps over the lazy dog", 0x22620404},
		{string(make([]byte, 32)), 0x8a9136aa},  // RFC 3720 B.4: 32 zero bytes
		{string(bytesOf(32, 0xff)), 0x62a8ab43}, // 32 bytes of 0xff
		{string(ascending(32)), 0x46dd794e},     // 0x00, 0x01, .. 0x1f
		{string(descending(32)), 0x113fdb5c},    // 0x1f, 0x1e, .. 0x00
	} {
		if got := Checksum([]byte(tc.in)); got != tc.want {
			t.Errorf("Checksum(%q) = %#08x, want %#08x", tc.in, got, tc.want)
		}
		if got := updateGeneric(0, []byte(tc.in)); got != tc.want {
			t.Errorf("updateGeneric(0, %q) = %#08x, want %#08x", tc.in, got, tc.want)
		}
	}
}

func bytesOf(n int, c byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

func ascending(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func descending(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(n - 1 - i)
	}
	return b
}

func random(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x63726333))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
	return b
}

// TestTable checks the tables against their definition: t[k][v] is the
// register after v and k zero bytes, computed bit by bit.
func TestTable(t *testing.T) {
	bitwise := func(b []byte) uint32 {
		var c uint32
		for _, x := range b {
			c ^= uint32(x)
			for range 8 {
				if c&1 != 0 {
					c = c>>1 ^ poly
				} else {
					c >>= 1
				}
			}
		}
		return c
	}
	for k := range 16 {
		for v := range 256 {
			in := make([]byte, k+1)
			in[0] = byte(v)
			if got, want := tab[k][v], bitwise(in); got != want {
				t.Fatalf("t[%d][%#02x] = %#08x, want %#08x", k, v, got, want)
			}
		}
	}
	if poly != crc32.Castagnoli {
		t.Fatalf("poly = %#x, crc32.Castagnoli = %#x", poly, crc32.Castagnoli)
	}
}

// TestLengths covers every length up to 300 (every path through the 16-, 8-,
// 4-, 2- and 1-byte steps, several rounds of the 16-byte loop), from zero and
// non-zero starting values.
func TestLengths(t *testing.T) {
	check(t, "nil", 0x5eed, nil)
	buf := random(1, 300)
	for n := 0; n <= len(buf); n++ {
		for _, crc := range []uint32{0, 1, 0xffffffff, 0x9a3f10c7} {
			check(t, "length "+strconv.Itoa(n), crc, buf[:n])
		}
	}
	// Patterns that make a wrong table index or a byte taken from the wrong
	// position show: all ones, all zeros, one bit set in each position.
	for n := 0; n <= 64; n++ {
		check(t, "0xff x "+strconv.Itoa(n), 0, bytesOf(n, 0xff))
		check(t, "zeros x "+strconv.Itoa(n), 0, make([]byte, n))
		for i := 0; i < n; i++ {
			b := make([]byte, n)
			b[i] = 0x80 >> (i % 8)
			check(t, "bit at "+strconv.Itoa(i)+" of "+strconv.Itoa(n), 0, b)
		}
	}
}

// TestOffsets feeds sub-slices that start 1 to 7 bytes into a buffer, so the
// kernel's loads are unaligned, and that end short of it, so a byte past the
// slice's end taken into the sum would change the result.
func TestOffsets(t *testing.T) {
	buf := random(2, 4096+16)
	for off := 0; off < 8; off++ {
		for _, n := range []int{0, 1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 255, 1000, 4096} {
			check(t, "offset "+strconv.Itoa(off)+" length "+strconv.Itoa(n), 0x12345678, buf[off:off+n])
		}
	}
}

// TestRandom compares the three on random buffers up to 1 MiB.
func TestRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1 << 20, 1<<20 - 1, 65536, 65535, 4097, 1024}
	for range 40 {
		sizes = append(sizes, r.IntN(1<<20+1))
	}
	if testing.Short() {
		sizes = sizes[:8]
	}
	for i, n := range sizes {
		b := random(uint64(100+i), n)
		check(t, "random "+strconv.Itoa(n), r.Uint32(), b)
	}
}

// TestChained checks that Update continues a checksum: any split of a buffer
// into pieces gives the checksum of the whole.
func TestChained(t *testing.T) {
	buf := random(5, 2000)
	want := ref(0, buf)
	r := rand.New(rand.NewPCG(6, 7))
	for range 200 {
		crc, gen := uint32(0), uint32(0)
		for rest := buf; len(rest) > 0; {
			n := min(len(rest), r.IntN(70))
			crc = Update(crc, rest[:n])
			gen = updateGeneric(gen, rest[:n])
			rest = rest[n:]
		}
		if crc != want || gen != want {
			t.Fatalf("chained: Update %#08x, updateGeneric %#08x, want %#08x", crc, gen, want)
		}
	}
	if got := Update(Checksum(buf[:1000]), buf[1000:]); got != want {
		t.Fatalf("Update(Checksum(first half), second half) = %#08x, want %#08x", got, want)
	}
}

// TestNoAllocs checks that a checksum allocates nothing.
func TestNoAllocs(t *testing.T) {
	buf := random(8, 1000)
	if n := testing.AllocsPerRun(100, func() { Checksum(buf) }); n != 0 {
		t.Fatalf("Checksum allocates %v times a call", n)
	}
}

// FuzzUpdate compares Update (the kernel in the wasm build), updateGeneric and
// hash/crc32. The first four bytes are the starting value, the fifth says
// where to split the rest into two chained calls and how far into it to start.
func FuzzUpdate(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x00\x00123456789"))
	f.Add([]byte("\xff\xff\xff\xff\x07The quick brown fox jumps over the lazy dog"))
	f.Add(append([]byte{1, 2, 3, 4, 0x35}, random(9, 300)...))
	f.Add(append([]byte{0x9a, 0x3f, 0x10, 0xc7, 0xfe}, bytesOf(47, 0xff)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		var crc uint32
		var ctl byte
		if len(in) >= 5 {
			crc = binary.LittleEndian.Uint32(in)
			ctl = in[4]
			in = in[5:]
		}
		off := min(int(ctl&7), len(in))
		b := in[off:]
		check(t, "whole", crc, b)
		split := min(int(ctl>>3), len(b))
		want := ref(crc, b)
		if got := Update(Update(crc, b[:split]), b[split:]); got != want {
			t.Fatalf("Update in two calls split at %d of %d = %#08x, want %#08x", split, len(b), got, want)
		}
		if got := updateGeneric(updateGeneric(crc, b[:split]), b[split:]); got != want {
			t.Fatalf("updateGeneric in two calls split at %d of %d = %#08x, want %#08x", split, len(b), got, want)
		}
	})
}
