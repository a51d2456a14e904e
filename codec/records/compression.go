package records

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compression is the codec in the low three bits of a batch's attributes.
type Compression int8

const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4 // magic 2 only
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionSnappy:
		return "snappy"
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	}
	return "compression(" + itoa(int64(c)) + ")"
}

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
		return gunzip(dst, src, limit)
	case CompressionSnappy:
		return unsnappy(dst, src, limit)
	case CompressionLZ4:
		return unlz4(dst, src, limit, magic == 0)
	case CompressionZstd:
		if magic < 2 {
			return dst, detail(ErrUnsupported, "zstd needs magic 2, have magic %d", magic)
		}
		return unzstd(dst, src, limit)
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
			return dst, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	}
}

type gzipDecoder struct {
	r  gzip.Reader
	br bytes.Reader
}

var gzipDecoders = codecPool{New: func() any { return new(gzipDecoder) }}

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	g := gzipDecoders.Get().(*gzipDecoder)
	defer func() {
		g.br.Reset(nil)
		gzipDecoders.Put(g)
	}()
	g.br.Reset(src)
	if err := g.r.Reset(&g.br); err != nil {
		return dst, detail(ErrCorrupt, "gzip: %v", err)
	}
	return readAllLimit(dst, &g.r, limit, 4*len(src))
}

// zstd decoders are pooled per limit, since the limit is a decoder option.
var (
	zstdMu    sync.Mutex
	zstdPools = map[int]*codecPool{}
)

// zstdPool returns the pool for a limit. Pools are kept per power of two, so
// callers passing many different limits do not make many pools; the exact limit
// is enforced on the output.
func zstdPool(limit int) *codecPool {
	limit = 1 << bits.Len(uint(limit-1))
	zstdMu.Lock()
	defer zstdMu.Unlock()
	p := zstdPools[limit]
	if p == nil {
		p = &codecPool{New: func() any {
			// Concurrency 1: DecodeAll then runs on the caller's goroutine and
			// starts none of its own, which wasip1 and js need.
			d, err := zstd.NewReader(nil,
				zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxMemory(uint64(limit)),
			)
			if err != nil {
				return err
			}
			return &zstdDecoder{d: d}
		}}
		zstdPools[limit] = p
	}
	return p
}

type zstdDecoder struct {
	d  *zstd.Decoder
	br bytes.Reader
}

func unzstd(dst, src []byte, limit int) ([]byte, error) {
	p := zstdPool(limit)
	v := p.Get()
	z, ok := v.(*zstdDecoder)
	if !ok {
		return dst, detail(ErrUnsupported, "zstd decoder: %v", v)
	}
	defer p.Put(z)
	out, err := unzstdWith(z, dst, src, limit)
	if err != nil {
		if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrCorrupt) {
			return dst, err
		}
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return dst, detail(ErrTooLarge, "more than %d bytes", limit)
		}
		if errors.Is(err, zstd.ErrWindowSizeExceeded) {
			// The decoder refuses a window larger than the limit, since it may
			// have to hold that much.
			return dst, detail(ErrTooLarge, "zstd window exceeds the %d-byte limit", limit)
		}
		return dst, detail(ErrCorrupt, "zstd: %v", err)
	}
	return out, nil
}

// unzstdWith decodes in one call when the frame header states the content
// size (into a buffer of exactly that size), and streams otherwise (Java's
// zstd-jni streams, so Kafka's frames usually do not state it), growing the
// output by doubling up to the limit.
func unzstdWith(z *zstdDecoder, dst, src []byte, limit int) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(src); err == nil && h.HasFCS && !h.Skippable {
		if h.FrameContentSize > uint64(limit) {
			return dst, detail(ErrTooLarge, "frame claims %d bytes, limit %d", h.FrameContentSize, limit)
		}
		if uint64(cap(dst)) < h.FrameContentSize {
			dst = make([]byte, 0, h.FrameContentSize)
		}
		out, err := z.d.DecodeAll(src, dst[:0])
		if err == nil && len(out) > limit {
			return dst, detail(ErrTooLarge, "more than %d bytes", limit)
		}
		return out, err
	}
	z.br.Reset(src)
	defer z.br.Reset(nil)
	if err := z.d.Reset(&z.br); err != nil {
		return dst, err
	}
	out, err := readAllLimit(dst, zstdStream{z.d}, limit, 4*len(src))
	if err != nil && !errors.Is(err, ErrTooLarge) {
		var e zstdErr
		if errors.As(err, &e) {
			return dst, e.err
		}
	}
	return out, err
}

