package kwwazero

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kwire/kwire/abi/abiconf"
)

// Status codes of kwire.h.
const (
	kwOK          = 0
	kwErrArg      = -1
	kwErrDecode   = -2
	kwErrJSON     = -4
	kwErrUnknown  = -5
	kwErrVersion  = -6
	kwErrTooLarge = -7
	kwErrInternal = -10
)

// sample is one real vector the tests use as the valid call after each misuse.
type sample struct {
	name    string
	version int16
	bytes   []byte
	json    []byte // what the ABI decodes it to
}

func pickSample(t *testing.T, in *Instance) sample {
	t.Helper()
	for _, v := range releases(t)[len(releases(t))-1].Vectors {
		if v.Name == "ProduceRequest" && strings.HasSuffix(v.ID, "random-4") {
			js, err := in.DecodeMessage(v.Name, v.Version, v.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return sample{v.Name, v.Version, v.Bytes, js}
		}
	}
	t.Fatal("no ProduceRequest random-4 vector")
	return sample{}
}

// checkUsable makes a valid call and checks its result.
func checkUsable(t *testing.T, in *Instance, s sample, after string) {
	t.Helper()
	js, err := in.DecodeMessage(s.name, s.version, s.bytes)
	if err != nil || !bytes.Equal(js, s.json) {
		t.Fatalf("after %s: the valid call fails or differs: %v", after, err)
	}
	if in.LastError() != "" {
		t.Fatalf("after %s: a successful call left the error text %q", after, in.LastError())
	}
}

// expect checks a status and that an error text and error JSON explain it.
func expect(t *testing.T, in *Instance, what string, got int32, err error, want int32) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: trapped: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s: status %d, want %d (%s)", what, got, want, in.LastError())
	}
	text := in.LastError()
	if text == "" {
		t.Fatalf("%s: status %d with no error text", what, got)
	}
	var ej struct {
		Status   int32  `json:"status"`
		Category string `json:"category"`
		Text     string `json:"text"`
	}
	if e := json.Unmarshal(in.LastErrorJSON(), &ej); e != nil || ej.Status != want || ej.Text != text || ej.Category == "" {
		t.Fatalf("%s: kw_last_error_json %s does not match status %d / text %q (%v)", what, in.LastErrorJSON(), want, text, e)
	}
	t.Logf("%-48s -> %d %s", what, got, text)
}

