package zstd

import (
	"bytes"
	"errors"
	"math/rand"
	"strconv"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// ---- inputs ----

type input struct {
	name string
	data []byte
}

func randomBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// text is repetitive English-like text drawn from a small vocabulary.
func text(seed int64, n int) []byte {
	words := []string{"kafka", "record", "batch", "offset", "partition", "topic", "leader", "epoch",
		"producer", "consumer", "the", "a", "of", "and", "zstd", "frame", "block", "window", "\n"}
	r := rand.New(rand.NewSource(seed))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.Intn(len(words))])
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

// records is a JSON-like batch of Kafka record payloads of about size bytes each.
func records(seed int64, count, size int) []byte {
	r := rand.New(rand.NewSource(seed))
	var b bytes.Buffer
	for i := 0; i < count; i++ {
		start := b.Len()
		b.WriteString(`{"id":` + strconv.Itoa(r.Intn(1e9)) + `,"user":"user-` + strconv.Itoa(r.Intn(5000)) +
			`","event":"` + []string{"click", "view", "purchase", "login"}[r.Intn(4)] + `","ts":` +
			strconv.FormatInt(1700000000000+int64(r.Intn(1e9)), 10) + `,"tags":[`)
		for b.Len()-start < size-40 {
			b.WriteString(`"t` + strconv.Itoa(r.Intn(300)) + `",`)
		}
		b.WriteString(`"end"],"score":` + strconv.FormatFloat(r.Float64(), 'f', 6, 64) + "}\n")
	}
	return b.Bytes()
}

// mixed alternates runs of random bytes, zeros and text, so that blocks mix
// raw, RLE and compressed content.
func mixed(seed int64, n int) []byte {
	r := rand.New(rand.NewSource(seed))
	var b []byte
	for len(b) < n {
		k := 1 + r.Intn(20000)
		switch r.Intn(3) {
		case 0:
			b = append(b, randomBytes(r.Int63(), k)...)
		case 1:
			b = append(b, make([]byte, k)...)
		default:
			b = append(b, text(r.Int63(), k)...)
		}
	}
	return b[:n]
}

func inputs() []input {
	in := []input{
		{"empty", nil},
		{"one byte", []byte{'x'}},
		{"zeros 1000", make([]byte, 1000)},
		{"zeros 1MiB", make([]byte, 1<<20)},
		{"text 100", text(1, 100)},
		{"records 1KiBx100", records(2, 100, 1024)},
		{"random 1000", randomBytes(3, 1000)},
		{"random 200000", randomBytes(4, 200000)},
		{"mixed 300000", mixed(5, 300000)},
		{"text 1MiB", text(6, 1<<20)},
	}
	for _, n := range []int{128<<10 - 1, 128 << 10, 128<<10 + 1, 256<<10 + 1} {
		in = append(in, input{"text " + strconv.Itoa(n), text(int64(n), n)})
		in = append(in, input{"random " + strconv.Itoa(n), randomBytes(int64(n), n)})
	}
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 6; i++ {
		n := r.Intn(1 << 20)
		in = append(in, input{"mixed " + strconv.Itoa(n), mixed(int64(i), n)})
	}
	return in
}

// ---- encoders ----

type encoding struct {
	name   string
	stream bool // streaming Writer: no content size in the header
	opts   []kzstd.EOption
}

func encodings() []encoding {
	var es []encoding
	for _, lvl := range []kzstd.EncoderLevel{kzstd.SpeedFastest, kzstd.SpeedDefault, kzstd.SpeedBetterCompression, kzstd.SpeedBestCompression} {
		l := lvl.String()
		es = append(es,
			encoding{l, false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl)}},
			encoding{l + "/nocrc", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithEncoderCRC(false)}},
			encoding{l + "/stream", true, []kzstd.EOption{kzstd.WithEncoderLevel(lvl)}},
			encoding{l + "/stream/nocrc", true, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithEncoderCRC(false)}},
			encoding{l + "/single", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithSingleSegment(true)}},
			encoding{l + "/nosingle", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithSingleSegment(false)}},
			encoding{l + "/lowmem", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithLowerEncoderMem(true)}},
			encoding{l + "/window1KiB/stream", true, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithWindowSize(1 << 10)}},
			encoding{l + "/window64KiB", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithWindowSize(64 << 10), kzstd.WithSingleSegment(false)}},
			encoding{l + "/window64KiB/stream", true, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithWindowSize(64 << 10)}},
			encoding{l + "/allentropy", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithAllLitEntropyCompression(true)}},
			encoding{l + "/noentropy", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithNoEntropyCompression(true)}},
			encoding{l + "/window8MiB", false, []kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithWindowSize(8 << 20), kzstd.WithSingleSegment(false)}},
		)
	}
	return es
}

