//go:build !kwire_nocompress

package records

import (
	"encoding/binary"

	"github.com/kwire/kwire/internal/deflate"
	"github.com/kwire/kwire/internal/lz4enc"
	"github.com/kwire/kwire/internal/zstd"
)

// kwire's own encoders, the ones WebAssembly builds (and native builds with the
// tag kwire_ownenc) compress with: they are small where the libraries are not
// (klauspost/compress's and pierrec/lz4's encoders link fmt, reflect, log, time
// and crypto into a module). Native builds compress with the libraries
// (compress_encode.go), for their assembly; this code is compiled there too,
// so that native tests check it against the libraries' decoders.
//
//   - gzip: internal/deflate, one level (the standard library's writer
//     would link fmt, and reflect with it);
//   - LZ4: kwire's LZ4 frame writer around internal/lz4enc, one level;
//   - zstd: internal/zstd's encoder, one level;
//   - snappy: kwire's own block encoder, as in every build.

var (
	ownGzip = codecPool{New: func() any { return new(deflate.Encoder) }}
	ownLZ4  = codecPool{New: func() any { return new(lz4enc.Encoder) }}
	ownZstd = codecPool{New: func() any { return new(zstd.Encoder) }}
)

// encodeOwn appends src compressed with c by kwire's own encoders to dst.
// Each codec has one level, which every level asks for (gzip's must still be
// one of gzip's, -2 to 9).
func encodeOwn(dst []byte, c Compression, src []byte, level int, magic int8, rawSnappy bool) ([]byte, error) {
	switch c {
	case CompressionGzip:
		if level < -2 || level > 9 {
			return dst, detail(ErrUnsupported, "gzip level %d", level)
		}
		z := ownGzip.Get().(*deflate.Encoder)
		dst = z.AppendGzip(dst, src)
		ownGzip.Put(z)
		return dst, nil
	case CompressionSnappy:
		return appendSnappy(dst, src, rawSnappy), nil
	case CompressionLZ4:
		return appendLZ4FrameOwn(dst, src, magic == 0), nil
	case CompressionZstd:
		z := ownZstd.Get().(*zstd.Encoder)
		dst = z.EncodeAll(dst, src)
		ownZstd.Put(z)
		return dst, nil
	}
	return dst, detail(ErrUnsupported, "compression codec %d", int(c))
}

// appendLZ4Header appends an LZ4 frame's magic and descriptor as Kafka writes
// them: independent 64 KiB blocks, no block or content checksum, no content
// size; for magic 0 the header checksum is Kafka's legacy one, taken over the
// frame magic as well.
func appendLZ4Header(dst []byte, legacyChecksum bool) []byte {
	hdr := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, lz4Magic)
	dst = append(dst, 0x60, 0x40) // version 01, independent blocks; 64 KiB blocks
	if legacyChecksum {
		return append(dst, byte(xxh32(dst[hdr:hdr+6])>>8))
	}
	return append(dst, byte(xxh32(dst[hdr+4:hdr+6])>>8))
}

// appendLZ4FrameOwn appends src as one LZ4 frame, its blocks compressed by
// lz4enc; a block that does not shrink is stored as is.
func appendLZ4FrameOwn(dst, src []byte, legacyChecksum bool) []byte {
	dst = appendLZ4Header(dst, legacyChecksum)
	e := ownLZ4.Get().(*lz4enc.Encoder)
	defer ownLZ4.Put(e)
	for len(src) > 0 {
		block := src[:min(len(src), lz4BlockLimit)]
		src = src[len(block):]
		at := len(dst)
		dst = e.AppendBlock(append(dst, 0, 0, 0, 0), block)
		if n := len(dst) - at - 4; n < len(block) {
			binary.LittleEndian.PutUint32(dst[at:], uint32(n))
			continue
		}
		dst = append(dst[:at], 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(dst[at:], uint32(len(block))|0x80000000)
		dst = append(dst, block...)
	}
	return binary.LittleEndian.AppendUint32(dst, 0)
}
