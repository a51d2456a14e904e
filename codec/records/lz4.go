package records

import (
	"encoding/binary"

	"github.com/pierrec/lz4/v4"
)

// Kafka compresses with the LZ4 frame format (magic 0x184D2204, a frame
// descriptor, blocks, an end mark). kwire reads and writes the frame itself and
// hands each block to pierrec/lz4's block codec, which decodes straight into the
// one output buffer.
//
// The legacy quirk: for magic 0 message sets Kafka computed the descriptor's
// header checksum over the 4 magic bytes as well as the descriptor, and its
// reader ignores the checksum for magic 0. kwire does the same: it writes the
// magic-0 checksum Kafka's way and does not check it on read; for magic 1 and 2
// the checksum is the standard one and is checked.

const (
	lz4Magic      = 0x184D2204
	lz4SkipMagic  = 0x184D2A50 // ..5F
	lz4BlockLimit = 64 << 10   // block size kwire writes, as Kafka does
	lz4Window     = 64 << 10
)

var lz4BlockSizes = [8]int{4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}

func unlz4(dst, src []byte, limit int, legacyChecksum bool) ([]byte, error) {
	pos := 0
	frames := 0
	for pos < len(src) || frames == 0 {
		var err error
		if len(src)-pos < 4 {
			return dst, detail(ErrCorrupt, "lz4: frame magic truncated at byte %d", pos)
		}
		m := binary.LittleEndian.Uint32(src[pos:])
		if m&0xFFFFFFF0 == lz4SkipMagic {
			if len(src)-pos < 8 {
				return dst, detail(ErrCorrupt, "lz4: skippable frame truncated at byte %d", pos)
			}
			n := int(binary.LittleEndian.Uint32(src[pos+4:]))
			if n < 0 || n > len(src)-pos-8 {
				return dst, detail(ErrCorrupt, "lz4: skippable frame of %d bytes at byte %d exceeds the input", n, pos)
			}
			pos += 8 + n
			frames++
			continue
		}
		if m != lz4Magic {
			return dst, detail(ErrCorrupt, "lz4: bad frame magic %#x at byte %d", m, pos)
		}
		if dst, pos, err = unlz4Frame(dst, src, pos, limit, legacyChecksum); err != nil {
			return dst, err
		}
		frames++
	}
	return dst, nil
}

