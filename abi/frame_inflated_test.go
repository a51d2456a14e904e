package abi

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/kwire/kwire/codec/records"
)

// FuzzFrameRecordsInflated: whatever the frame and whatever a host passes as inflated
// input, the call returns a table or an error without panicking; and a host that
// decompresses the listed batches faithfully (or some of them) gets exactly the one-call
// decode.
func FuzzFrameRecordsInflated(f *testing.F) {
	t := &testing.T{}
	for i, b := range recordVectors(t) {
		if i%3 == 0 {
			f.Add(fetchFrameOf(t, b), []byte(nil), uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, frame, inflated []byte, mode uint8) {
		le := binary.LittleEndian
		flags := int32(mode & 3)
		if mode&8 != 0 {
			flags |= FlagColumns
		}
		if _, err := DecodeFrameRecordsInflated(nil, frame, 1, 12, flags, 1<<20, inflated); err != nil && AsError(err) == nil {
			t.Fatalf("not an *Error: %v", err)
		}
		list, err := DecodeResponseFrameRecords(nil, frame, 1, 12, flags|flagsHost, 1<<20)
		if err != nil || string(list[:4]) != BatchListMagic {
			return
		}
		n := int(le.Uint32(list[4:]))
		if len(list) != BatchListHeaderSize+16*n {
			t.Fatalf("%d batches in %d bytes", n, len(list))
		}
		var head, data []byte
		k := 0
		for i := 0; i < n; i++ {
			e := list[BatchListHeaderSize+16*i:]
			at, size, c := int(le.Uint32(e)), int(le.Uint32(e[4:])), records.Compression(le.Uint32(e[8:]))
			if at < 0 || size < 0 || at > len(frame)-size {
				t.Fatalf("batch %d (%d, %d) outside the %d-byte frame", i, at, size, len(frame))
			}
			out, err := records.Decompress(nil, c, frame[at:at+size], 1<<20)
			if err != nil || (mode&4 != 0 && i%2 == 0) {
				continue
			}
			head = le.AppendUint32(le.AppendUint32(head, uint32(at)), uint32(len(out)))
			data = append(data, out...)
			k++
		}
		in := append(append(le.AppendUint32(nil, uint32(k)), head...), data...)
		got, gerr := DecodeFrameRecordsInflated(nil, frame, 1, 12, flags, 1<<20, in)
		want, werr := DecodeResponseFrameRecords(nil, frame, 1, 12, flags, 1<<20)
		if (gerr != nil) != (werr != nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("host decompression: %v; the module: %v", gerr, werr)
		}
		if gerr == nil && !bytes.Equal(got, want) {
			t.Fatal("the tables differ")
		}
	})
}

// FuzzFrameRecordsColumns: whatever the frame, layout 4 (columns) holds exactly the
// records, spans and JSON of layouts 2 and 3, or fails with the same error.
func FuzzFrameRecordsColumns(f *testing.F) {
	t := &testing.T{}
	for i, b := range recordVectors(t) {
		if i%3 == 1 {
			f.Add(fetchFrameOf(t, b), uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, mode uint8) {
		flags := int32(mode & 3)
		rows, rerr := DecodeResponseFrameRecords(nil, frame, 1, 12, flags, 1<<20)
		cols, cerr := DecodeResponseFrameRecords(nil, frame, 1, 12, flags|FlagColumns, 1<<20)
		if (rerr != nil) != (cerr != nil) || (rerr != nil && rerr.Error() != cerr.Error()) {
			t.Fatalf("layouts 2/3: %v; layout 4: %v", rerr, cerr)
		}
		if rerr != nil {
			return
		}
		sameEntries(t, "columns", columnEntries(t, cols, frame, flags&FlagInputSpans != 0), tableEntries(t, rows, frame))
		if !bytes.Equal(parseFrameJSON(t, rows), parseFrameJSON(t, cols)) {
			t.Fatal("the JSON differs")
		}
	})
}