func encode(t testing.TB, e encoding, data []byte) []byte {
	t.Helper()
	if e.stream {
		var buf bytes.Buffer
		w, err := kzstd.NewWriter(&buf, append(e.opts, kzstd.WithEncoderConcurrency(1))...)
		if err != nil {
			t.Fatal(err)
		}
		// Write in uneven pieces so that blocks end at varied places.
		for p := 0; p < len(data); {
			n := 70000
			if n > len(data)-p {
				n = len(data) - p
			}
			if _, err := w.Write(data[p : p+n]); err != nil {
				t.Fatal(err)
			}
			p += n
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	enc, err := kzstd.NewWriter(nil, append(e.opts, kzstd.WithEncoderConcurrency(1))...)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// ---- tests ----

func TestDifferential(t *testing.T) {
	ins := inputs()
	if testing.Short() {
		ins = ins[:8]
	}
	var d Decoder
	for _, e := range encodings() {
		for _, in := range ins {
			comp := encode(t, e, in.data)
			got, err := d.DecodeAll(nil, comp, len(in.data))
			if err != nil {
				t.Errorf("%s, %s (%d bytes compressed): %v", e.name, in.name, len(comp), err)
				continue
			}
			if !bytes.Equal(got, in.data) {
				t.Errorf("%s, %s: output differs (%d bytes, want %d)", e.name, in.name, len(got), len(in.data))
			}
		}
	}
}

func skippable(magicLow byte, content []byte) []byte {
	b := []byte{0x50 | magicLow, 0x2A, 0x4D, 0x18}
	b = append(b, byte(len(content)), byte(len(content)>>8), byte(len(content)>>16), byte(len(content)>>24))
	return append(b, content...)
}

// TestMultiFrame decodes frames of different kinds one after another, with
// skippable frames (and an encoder's skippable padding) between them.
func TestMultiFrame(t *testing.T) {
	a, b, c := records(71, 30, 700), text(72, 150000), randomBytes(73, 5000)
	padded, err := kzstd.NewWriter(nil, kzstd.WithEncoderPadding(4096), kzstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer padded.Close()
	var src, want []byte
	src = append(src, encode(t, encoding{"default", false, nil}, a)...)
	src = append(src, skippable(0x0, []byte("metadata"))...)
	src = append(src, encode(t, encoding{"stream", true, nil}, b)...)
	src = append(src, skippable(0xF, nil)...)
	src = append(src, encode(t, encoding{"single", false, []kzstd.EOption{kzstd.WithSingleSegment(true)}}, c)...)
	p := padded.EncodeAll(a, nil)
	if len(p)%4096 != 0 {
		t.Fatalf("padded frame is %d bytes, not a multiple of 4096", len(p))
	}
	src = append(src, p...)
	src = append(src, encode(t, encoding{"empty", false, nil}, nil)...)
	src = append(src, skippable(0x7, bytes.Repeat([]byte{0xFF}, 300))...)
	want = append(append(append(append(want, a...), b...), c...), a...)
	var d Decoder
	got, err := d.DecodeAll([]byte("head:"), src, len(want))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append([]byte("head:"), want...)) {
		t.Fatalf("output differs: %d bytes, want %d", len(got), 5+len(want))
	}
	if kgot, err := kdecode(t, src); err != nil || !bytes.Equal(kgot, want) {
		t.Fatalf("klauspost/compress's decoder disagrees about the test input: %v", err)
	}
	if _, err := d.DecodeAll(nil, src, len(want)-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one byte under the total: got %v, want ErrTooLarge", err)
	}
}