// zstdStream keeps the decoder's own errors recognisable through readAllLimit.
type zstdStream struct{ d *zstd.Decoder }
type zstdErr struct{ err error }

func (e zstdErr) Error() string { return e.err.Error() }

func (s zstdStream) Read(p []byte) (int, error) {
	n, err := s.d.Read(p)
	if err != nil && err != io.EOF {
		return n, zstdErr{err}
	}
	return n, err
}

// ---- compression ----

// appendWriter is an io.Writer that appends to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

type gzipEncoder struct {
	w   *gzip.Writer
	out appendWriter
}

var (
	gzipEncMu    sync.Mutex
	gzipEncPools = map[int]*codecPool{}
)

func gzipEncPool(level int) *codecPool {
	gzipEncMu.Lock()
	defer gzipEncMu.Unlock()
	p := gzipEncPools[level]
	if p == nil {
		p = &codecPool{New: func() any {
			e := new(gzipEncoder)
			w, err := gzip.NewWriterLevel(&e.out, level)
			if err != nil {
				return err
			}
			e.w = w
			return e
		}}
		gzipEncPools[level] = p
	}
	return p
}

var (
	zstdEncMu    sync.Mutex
	zstdEncPools = map[zstd.EncoderLevel]*codecPool{}
)

// zstdEncPool returns the encoder pool for a zstd level, keyed by the few
// encoder levels the library maps zstd's levels onto.
func zstdEncPool(zlevel int) *codecPool {
	level := zstd.EncoderLevelFromZstd(zlevel)
	zstdEncMu.Lock()
	defer zstdEncMu.Unlock()
	p := zstdEncPools[level]
	if p == nil {
		p = &codecPool{New: func() any {
			e, err := zstd.NewWriter(nil,
				zstd.WithEncoderConcurrency(1),
				zstd.WithEncoderLevel(level),
				zstd.WithLowerEncoderMem(true),
			)
			if err != nil {
				return err
			}
			return e
		}}
		zstdEncPools[level] = p
	}
	return p
}

// compress appends the compressed form of src to dst. level 0 is the codec's
// default; otherwise it is the codec's own scale, as Kafka's compression.*.level
// settings use it (gzip 1-9, lz4 1-17, zstd -131072..22).
func compress(dst []byte, c Compression, src []byte, level int, magic int8, rawSnappy bool) ([]byte, error) {
	switch c {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionGzip:
		if level == 0 {
			level = gzip.DefaultCompression
		}
		if level < gzip.HuffmanOnly || level > gzip.BestCompression {
			return dst, detail(ErrUnsupported, "gzip level %d", level)
		}
		p := gzipEncPool(level)
		v := p.Get()
		e, ok := v.(*gzipEncoder)
		if !ok {
			return dst, detail(ErrUnsupported, "gzip encoder: %v", v)
		}
		e.out.b = dst
		e.w.Reset(&e.out)
		if _, err := e.w.Write(src); err != nil {
			return dst, err
		}
		if err := e.w.Close(); err != nil {
			return dst, err
		}
		dst = e.out.b
		e.out.b = nil
		p.Put(e)
		return dst, nil
	case CompressionSnappy:
		if rawSnappy {
			return appendSnappyBlock(dst, src, false), nil
		}
		return appendXerial(dst, src), nil
	case CompressionLZ4:
		return appendLZ4Frame(dst, src, level, magic == 0)
	case CompressionZstd:
		if magic < 2 {
			return dst, detail(ErrUnsupported, "zstd needs magic 2, have magic %d", magic)
		}
		if level == 0 {
			level = 3
		}
		p := zstdEncPool(level)
		v := p.Get()
		e, ok := v.(*zstd.Encoder)
		if !ok {
			return dst, detail(ErrUnsupported, "zstd encoder: %v", v)
		}
		dst = e.EncodeAll(src, dst)
		p.Put(e)
		return dst, nil
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