// TestMisuse performs each kind of boundary misuse and then a valid call on the same
// instance.
func TestMisuse(t *testing.T) {
	in := instance(t)
	s := pickSample(t, in)
	sc := in.Scratch()
	buf := in.Alloc(256)
	if buf == 0 {
		t.Fatal("kw_alloc(256) failed")
	}
	name := []byte(s.name)
	in.Memory().Write(buf, name)
	nl := uint32(len(name))
	// At buf+128: a magic 2 batch entry of 40 bytes whose contents (and CRC) are garbage.
	batch := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0, 0, 2}
	batch = append(batch, bytes.Repeat([]byte{0xab}, 35)...)
	in.Memory().Write(buf+128, batch)
	// At buf+192: a frame whose size prefix is 8 and whose api key is Produce, then garbage.
	in.Memory().Write(buf+192, []byte{0, 0, 0, 8, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff})
	memSize := in.Memory().Size()

	type call struct {
		what string
		fn   string
		args []uint32
		want int32
	}
	neg := func(v int32) uint32 { return uint32(v) }
	calls := []call{
		{"NULL input with a length", "kw_decode_message", []uint32{buf, nl, 3, 0, 10, sc, sc + 4}, kwErrArg},
		{"negative input length", "kw_decode_message", []uint32{buf, nl, 3, buf, neg(-5), sc, sc + 4}, kwErrArg},
		{"input pointer past memory", "kw_decode_message", []uint32{buf, nl, 3, memSize + 1024, 10, sc, sc + 4}, kwErrArg},
		{"input pointer at 0xfffffff0", "kw_decode_message", []uint32{buf, nl, 3, 0xfffffff0, 64, sc, sc + 4}, kwErrArg},
		{"input range running past its buffer", "kw_decode_message", []uint32{buf, nl, 3, buf + 200, 100, sc, sc + 4}, kwErrArg},
		{"stray pointer (not a kw_alloc buffer)", "kw_decode_message", []uint32{buf, nl, 3, 16, 8, sc, sc + 4}, kwErrArg},
		{"name pointer out of range", "kw_decode_message", []uint32{memSize + 8, nl, 3, buf, 0, sc, sc + 4}, kwErrArg},
		{"NULL out-param", "kw_decode_message", []uint32{buf, nl, 3, buf, 0, 0, sc + 4}, kwErrArg},
		{"NULL out_len-param", "kw_decode_message", []uint32{buf, nl, 3, buf, 0, sc, 0}, kwErrArg},
		{"out-param outside memory", "kw_decode_message", []uint32{buf, nl, 3, buf, 0, memSize + 64, sc + 4}, kwErrArg},
		{"unknown message name", "kw_decode_message", []uint32{buf, 4, 3, buf, 0, sc, sc + 4}, kwErrUnknown},
		{"bad version", "kw_decode_message", []uint32{buf, nl, 999, buf, 0, sc, sc + 4}, kwErrVersion},
		{"version outside int16", "kw_decode_message", []uint32{buf, nl, 70000, buf, 0, sc, sc + 4}, kwErrVersion},
		{"garbage body (the name's bytes)", "kw_decode_message", []uint32{buf, nl, 3, buf, nl, sc, sc + 4}, kwErrDecode},
		{"garbage JSON", "kw_encode_message", []uint32{buf, nl, 3, buf, nl, sc, sc + 4}, kwErrJSON},
		{"bad api key (response frame)", "kw_decode_response_frame", []uint32{buf, 8, 9999, 0, sc, sc + 4}, kwErrUnknown},
		{"bad version (response frame)", "kw_decode_response_frame", []uint32{buf, 8, 0, 999, sc, sc + 4}, kwErrVersion},
		{"bad api key (header versions)", "kw_header_versions", []uint32{neg(-3), 0, sc, sc + 4}, kwErrUnknown},
		{"frame size prefix above 100 MiB", "kw_decode_request_frame", []uint32{buf, nl, sc, sc + 4}, kwErrTooLarge},
		{"garbage frame", "kw_decode_request_frame", []uint32{buf + 192, 12, sc, sc + 4}, kwErrDecode},
		{"frame shorter than its size prefix", "kw_decode_request_frame", []uint32{buf + 192, 10, sc, sc + 4}, kwErrDecode},
		{"garbage record batch", "kw_records_decode_json", []uint32{buf + 128, uint32(len(batch)), 0, 0, sc, sc + 4}, kwErrDecode},
		{"unknown record flags", "kw_records_decode_table", []uint32{buf, 0, 0x80, 0, sc, sc + 4}, kwErrArg},
		{"unknown compression", "kw_records_encode", []uint32{buf, nl, 9, sc, sc + 4}, kwErrArg},
		{"peek into a stray pointer", "kw_peek_request_header", []uint32{buf, 12, 8}, kwErrArg},
		{"free of a stray pointer", "kw_free", []uint32{12345}, kwErrArg},
		{"free of an interior pointer", "kw_free", []uint32{buf + 1}, kwErrArg},
	}
	for _, c := range calls {
		st, err := in.Call(c.fn, c.args...)
		expect(t, in, c.what, st, err, c.want)
		checkUsable(t, in, s, c.what)
	}

	// kw_alloc: negative and oversized requests return NULL with a status in the error.
	for _, c := range []struct {
		size int32
		want int32
	}{{-1, kwErrArg}, {0x7fffffff, kwErrTooLarge}, {512<<20 + 1, kwErrTooLarge}} {
		p, err := in.Call("kw_alloc", uint32(c.size))
		if err != nil || p != 0 {
			t.Fatalf("kw_alloc(%d) = %d, %v; want NULL", c.size, p, err)
		}
		var ej struct{ Status int32 }
		json.Unmarshal(in.LastErrorJSON(), &ej)
		if ej.Status != c.want || in.LastError() == "" {
			t.Fatalf("kw_alloc(%d): error %s, want status %d", c.size, in.LastErrorJSON(), c.want)
		}
		checkUsable(t, in, s, "kw_alloc misuse")
	}

	// Double free.
	p := in.Alloc(64)
	if st := in.Free(p); st != kwOK {
		t.Fatalf("first free: %d", st)
	}
	st, err := in.Call("kw_free", p)
	expect(t, in, "double free", st, err, kwErrArg)
	checkUsable(t, in, s, "double free")

	// A freed buffer is no longer a valid input.
	st, err = in.Call("kw_decode_message", buf, nl, 3, p, 8, sc, sc+4)
	expect(t, in, "input in a freed buffer", st, err, kwErrArg)
	checkUsable(t, in, s, "use after free")

	// kw_free(NULL) is fine.
	if st := in.Free(0); st != kwOK {
		t.Fatalf("kw_free(NULL) = %d", st)
	}
}

