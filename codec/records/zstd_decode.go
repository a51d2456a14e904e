package records

import (
	"bytes"
	"errors"
	"io"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/zstd"
)

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
