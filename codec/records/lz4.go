package records

import (
	"encoding/binary"
	"errors"
)

// Kafka compresses with the LZ4 frame format (magic 0x184D2204, a frame
// descriptor, blocks, an end mark). kwire reads and writes the frame itself.
// Blocks are decoded by kwire's own block decoder (lz4_block.go) straight into
// the one output buffer, a dependent block reading back into the frame's
// earlier output; they are compressed with pierrec/lz4's block compressor
// (lz4_encode.go).
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
		blockAt := pos
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
		base := len(dst)
		if !independent {
			// Matches may reach back into the frame's earlier output (the
			// 2-byte offset keeps them within 64 KiB of it).
			base = frameStart
		}
		k, err := decodeLZ4Block(dst[:len(dst)+room], base, len(dst), block)
		if err != nil {
			if errors.Is(err, errLZ4Short) {
				if room < blockMax {
					return dst, pos, detail(ErrTooLarge, "more than %d bytes", limit)
				}
				return dst, pos, detail(ErrCorrupt, "lz4: block at byte %d decodes to more than the frame's %d-byte block size", blockAt, blockMax)
			}
			return dst, pos, detail(ErrCorrupt, "lz4: block at byte %d: %v", blockAt, err)
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
