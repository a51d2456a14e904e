//go:build !kwire_nocompress && !wasm && !kwire_ownenc

package records

import (
	"encoding/binary"

	"github.com/pierrec/lz4/v4"
)

var (
	lz4Fast = codecPool{New: func() any { return new(lz4.Compressor) }}
	lz4HC   = codecPool{New: func() any { return new(lz4.CompressorHC) }}
)

// appendLZ4Frame appends src as one LZ4 frame the way Kafka writes it:
// independent 64 KiB blocks, no block or content checksum, no content size.
// level 0-2 use the fast compressor; 3 and up the high-compression one (its
// search depth capped at level 9).
func appendLZ4Frame(dst, src []byte, level int, legacyChecksum bool) ([]byte, error) {
	dst = appendLZ4Header(dst, legacyChecksum)
	var fast *lz4.Compressor
	var hc *lz4.CompressorHC
	if level <= 2 {
		fast = lz4Fast.Get().(*lz4.Compressor)
		defer lz4Fast.Put(fast)
	} else {
		hc = lz4HC.Get().(*lz4.CompressorHC)
		defer lz4HC.Put(hc)
		if level > 9 {
			level = 9
		}
		hc.Level = lz4.CompressionLevel(1 << (8 + level))
	}
	bound := lz4.CompressBlockBound(lz4BlockLimit)
	for len(src) > 0 {
		block := src
		if len(block) > lz4BlockLimit {
			block = block[:lz4BlockLimit]
		}
		src = src[len(block):]
		if cap(dst)-len(dst) < 4+bound {
			nd := make([]byte, len(dst), 2*cap(dst)+4+bound)
			copy(nd, dst)
			dst = nd
		}
		at := len(dst)
		dst = dst[:at+4]
		// A destination of the full bound keeps the compressor on its fast path;
		// a block that does not shrink is stored as is.
		out := dst[at+4 : at+4+bound]
		var n int
		var err error
		if fast != nil {
			n, err = fast.CompressBlock(block, out)
		} else {
			n, err = hc.CompressBlock(block, out)
		}
		if err != nil || n == 0 || n >= len(block) {
			binary.LittleEndian.PutUint32(dst[at:], uint32(len(block))|0x80000000)
			dst = append(dst, block...)
			continue
		}
		binary.LittleEndian.PutUint32(dst[at:], uint32(n))
		dst = dst[:at+4+n]
	}
	return binary.LittleEndian.AppendUint32(dst, 0), nil
}
