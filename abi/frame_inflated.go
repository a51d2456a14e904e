package abi

import (
	"encoding/binary"
	"sort"
	"strconv"

	"github.com/kwire/kwire/codec/records"
)

// Host decompression (ABI 1.3). A host whose own zlib (or zstd) is faster than the
// module's names those codecs in the flags of kw_decode_*_frame_records
// (FlagHostGzip..FlagHostZstd). A frame with no batch of those codecs decodes as always,
// in one call. A frame with some returns, instead of a table, the list of its batches of
// those codecs (BatchListMagic); the host decompresses them and calls
// kw_decode_frame_records_inflated with the results, which reads them in place of its
// own decompression. Everything else is the same decode: each batch's checksum is still
// checked on its compressed bytes, the records are read from the decompressed bytes by
// the same code, and a batch the host left out is decompressed by the module. So records,
// errors and limits are those of the one-call decode, as long as the host hands back the
// exact decompressed bytes; a host that could not decompress a batch (corrupt, or past
// the cap) leaves it out, and the module's own decompressor gives the error it always
// gives.

// FlagHostGzip .. FlagHostZstd (KW_RECORDS_HOST_*): the codecs the host decompresses,
// bit 7+codec.
const (
	FlagHostGzip   = 1 << (7 + records.CompressionGzip)
	FlagHostSnappy = 1 << (7 + records.CompressionSnappy)
	FlagHostLZ4    = 1 << (7 + records.CompressionLZ4)
	FlagHostZstd   = 1 << (7 + records.CompressionZstd)
	flagsHost      = FlagHostGzip | FlagHostSnappy | FlagHostLZ4 | FlagHostZstd
)

// BatchListMagic opens the batch list a frame-records call returns in place of a
// table; CompressedBatchWords int32 words per entry follow the count: the offset in the
// frame of the batch's compressed records section, its length, the codec
// (KW_COMPRESSION_*) and the record count the batch header states.
const (
	BatchListMagic       = "KWCB"
	BatchListHeaderSize  = 8
	CompressedBatchWords = 4
)

// hostBatches appends to t.list the batches of recs that the host decompresses
// (magic 2, a codec in t.hostCodecs), and reports whether there was one. A batch or
// entry that cannot be read ends the listing of that field: the decode reports it.
func (t *frameTable) hostBatches(recs []byte) bool {
	le := binary.LittleEndian
	found := false
	for pos := 0; pos < len(recs); {
		size, magic, err := records.PeekEntry(recs[pos:])
		if err != nil || size == 0 {
			break
		}
		if magic == 2 {
			b, _, err := records.ParseBatch(recs[pos:pos+size], true)
			if c := b.Compression(); err == nil && c >= records.CompressionGzip && c <= records.CompressionZstd && t.hostCodecs&(1<<c) != 0 {
				if at := offsetIn(t.frame, b.Records); at >= 0 {
					t.list = le.AppendUint32(t.list, uint32(at))
					t.list = le.AppendUint32(t.list, uint32(len(b.Records)))
					t.list = le.AppendUint32(t.list, uint32(c))
					t.list = le.AppendUint32(t.list, uint32(b.NumRecords))
					t.nlist++
					found = true
				}
			}
		}
		pos += size
	}
	return found
}

// batchList is the output of a call that found batches for the host: the magic, the
// count, the entries.
func (t *frameTable) batchList(dst []byte) []byte {
	out := append(reserve(dst, BatchListHeaderSize+len(t.list)), BatchListMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(t.nlist))
	return append(out, t.list...)
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
// read from there. It never returns a batch list: the FlagHost* flags are ignored.
func DecodeFrameRecordsInflated(dst []byte, frame []byte, apiKey, version, flags, maxDecompressed int32, inflated []byte) (out []byte, err error) {
	defer guard(&err)
	idx, e := readInflated(nil, inflated)
	if e != nil {
		return dst, e
	}
	if idx == nil {
		idx = []inflatedBatch{} // not nil: no batch list, whatever the flags
	}
	if apiKey == -1 {
		return decodeRequestFrameRecords(dst, frame, flags, maxDecompressed, idx)
	}
	return decodeResponseFrameRecords(dst, frame, apiKey, version, flags, maxDecompressed, idx)
}
