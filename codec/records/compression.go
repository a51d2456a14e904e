package records

import (
	"github.com/kwire/kwire/internal/proto"
	"io"
)

// Compression is the codec in the low three bits of a batch's attributes.
type Compression int8

// The compression codecs, as the low three attribute bits number them.
const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4 // magic 2 only
)

// String is the codec's name: none, gzip, snappy, lz4, zstd.
func (c Compression) String() string {
	return proto.EnumString(compressionNames[:], 0, int(c), "compression")
}

// compressionNames are the names of the codecs from CompressionNone (0) up.
var compressionNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// DefaultMaxDecompressedSize caps what one compressed batch (or legacy wrapper)
// may decompress to unless Options.MaxDecompressedSize says otherwise. It equals
// the default frame limit (100 MiB, Kafka's socket.request.max.bytes): a
// decompressed batch never needs more than one frame's worth of memory.
const DefaultMaxDecompressedSize = 100 << 20

// ---- decompression ----

// decompress appends the decompressed form of src to dst[:0] and returns it.
// It never holds more than limit+1 bytes of output; past limit it fails with
// ErrTooLarge. magic selects Kafka's legacy LZ4 header-checksum rule.
func decompress(dst []byte, c Compression, src []byte, limit int, magic int8) ([]byte, error) {
	dst = dst[:0]
	switch c {
	case CompressionNone:
		if len(src) > limit {
			return dst, detail(ErrTooLarge, "more than %d bytes", limit)
		}
		return append(dst, src...), nil
	case CompressionGzip:
		return decodeGzip(dst, src, limit)
	case CompressionSnappy:
		return unsnappy(dst, src, limit)
	case CompressionLZ4:
		return unlz4(dst, src, limit, magic == 0)
	case CompressionZstd:
		if magic < 2 {
			return dst, detail(ErrUnsupported, "zstd needs magic 2, have magic %d", magic)
		}
		return decodeZstd(dst, src, limit)
	}
	return dst, detail(ErrUnsupported, "compression codec %d", int(c))
}

// growTo makes room for at least need more bytes without exceeding limit+1 total
// capacity; it reports false when the limit is already reached.
func growTo(dst []byte, need, limit int) ([]byte, bool) {
	if cap(dst)-len(dst) >= need {
		return dst, true
	}
	if cap(dst) > limit {
		return dst, false
	}
	c := 2 * cap(dst)
	if c < len(dst)+need {
		c = len(dst) + need
	}
	if c < 4096 {
		c = 4096
	}
	if c >= limit {
		// One more doubling would pass the limit: go straight to limit+1 (the
		// extra byte tells "exactly at the limit" from "past it").
		c = limit + 1
	}
	if c-len(dst) <= 0 {
		return dst, false
	}
	nd := make([]byte, len(dst), c)
	copy(nd, dst)
	return nd, true
}

// readAllLimit reads r to its end into dst, failing once more than limit bytes
// have been produced.
func readAllLimit(dst []byte, r io.Reader, limit int, hint int) ([]byte, error) {
	if cap(dst) == 0 {
		dst, _ = growTo(dst, hint, limit)
	}
	for {
		if len(dst) == cap(dst) {
			var ok bool
			if dst, ok = growTo(dst, 1, limit); !ok {
				return dst, detail(ErrTooLarge, "more than %d bytes", limit)
			}
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst, detail(ErrTooLarge, "more than %d bytes", limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, detail(ErrCorrupt, "%v", err)
		}
	}
}

// compress appends the compressed form of src to dst. level 0 is the codec's
// default; otherwise it is the codec's own scale, as Kafka's compression.*.level
// settings use it (gzip 1-9, lz4 1-17, zstd -131072..22). A build with the
// kwire_nocompress tag has no compressors: every codec but none fails with
// ErrUnsupported.
func compress(dst []byte, c Compression, src []byte, level int, magic int8, rawSnappy bool) ([]byte, error) {
	switch c {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionGzip, CompressionSnappy, CompressionLZ4:
		return encode(dst, c, src, level, magic, rawSnappy)
	case CompressionZstd:
		if magic < 2 {
			return dst, detail(ErrUnsupported, "zstd needs magic 2, have magic %d", magic)
		}
		return encode(dst, c, src, level, magic, rawSnappy)
	}
	return dst, detail(ErrUnsupported, "compression codec %d", int(c))
}

func itoa(v int64) string {
	var b [20]byte
	i := len(b)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Compress appends src compressed with c, as a magic 2 batch carries it, to dst.
// level 0 is the codec's default (see Encoder.Level).
func Compress(dst []byte, c Compression, src []byte, level int) ([]byte, error) {
	return compress(dst, c, src, level, 2, false)
}

// Decompress appends the decompressed form of src (compressed with c, as a magic
// 2 batch carries it) to dst, reusing dst's capacity. It fails with ErrTooLarge
// past limit bytes (0: DefaultMaxDecompressedSize), holding at most about limit
// bytes while it tries.
//
// Unlike append, it may also write scratch bytes into dst's spare capacity past
// the end of the result (the decoders copy in 8- and 16-byte steps), so the
// capacity of dst must not be shared with anything the caller still needs.
func Decompress(dst []byte, c Compression, src []byte, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxDecompressedSize
	}
	out, err := decompress(dst[len(dst):], c, src, limit, 2)
	if err != nil {
		return dst, err
	}
	if len(dst) == 0 {
		return out, nil
	}
	return append(dst, out...), nil
}
