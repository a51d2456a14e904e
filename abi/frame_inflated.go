package abi

import (
	"encoding/binary"
	"sort"
	"strconv"
	"sync"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/transcode"
)

// Host decompression (ABI 1.3). A host whose own zlib (or zstd) is faster than the
// module's asks kw_frame_compressed_batches where a frame's compressed batches are,
// decompresses them itself, and hands the results to kw_decode_frame_records_inflated,
// which reads them in place of its own decompression. Everything else is the same call:
// each batch's checksum is still checked on its compressed bytes, the records are read
// from the decompressed bytes by the same code, and a batch the host left out is
// decompressed by the module. So records, errors and limits are those of
// kw_decode_*_frame_records, as long as the host hands back the exact decompressed
// bytes; a host that could not decompress a batch (corrupt, or past the cap) leaves it
// out, and the module's own decompressor then gives the error it always gives.

// CompressedBatchWords is the number of int32 words of one entry of
// kw_frame_compressed_batches' output: the offset in the frame of the batch's
// compressed records section, its length, the codec (KW_COMPRESSION_*) and the record
// count the batch header states.
const CompressedBatchWords = 4

// batchLister finds the compressed batches of a frame's records fields.
type batchLister struct {
	framer transcode.Framer
	frame  []byte
	list   []byte // entries, CompressedBatchWords int32 each
	n      int
	json   []byte
}

var batchListers = sync.Pool{New: func() any {
	l := new(batchLister)
	l.framer.Decode.Records = l.hook
	return l
}}

// hook lists the compressed magic-2 batches of one records field. A field that cannot be
// read ends the listing of that field: the decode call reports it.
func (l *batchLister) hook(dst []byte, recs []byte, _ func() string) ([]byte, error) {
	le := binary.LittleEndian
	for pos := 0; pos < len(recs); {
		size, magic, err := records.PeekEntry(recs[pos:])
		if err != nil || size == 0 {
			break
		}
		if magic == 2 {
			b, _, err := records.ParseBatch(recs[pos:pos+size], true)
			if c := b.Compression(); err == nil && c != records.CompressionNone && c <= records.CompressionZstd {
				if at := offsetIn(l.frame, b.Records); at >= 0 {
					l.list = le.AppendUint32(l.list, uint32(at))
					l.list = le.AppendUint32(l.list, uint32(len(b.Records)))
					l.list = le.AppendUint32(l.list, uint32(c))
					l.list = le.AppendUint32(l.list, uint32(b.NumRecords))
					l.n++
				}
			}
		}
		pos += size
	}
	return append(dst, "null"...), nil
}

// FrameCompressedBatches is kw_frame_compressed_batches: api_key -1 reads a request
// frame (its header names the api), else a response frame of that api and version.
func FrameCompressedBatches(dst []byte, frame []byte, apiKey, version int32) (out []byte, err error) {
	defer guard(&err)
	if apiKey != -1 {
		if e := checkAPI(apiKey, version, false); e != nil {
			return dst, e
		}
	}
	l := batchListers.Get().(*batchLister)
	l.frame, l.list, l.n = frame, l.list[:0], 0
	defer func() {
		l.frame = nil
		if cap(l.json) > 1<<20 {
			l.json = nil
		}
		batchListers.Put(l)
	}()
	if apiKey == -1 {
		l.json, err = l.framer.AppendRequestFrameJSON(l.json[:0], frame)
	} else {
		l.json, err = l.framer.AppendResponseFrameJSON(l.json[:0], frame, int16(apiKey), int16(version))
	}
	if err != nil {
		return dst, classify(err)
	}
	out = binary.LittleEndian.AppendUint32(reserve(dst, 4+len(l.list)), uint32(l.n))
	return append(out, l.list...), nil
}

// inflatedBatch is one batch a host decompressed: the offset in the frame of its
// compressed records section, and the decompressed bytes.
type inflatedBatch struct {
	at   int32
	data []byte
}

// readInflated checks and indexes kw_decode_frame_records_inflated's inflated input:
// int32 count, count pairs (frame offset, length) in increasing offset order, then the
// decompressed sections one after another.
func readInflated(dst []inflatedBatch, b []byte) ([]inflatedBatch, *Error) {
	bad := func(what string) *Error { return newErr(StatusArg, "kwire: inflated: "+what) }
	if len(b) < 4 {
		return dst, bad("needs at least 4 bytes (the batch count), have " + strconv.Itoa(len(b)))
	}
	le := binary.LittleEndian
	n := int32(le.Uint32(b))
	if n < 0 || int64(n) > int64(len(b)-4)/8 {
		return dst, bad("a count of " + decimal(n) + " does not fit in " + strconv.Itoa(len(b)) + " bytes")
	}
	data := b[4+8*int(n):]
	last := int32(-1)
	for i := 0; i < int(n); i++ {
		at, size := int32(le.Uint32(b[4+8*i:])), int32(le.Uint32(b[8+8*i:]))
		if at <= last {
			return dst, bad("batch " + strconv.Itoa(i) + ": offset " + decimal(at) + " is not after the previous one's")
		}
		if size < 0 || int(size) > len(data) {
			return dst, bad("batch " + strconv.Itoa(i) + ": " + decimal(size) + " bytes, " + strconv.Itoa(len(data)) + " left")
		}
		dst = append(dst, inflatedBatch{at: at, data: data[:size:size]})
		data, last = data[size:], at
	}
	if len(data) != 0 {
		return dst, bad(strconv.Itoa(len(data)) + " bytes after the last batch")
	}
	return dst, nil
}

// decompressed is the records.Options.Decompressed of a decode with inflated input.
func (t *frameTable) decompressed(compressed []byte) ([]byte, bool) {
	at := offsetIn(t.frame, compressed)
	if at < 0 {
		return nil, false
	}
	i := sort.Search(len(t.inflated), func(i int) bool { return t.inflated[i].at >= int32(at) })
	if i == len(t.inflated) || t.inflated[i].at != int32(at) {
		return nil, false
	}
	return t.inflated[i].data, true
}

// DecodeFrameRecordsInflated is kw_decode_frame_records_inflated: api_key -1 decodes a
// request frame as kw_decode_request_frame_records does, else a response frame as
// kw_decode_response_frame_records does, with the compressed batches found in inflated
// read from there.
func DecodeFrameRecordsInflated(dst []byte, frame []byte, apiKey, version, flags, maxDecompressed int32, inflated []byte) (out []byte, err error) {
	defer guard(&err)
	idx, e := readInflated(nil, inflated)
	if e != nil {
		return dst, e
	}
	if apiKey == -1 {
		return decodeRequestFrameRecords(dst, frame, flags, maxDecompressed, idx)
	}
	return decodeResponseFrameRecords(dst, frame, apiKey, version, flags, maxDecompressed, idx)
}
