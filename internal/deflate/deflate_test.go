package deflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

func inputs() map[string][]byte {
	r := rand.New(rand.NewSource(1))
	random := func(n int) []byte { b := make([]byte, n); r.Read(b); return b }
	var recs bytes.Buffer
	for i := 0; recs.Len() < 300<<10; i++ {
		fmt.Fprintf(&recs, `{"id":%d,"user":"user-%d","event":"page_view","path":"/items/%d","ts":%d}`, i, r.Intn(500), r.Intn(10000), 1750000000000+int64(i)*37)
	}
	var words bytes.Buffer
	vocab := []string{"kafka", "record", "batch", "offset", "partition", "topic", "leader", "the", "a", "of", "\n"}
	for words.Len() < 200<<10 {
		words.WriteString(vocab[r.Intn(len(vocab))] + " ")
	}
	gauss := make([]byte, 100000)
	for i := range gauss {
		gauss[i] = byte(r.NormFloat64()*20 + 128)
	}
	return map[string][]byte{
		"empty":     nil,
		"one":       {7},
		"three":     []byte("abc"),
		"high":      {144, 200, 255, 143, 0, 150, 255, 255, 255, 255, 255, 255, 1},
		"short":     []byte("hello, hello, hello world"),
		"zeros":     make([]byte, 200<<10),
		"random":    random(100 << 10),
		"records":   recs.Bytes(),
		"records1k": recs.Bytes()[:1024],
		"words":     words.Bytes(),
		"gaussian":  gauss,
		"mixed":     append(append(random(3000), bytes.Repeat([]byte("abcdefgh"), 7000)...), random(70000)...),
		"258":       bytes.Repeat([]byte{'x'}, 258*3+1),
	}
}

func gunzip(t testing.TB, b []byte) []byte {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("compress/gzip rejects the header: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("compress/gzip rejects the member: %v", err)
	}
	return out
}

// TestReference: the standard library's and klauspost/compress's readers
// decode every member back to its input, one Encoder reused for all.
func TestReference(t *testing.T) {
	var e Encoder
	for name, in := range inputs() {
		for round := 0; round < 2; round++ {
			enc := e.AppendGzip([]byte("pre"), in)
			if string(enc[:3]) != "pre" {
				t.Fatalf("%s: dst's bytes were overwritten", name)
			}
			enc = enc[3:]
			if got := gunzip(t, enc); !bytes.Equal(got, in) {
				t.Fatalf("%s: compress/gzip decodes %d bytes that differ from the %d input bytes", name, len(got), len(in))
			}
			kr, err := kgzip.NewReader(bytes.NewReader(enc))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(kr); err != nil || !bytes.Equal(got, in) {
				t.Fatalf("%s: klauspost/compress: %v", name, err)
			}
			raw := e.AppendDeflate(nil, in)
			if got, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw))); err != nil || !bytes.Equal(got, in) {
				t.Fatalf("%s: compress/flate: %v", name, err)
			}
		}
	}
}

// TestRatio: within 10% of klauspost/compress's gzip at its default level.
func TestRatio(t *testing.T) {
	var e Encoder
	for name, in := range inputs() {
		if len(in) < 1000 {
			continue
		}
		var b bytes.Buffer
		w, _ := kgzip.NewWriterLevel(&b, kgzip.DefaultCompression)
		w.Write(in)
		w.Close()
		ours := len(e.AppendGzip(nil, in))
		t.Logf("%-10s %7d bytes: ours %7d, klauspost %7d (%+.1f%%)", name, len(in), ours, b.Len(), 100*(float64(ours)/float64(b.Len())-1))
		if float64(ours) > 1.10*float64(b.Len())+16 {
			t.Errorf("%s: %d bytes, klauspost/compress %d: more than 10%% larger", name, ours, b.Len())
		}
	}
}

// FuzzReference: whatever the input, compress/gzip decodes the member back to it.
func FuzzReference(f *testing.F) {
	for _, in := range inputs() {
		if len(in) < 5000 {
			f.Add(in)
		}
	}
	var e Encoder
	f.Fuzz(func(t *testing.T, in []byte) {
		if got := gunzip(t, e.AppendGzip(nil, in)); !bytes.Equal(got, in) {
			t.Fatalf("decoded bytes differ from the %d input bytes", len(in))
		}
	})
}
