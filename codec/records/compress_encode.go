//go:build !kwire_nocompress && !wasm && !kwire_ownenc

package records

import (
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// appendWriter is an io.Writer that appends to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// ownEncoders tells whether this build compresses with kwire's own encoders
// (compress_own.go): not native builds, which use the libraries.
const ownEncoders = false

type gzipEncoder struct {
	w   *gzip.Writer
	out appendWriter
}

var gzipEncPools poolMap[int]

func gzipEncPool(level int) *codecPool { return gzipEncPools.get(level, newGzipEncoder) }

func newGzipEncoder(level int) any {
	e := new(gzipEncoder)
	w, err := gzip.NewWriterLevel(&e.out, level)
	if err != nil {
		return err
	}
	e.w = w
	return e
}

var zstdEncPools poolMap[zstd.EncoderLevel]

// zstdEncPool returns the encoder pool for a zstd level, keyed by the few
// encoder levels the library maps zstd's levels onto.
func zstdEncPool(zlevel int) *codecPool {
	return zstdEncPools.get(zstd.EncoderLevelFromZstd(zlevel), newZstdEncoder)
}

func newZstdEncoder(level zstd.EncoderLevel) any {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(level),
		zstd.WithLowerEncoderMem(true),
	)
	if err != nil {
		return err
	}
	return e
}

// haveCompressors tells whether this build has the compressors.
const haveCompressors = true

// encode appends src compressed with c (gzip, snappy, lz4 or zstd; compress
// has checked the magic) to dst.
func encode(dst []byte, c Compression, src []byte, level int, magic int8, rawSnappy bool) ([]byte, error) {
	switch c {
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
		return appendSnappy(dst, src, rawSnappy), nil
	case CompressionLZ4:
		return appendLZ4Frame(dst, src, level, magic == 0)
	case CompressionZstd:
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