// TestGarbage feeds random and mutated bytes to every decoding function: each call gets
// a status (never a trap) and the instance keeps answering valid calls.
func TestGarbage(t *testing.T) {
	in := instance(t)
	s := pickSample(t, in)
	rng := rand.New(rand.NewPCG(1, 2))
	vs := releases(t)[0].Vectors
	counts := map[int32]int{}
	internal := 0
	for i := 0; i < 3000; i++ {
		v := vs[rng.IntN(len(vs))]
		b := bytes.Clone(v.Bytes)
		switch i % 3 {
		case 0:
			for j := 0; j < 1+rng.IntN(4) && len(b) > 0; j++ {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		case 1:
			if len(b) > 0 {
				b = b[:rng.IntN(len(b))]
			}
		case 2:
			b = make([]byte, rng.IntN(64))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
		}
		_, err := in.DecodeMessage(v.Name, v.Version, b)
		counts[status(t, err)]++
		frame := append([]byte{0, 0, 0, byte(len(b))}, b...)
		_, err = in.DecodeRequestFrame(frame)
		counts[status(t, err)]++
		_, err = in.DecodeResponseFrame(frame, v.APIKey, v.Version)
		counts[status(t, err)]++
		_, err = in.RecordsDecodeTable(b, 0, 0)
		counts[status(t, err)]++
		_, err = in.PeekRequestHeader(b)
		counts[status(t, err)]++
		js := bytes.Clone(v.JSON)
		if len(js) > 2 {
			const junk = "{}[]\",:0a-"
			js[1+rng.IntN(len(js)-2)] = junk[rng.IntN(len(junk))]
		}
		_, err = in.EncodeMessage(v.Name, v.Version, js)
		if st := status(t, err); st == kwErrInternal && internal == 0 {
			internal++
			t.Errorf("mutated JSON %q: %v", js, err)
		} else {
			counts[st]++
		}
	}
	if counts[kwErrInternal] > 0 {
		t.Errorf("%d garbage inputs made the library panic (KW_ERR_INTERNAL)", counts[kwErrInternal])
	}
	t.Logf("statuses over 18000 garbage calls: %v", counts)
	checkUsable(t, in, s, "garbage")
	if counts[kwErrDecode] == 0 {
		t.Errorf("no garbage input was reported as a decode error")
	}
}

func status(t *testing.T, err error) int32 {
	t.Helper()
	if err == nil {
		return kwOK
	}
	ce, ok := err.(*abiconf.CallError)
	if !ok {
		t.Fatalf("not a status: %v", err)
	}
	if ce.Text == "" {
		t.Fatalf("status %d without error text", ce.Status)
	}
	return ce.Status
}