func unlz4Frame(dst, src []byte, pos, limit int, legacyChecksum bool) ([]byte, int, error) {
	pos += 4
	if len(src)-pos < 3 {
		return dst, pos, detail(ErrCorrupt, "lz4: frame descriptor truncated at byte %d", pos)
	}
	flg, bd := src[pos], src[pos+1]
	if flg>>6 != 1 {
		return dst, pos, detail(ErrUnsupported, "lz4: frame version %d", flg>>6)
	}
	if flg&0x02 != 0 || bd&0x8F != 0 {
		return dst, pos, detail(ErrCorrupt, "lz4: reserved descriptor bits set (FLG %#x, BD %#x)", flg, bd)
	}
	independent := flg&0x20 != 0
	blockChecksum := flg&0x10 != 0
	hasSize := flg&0x08 != 0
	contentChecksum := flg&0x04 != 0
	if flg&0x01 != 0 {
		return dst, pos, detail(ErrUnsupported, "lz4: preset dictionary")
	}
	blockMax := lz4BlockSizes[(bd>>4)&7]
	if blockMax == 0 {
		return dst, pos, detail(ErrCorrupt, "lz4: block size code %d", (bd>>4)&7)
	}
	descLen := 2
	if hasSize {
		descLen += 8
	}
	if len(src)-pos < descLen+1 {
		return dst, pos, detail(ErrCorrupt, "lz4: frame descriptor truncated at byte %d", pos)
	}
	if hasSize {
		size := binary.LittleEndian.Uint64(src[pos+2:])
		if size > uint64(limit-len(dst)) {
			return dst, pos, detail(ErrTooLarge, "frame claims %d bytes, limit %d", size, limit)
		}
	}
	hc := src[pos+descLen]
	if !legacyChecksum {
		if want := byte(xxh32(src[pos:pos+descLen]) >> 8); hc != want {
			return dst, pos, detail(ErrCorrupt, "lz4: frame descriptor checksum %#x, want %#x", hc, want)
		}
	}
	pos += descLen + 1
	frameStart := len(dst)
	for {
		if len(src)-pos < 4 {
			return dst, pos, detail(ErrCorrupt, "lz4: block size truncated at byte %d", pos)
		}
		bs := binary.LittleEndian.Uint32(src[pos:])
		pos += 4
		if bs == 0 {
			break
		}
		stored := bs&0x80000000 != 0
		n := int(bs & 0x7FFFFFFF)
		if n > blockMax || n > len(src)-pos {
			return dst, pos - 4, detail(ErrCorrupt, "lz4: block of %d bytes at byte %d (block limit %d, %d bytes left)", n, pos-4, blockMax, len(src)-pos)
		}
		block := src[pos : pos+n]
		pos += n
		if blockChecksum {
			if len(src)-pos < 4 {
				return dst, pos, detail(ErrCorrupt, "lz4: block checksum truncated at byte %d", pos)
			}
			if got, want := binary.LittleEndian.Uint32(src[pos:]), xxh32(block); got != want {
				return dst, pos, detail(ErrCorrupt, "lz4: block checksum %#x, want %#x", got, want)
			}
			pos += 4
		}
		if stored {
			if n > limit-len(dst) {
				return dst, pos, detail(ErrTooLarge, "more than %d bytes", limit)
			}
			dst = append(dst, block...)
			continue
		}
		room := blockMax
		if r := limit + 1 - len(dst); r < room {
			room = r
		}
		var ok bool
		if dst, ok = growTo(dst, room, limit); !ok {
			return dst, pos, detail(ErrTooLarge, "more than %d bytes", limit)
		}
		out := dst[len(dst) : len(dst)+room]
		var k int
		var err error
		if independent || len(dst) == frameStart {
			k, err = lz4.UncompressBlock(block, out)
		} else {
			dict := dst[frameStart:]
			if len(dict) > lz4Window {
				dict = dict[len(dict)-lz4Window:]
			}
			k, err = lz4.UncompressBlockWithDict(block, out, dict)
		}
		if err != nil {
			if room < blockMax {
				// The block may simply not fit under the limit: tell which.
				tmp := make([]byte, blockMax)
				if _, err2 := lz4.UncompressBlock(block, tmp); err2 == nil || !independent {
					return dst, pos, detail(ErrTooLarge, "more than %d bytes", limit)
				}
			}
			return dst, pos, detail(ErrCorrupt, "lz4: block at byte %d: %v", pos-n, err)
		}
		dst = dst[:len(dst)+k]
		if len(dst) > limit {
			return dst, pos, detail(ErrTooLarge, "more than %d bytes", limit)
		}
	}
	if contentChecksum {
		if len(src)-pos < 4 {
			return dst, pos, detail(ErrCorrupt, "lz4: content checksum truncated at byte %d", pos)
		}
		if got, want := binary.LittleEndian.Uint32(src[pos:]), xxh32(dst[frameStart:]); got != want {
			return dst, pos, detail(ErrCorrupt, "lz4: content checksum %#x, want %#x", got, want)
		}
		pos += 4
	}
	return dst, pos, nil
}

var (
	lz4Fast = codecPool{New: func() any { return new(lz4.Compressor) }}
	lz4HC   = codecPool{New: func() any { return new(lz4.CompressorHC) }}
)

// appendLZ4Frame appends src as one LZ4 frame the way Kafka writes it:
// independent 64 KiB blocks, no block or content checksum, no content size.
// level 0-2 use the fast compressor; 3 and up the high-compression one (its
// search depth capped at level 9).
func appendLZ4Frame(dst, src []byte, level int, legacyChecksum bool) ([]byte, error) {
	hdr := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, lz4Magic)
	dst = append(dst, 0x60, 0x40) // version 01, independent blocks; 64 KiB blocks
	if legacyChecksum {
		dst = append(dst, byte(xxh32(dst[hdr:hdr+6])>>8))
	} else {
		dst = append(dst, byte(xxh32(dst[hdr+4:hdr+6])>>8))
	}
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
