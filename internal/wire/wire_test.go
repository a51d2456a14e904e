package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestUvarint(t *testing.T) {
	tests := []struct {
		in   []byte
		want uint32
		err  error
	}{
		{[]byte{0}, 0, nil},
		{[]byte{0x7f}, 127, nil},
		{[]byte{0x80, 0x01}, 128, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 1<<32 - 1, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x10}, 0, ErrVarint},       // overflows 32 bits
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 0, ErrVarint}, // longer than 5 bytes
		{[]byte{0x80}, 0, ErrTruncated},                            // cut short
		{[]byte{0x80, 0x00}, 0, nil},                               // non-minimal, accepted as Kafka does
	}
	for _, tc := range tests {
		r := Reader{Src: tc.in}
		got := r.Uvarint()
		if !errors.Is(r.Err, tc.err) || (tc.err == nil && got != tc.want) {
			t.Errorf("Uvarint(%x) = %d, %v; want %d, %v", tc.in, got, r.Err, tc.want, tc.err)
		}
		if tc.err == nil && got < 1<<28 && !bytes.Equal(AppendUvarint(nil, got), tc.in) && tc.in[len(tc.in)-1] != 0 {
			t.Errorf("AppendUvarint(%d) = %x, want %x", got, AppendUvarint(nil, got), tc.in)
		}
	}
}

func TestEndTagWidensSize(t *testing.T) {
	for _, size := range []int{0, 1, 127, 128, 300, 20000} {
		b, start := BeginTag([]byte{0xaa}, 3)
		for i := 0; i < size; i++ {
			b = append(b, byte(i))
		}
		b = EndTag(b, start)
		r := Reader{Src: b, Off: 1}
		tag, end := r.TagHeader(-1)
		if r.Err != nil || tag != 3 || end-r.Off != size || end != len(b) || b[end-1] != byte(size-1) && size > 0 {
			t.Fatalf("size %d: tag %d end %d off %d len %d err %v", size, tag, end, r.Off, len(b), r.Err)
		}
	}
}

func TestLengths(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		read func(*Reader)
		err  error
	}{
		{"null non-nullable string", []byte{0xff, 0xff}, func(r *Reader) { r.String(false) }, ErrNull},
		{"negative string length", []byte{0xff, 0xfe}, func(r *Reader) { r.String(false) }, ErrLength},
		{"string past end", []byte{0x00, 0x05, 'a'}, func(r *Reader) { r.String(false) }, ErrTruncated},
		{"compact null", []byte{0x00}, func(r *Reader) { r.String(true) }, ErrNull},
		{"array count past end", []byte{0, 0, 0, 9, 1, 2, 3, 4}, func(r *Reader) { r.ArrayLen(false, false, 1) }, ErrTruncated},
		{"array count times element size past end", []byte{0, 0, 0, 2, 1, 2, 3, 4}, func(r *Reader) { r.ArrayLen(false, false, 4) }, ErrTruncated},
		{"tag count beyond input", []byte{0x05, 0, 0}, func(r *Reader) { r.TagCount() }, ErrTags},
	}
	for _, tc := range tests {
		r := Reader{Src: tc.in}
		tc.read(&r)
		if !errors.Is(r.Err, tc.err) || r.ErrOff != 0 {
			t.Errorf("%s: err %v at %d, want %v at 0", tc.name, r.Err, r.ErrOff, tc.err)
		}
	}
	r := Reader{Src: []byte{0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8}}
	if n := r.ArrayLen(false, false, 4); n != 2 || r.Err != nil {
		t.Errorf("a count that fits: %d, %v", n, r.Err)
	}
}

func TestPathJoin(t *testing.T) {
	r := Reader{}
	r.Push("name")
	r.PushIndex(2)
	r.Push("partitions")
	r.PushIndex(0)
	r.Push("topics")
	if got := r.Path(); got != "topics[0].partitions[2].name" {
		t.Fatalf("path %q", got)
	}
}
