package lz4enc

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// inputs are the shapes a block meets: empty, shorter than the minimum match
// limit, runs, text-like records, incompressible bytes, and mixes of them.
func inputs() map[string][]byte {
	r := rand.New(rand.NewSource(1))
	random := func(n int) []byte { b := make([]byte, n); r.Read(b); return b }
	var recs bytes.Buffer
	for i := 0; recs.Len() < 64<<10; i++ {
		fmt.Fprintf(&recs, `{"id":%d,"user":"user-%d","event":"page_view","path":"/items/%d","ts":%d}`, i, r.Intn(500), r.Intn(10000), 1750000000000+int64(i)*37)
	}
	mixed := append(append(random(3000), bytes.Repeat([]byte("abcdefgh"), 700)...), random(20)...)
	return map[string][]byte{
		"empty":    nil,
		"one":      {7},
		"twelve":   []byte("abcdefghijkl"),
		"thirteen": []byte("aaaaaaaaaaaaa"),
		"zeros":    make([]byte, 64<<10),
		"random":   random(64 << 10),
		"records":  recs.Bytes()[:64<<10],
		"mixed":    mixed,
		"period3":  bytes.Repeat([]byte("xyz"), 5000),
		"long lit": append(random(1000), make([]byte, 300)...),
	}
}

func decode(t testing.TB, enc []byte, n int) []byte {
	out := make([]byte, n+64)
	k, err := lz4.UncompressBlock(enc, out)
	if err != nil {
		t.Fatalf("pierrec/lz4 rejects the block: %v", err)
	}
	return out[:k]
}

// TestReference: pierrec/lz4 decodes every block back to its input, also with
// one Encoder reused across blocks (its table then holds earlier blocks'
// positions, which must never be taken for the current block's).
func TestReference(t *testing.T) {
	var e Encoder
	for name, in := range inputs() {
		for round := 0; round < 2; round++ {
			enc := e.AppendBlock([]byte("prefix"), in)
			if string(enc[:6]) != "prefix" {
				t.Fatalf("%s: dst's bytes were overwritten", name)
			}
			enc = enc[6:]
			if len(enc) > MaxEncodedLen(len(in)) {
				t.Errorf("%s: %d bytes, bound %d", name, len(enc), MaxEncodedLen(len(in)))
			}
			if got := decode(t, enc, len(in)); !bytes.Equal(got, in) {
				t.Fatalf("%s: decoded %d bytes differ from the %d input bytes", name, len(got), len(in))
			}
		}
	}
}

// TestBaseWraps: the table is cleared when the position base would overflow.
func TestBaseWraps(t *testing.T) {
	e := &Encoder{base: 1<<31 - 1 - 70000}
	in := inputs()["records"]
	for i := 0; i < 3; i++ {
		if got := decode(t, e.AppendBlock(nil, in), len(in)); !bytes.Equal(got, in) {
			t.Fatalf("round %d: output differs", i)
		}
	}
	if e.base > 3*(64<<10+maxOffset+1) {
		t.Fatalf("base %d was not reset", e.base)
	}
}

// TestRatio: on compressible input, within 10% of pierrec/lz4's fast compressor.
func TestRatio(t *testing.T) {
	var e Encoder
	var c lz4.Compressor
	for _, name := range []string{"records", "mixed", "period3", "zeros"} {
		in := inputs()[name]
		ours := len(e.AppendBlock(nil, in))
		buf := make([]byte, lz4.CompressBlockBound(len(in)))
		ref, err := c.CompressBlock(in, buf)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes -> ours %d, pierrec %d", name, len(in), ours, ref)
		if float64(ours) > 1.10*float64(ref)+16 {
			t.Errorf("%s: %d bytes, pierrec/lz4 %d: more than 10%% larger", name, ours, ref)
		}
	}
}

// FuzzReference: whatever the input, pierrec/lz4 decodes the block back to it.
func FuzzReference(f *testing.F) {
	for _, in := range inputs() {
		if len(in) < 5000 {
			f.Add(in)
		}
	}
	f.Add(bytes.Repeat([]byte("0123456789abcdef"), 100))
	var e Encoder
	f.Fuzz(func(t *testing.T, in []byte) {
		if got := decode(t, e.AppendBlock(nil, in), len(in)); !bytes.Equal(got, in) {
			t.Fatalf("decoded bytes differ from the %d input bytes", len(in))
		}
	})
}
