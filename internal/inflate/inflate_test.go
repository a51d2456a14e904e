package inflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"hash/crc32"
	"io"
	"math/rand"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

func gz(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func inputs() [][]byte {
	rnd := rand.New(rand.NewSource(1))
	var out [][]byte
	out = append(out, nil, []byte("a"), bytes.Repeat([]byte("ab"), 40000))
	for _, n := range []int{10, 300, 5000, 70000, 300000} {
		random := make([]byte, n)
		rnd.Read(random)
		text := make([]byte, n)
		words := []string{"kafka ", "record ", "value ", "{\"id\":", "12,", "\"payload\":\"", "abc\"}", "\n"}
		for i := 0; i < n; {
			w := words[rnd.Intn(len(words))]
			i += copy(text[i:], w)
		}
		skewed := make([]byte, n)
		for i := range skewed {
			skewed[i] = byte(rnd.ExpFloat64() * 3)
		}
		out = append(out, random, text, skewed)
	}
	return out
}

// Every level of the standard library's writer (stored, fixed and dynamic blocks,
// Huffman-only), one and several members: Gunzip gives the input back.
func TestGunzipMatchesStdlib(t *testing.T) {
	for i, in := range inputs() {
		for _, level := range []int{gzip.HuffmanOnly, gzip.NoCompression, 1, 5, 9} {
			z := gz(t, in, level)
			got, err := Gunzip([]byte("x"), z, 1<<30)
			if err != nil || !bytes.Equal(got[1:], in) || got[0] != 'x' {
				t.Fatalf("input %d level %d: %v, equal %v", i, level, err, bytes.Equal(got[1:], in))
			}
			two := append(append([]byte(nil), z...), gz(t, in[:len(in)/2], level)...)
			got, err = Gunzip(nil, two, 1<<30)
			if err != nil || !bytes.Equal(got, append(append([]byte(nil), in...), in[:len(in)/2]...)) {
				t.Fatalf("input %d level %d, two members: %v", i, level, err)
			}
			if len(in) > 10 {
				if _, err := Gunzip(nil, z, len(in)-1); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("input %d level %d: limit below the size gave %v", i, level, err)
				}
			}
		}
	}
}

func TestGunzipRefuses(t *testing.T) {
	z := gz(t, []byte("hello, hello, hello"), 6)
	bad := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), z...)) }
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"not gzip", []byte("hello world, not gzip")},
		{"truncated header", z[:5]},
		{"truncated stream", z[:len(z)-10]},
		{"no trailer", z[:len(z)-8]},
		{"bad crc", bad(func(b []byte) []byte { b[len(b)-8] ^= 1; return b })},
		{"bad size", bad(func(b []byte) []byte { b[len(b)-1] ^= 1; return b })},
		{"trailing garbage", append(append([]byte(nil), z...), 1, 2, 3)},
		{"method", bad(func(b []byte) []byte { b[2] = 7; return b })},
	} {
		if _, err := Gunzip(nil, tc.in, 1<<20); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
		if _, err := gzip.NewReader(bytes.NewReader(tc.in)); err == nil {
			r, _ := gzip.NewReader(bytes.NewReader(tc.in))
			if _, err := io.ReadAll(r); err == nil {
				t.Errorf("%s: the standard library accepts it", tc.name)
			}
		}
	}
}

// FuzzInflate: on any raw deflate input, what the standard library decodes the
// decoder decodes the same, and it never reads past its input or passes the limit.
func FuzzInflate(f *testing.F) {
	for _, in := range inputs()[:8] {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, 6)
		w.Write(in)
		w.Close()
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, n, err := Inflate(nil, src, 1<<20)
		want, werr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(src)), 1<<20+1))
		if n > len(src) {
			t.Fatalf("used %d of %d bytes", n, len(src))
		}
		if len(got) > 1<<20 {
			t.Fatalf("%d bytes out", len(got))
		}
		if werr == nil && len(want) <= 1<<20 {
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the standard library decodes %d bytes, the decoder: %v (%d bytes)", len(want), err, len(got))
			}
		}
	})
}

// FuzzGunzip: any gzip input the standard library reads whole, Gunzip reads the same.
func FuzzGunzip(f *testing.F) {
	for _, in := range inputs()[:8] {
		f.Add(gz(f, in, 6))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := Gunzip(nil, src, 1<<20)
		r, rerr := gzip.NewReader(bytes.NewReader(src))
		if rerr != nil {
			return
		}
		want, werr := io.ReadAll(io.LimitReader(r, 1<<20+1))
		if werr == nil && len(want) <= 1<<20 && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("the standard library reads %d bytes, Gunzip: %v (%d bytes)", len(want), err, len(got))
		}
	})
}

func BenchmarkGunzip(b *testing.B) {
	in := inputs()[len(inputs())-2] // 300 KB of text
	z := gz(b, in, 6)
	b.SetBytes(int64(len(in)))
	b.Run("kwire", func(b *testing.B) {
		var out []byte
		for b.Loop() {
			out, _ = Gunzip(out[:0], z, 1<<30)
		}
	})
	b.Run("klauspost", func(b *testing.B) {
		var r kgzip.Reader
		for b.Loop() {
			r.Reset(bytes.NewReader(z))
			io.Copy(io.Discard, &r)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		var r gzip.Reader
		for b.Loop() {
			r.Reset(bytes.NewReader(z))
			io.Copy(io.Discard, &r)
		}
	})
}

func BenchmarkInflate(b *testing.B) {
	in := inputs()[len(inputs())-2] // 300 KB of text
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, 6)
	w.Write(in)
	w.Close()
	b.SetBytes(int64(len(in)))
	b.Run("kwire", func(b *testing.B) {
		out := make([]byte, 0, len(in)+1024)
		for b.Loop() {
			out, _, _ = Inflate(out[:0], z.Bytes(), 1<<30)
		}
	})
	b.Run("crc32", func(b *testing.B) {
		for b.Loop() {
			crc32.ChecksumIEEE(in)
		}
	})
}
