//go:build !wasm && !kwire_nocompress

package records

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/bits"
	"sync"

	kgzip "github.com/klauspost/compress/gzip"
	kzstd "github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Native builds decode gzip, zstd and LZ4 blocks with github.com/klauspost/compress
// and github.com/pierrec/lz4 first: on amd64 and arm64 they run assembly, two to four
// times faster than kwire's own decoders. Those stay the reference: when a library
// refuses an input, kwire's own decoder decodes it again, so what is accepted and the
// error an input gets are the same in every build (the WebAssembly ones decode with
// kwire's own decoders only). The fuzz targets compare the two on corrupted inputs.

func decodeGzip(dst, src []byte, limit int) ([]byte, error) {
	g := gzipDecoders.Get().(*gzipDecoder)
	defer gzipDecoders.Put(g)
	out, err := readGzip(&g.fast, &g.br, dst, src, limit)
	if err == nil {
		return out, nil
	}
	return readGzip(&g.std, &g.br, reuse(dst, out), src, limit)
}

func decodeZstd(dst, src []byte, limit int) ([]byte, error) {
	out, err := unzstdFast(dst, src, limit)
	if err == nil {
		return out, nil
	}
	return unzstd(reuse(dst, out), src, limit)
}

// reuse is the buffer the second decoder starts from after the first failed: the
// first one's output buffer when it grew one (so a decompression bomb costs its
// limit once, not twice), else dst. Both start empty (decompress passes dst[:0]).
func reuse(dst, failed []byte) []byte {
	if cap(failed) > cap(dst) {
		return failed[:0]
	}
	return dst
}

func decodeLZ4Block(buf []byte, base, start int, src []byte) (int, error) {
	out := buf[start:]
	var k int
	var err error
	if len(src) == 0 {
		return lz4Decode(buf, base, start, src)
	}
	if base == start {
		k, err = lz4.UncompressBlock(src, out)
	} else {
		dict := buf[base:start]
		if len(dict) > 64<<10 {
			dict = dict[len(dict)-64<<10:]
		}
		k, err = lz4.UncompressBlockWithDict(src, out, dict)
	}
	if err != nil {
		return lz4Decode(buf, base, start, src)
	}
	return k, nil
}

// gzipDecoder holds the two gzip readers, pooled: klauspost/compress's, tried
// first, and the standard library's, which decodes again what the first
// refuses. Like Kafka's Java reader they read concatenated gzip members as one
// stream; bytes after the last member that do not start another are corrupt.
type gzipDecoder struct {
	fast kgzip.Reader
	std  gzip.Reader
	br   bytes.Reader
}

var gzipDecoders = codecPool{New: func() any { return new(gzipDecoder) }}

// gzipReader is what both gzip readers (the standard library's and
// klauspost/compress's) offer.
type gzipReader interface {
	io.Reader
	Reset(io.Reader) error
	Multistream(bool)
}

// readGzip decodes src's concatenated gzip members with r, which reads src
// through br.
func readGzip(r gzipReader, br *bytes.Reader, dst, src []byte, limit int) ([]byte, error) {
	br.Reset(src)
	defer br.Reset(nil)
	if err := r.Reset(br); err != nil {
		return dst, detail(ErrCorrupt, "gzip: %v", err)
	}
	r.Multistream(true)
	return readAllLimit(dst, r, limit, 4*len(src))
}

// zstd decoders are pooled per limit (rounded up to a power of two), since the limit
// is a decoder option; the exact limit is enforced on the output.
var zstdFastPools poolMap[int]

func zstdFastPool(limit int) *codecPool {
	return zstdFastPools.get(1<<bits.Len(uint(limit-1)), newZstdFastDecoder)
}

func newZstdFastDecoder(limit int) any {
	// Concurrency 1: DecodeAll runs on the caller's goroutine and starts none
	// of its own.
	d, err := kzstd.NewReader(nil,
		kzstd.WithDecoderConcurrency(1),
		kzstd.WithDecoderLowmem(true),
		kzstd.WithDecoderMaxMemory(uint64(limit)),
	)
	if err != nil {
		return err
	}
	return &zstdFastDecoder{d: d}
}

// poolMap is a set of codec pools, one per key (a level, a limit), each made
// when first asked for.
type poolMap[K comparable] struct {
	mu    sync.Mutex
	pools map[K]*codecPool
}

// get returns the pool of key k, whose codecs newCodec(k) makes.
func (m *poolMap[K]) get(k K, newCodec func(K) any) *codecPool {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pools[k]
	if p == nil {
		p = &codecPool{New: func() any { return newCodec(k) }}
		if m.pools == nil {
			m.pools = map[K]*codecPool{}
		}
		m.pools[k] = p
	}
	return p
}

type zstdFastDecoder struct {
	d  *kzstd.Decoder
	br bytes.Reader
}

var errZstdFast = errors.New("zstd: left to kwire's decoder")

// unzstdFast decodes in one call when the frame header states the content size
// (into a buffer of that size), and streams otherwise (Java's zstd-jni streams, so
// Kafka's frames usually do not state it), growing the output by doubling up to the
// limit. Any failure is left to unzstd.
func unzstdFast(dst, src []byte, limit int) ([]byte, error) {
	p := zstdFastPool(limit)
	z, ok := p.Get().(*zstdFastDecoder)
	if !ok {
		return dst, errZstdFast
	}
	defer p.Put(z)
	var h kzstd.Header
	if err := h.Decode(src); err == nil && h.HasFCS && !h.Skippable {
		if h.FrameContentSize > uint64(limit) {
			return dst, errZstdFast
		}
		if uint64(cap(dst)) < h.FrameContentSize {
			dst = make([]byte, 0, h.FrameContentSize)
		}
		out, err := z.d.DecodeAll(src, dst[:0])
		if err != nil || len(out) > limit {
			return dst, errZstdFast
		}
		return out, nil
	}
	z.br.Reset(src)
	defer z.br.Reset(nil)
	if err := z.d.Reset(&z.br); err != nil {
		return dst, err
	}
	return readAllLimit(dst, zstdStream{z.d}, limit, 4*len(src))
}

type zstdStream struct{ d *kzstd.Decoder }

func (s zstdStream) Read(p []byte) (int, error) { return s.d.Read(p) }

var _ io.Reader = zstdStream{}

// gunzip decodes with the standard library's reader alone.
func gunzip(dst, src []byte, limit int) ([]byte, error) {
	g := gzipDecoders.Get().(*gzipDecoder)
	defer gzipDecoders.Put(g)
	return readGzip(&g.std, &g.br, dst, src, limit)
}
