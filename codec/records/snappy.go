package records

import (
	"bytes"
)

// Kafka's Java clients write snappy through snappy-java's stream format
// ("xerial" framing): an 8-byte magic, two 4-byte fields (version and
// minimum-compatible version, big-endian 1 and 1 as snappy-java writes them; some
// brokers write them little-endian, so their values are not checked), then chunks
// of a 4-byte big-endian length and a raw snappy block. Other clients send one raw
// snappy block with no framing. Both are read; xerial framing is written.
// The block codec is kwire's own (snappy_block.go, snappy_encode.go).

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16
	xerialChunk     = 32 << 10 // snappy-java's default block size
	// A snappy block expands at most ~22x (a 3-byte copy of 64 bytes); a claim
	// beyond this bound is corrupt, and is refused before allocating.
	snappyMaxRatio = 24
)

func isXerial(src []byte) bool {
	return len(src) >= xerialHeaderLen && bytes.Equal(src[:8], xerialMagic)
}

func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if !isXerial(src) {
		return unsnappyBlock(dst, src, limit)
	}
	pos := xerialHeaderLen
	for pos < len(src) {
		if len(src)-pos < 4 {
			return dst, detail(ErrCorrupt, "snappy: xerial chunk length truncated at byte %d", pos)
		}
		n := int(be.Uint32(src[pos:]))
		pos += 4
		if n < 0 || n > len(src)-pos {
			return dst, detail(ErrCorrupt, "snappy: xerial chunk of %d bytes at byte %d exceeds the input", n, pos-4)
		}
		var err error
		if dst, err = unsnappyBlock(dst, src[pos:pos+n], limit); err != nil {
			return dst, err
		}
		pos += n
	}
	return dst, nil
}

// unsnappyBlock appends one raw snappy block to dst. The declared length is
// checked against the limit and against what the block could possibly expand
// to before any memory is allocated for it.
func unsnappyBlock(dst, src []byte, limit int) ([]byte, error) {
	n, hdr, err := snappyHeader(src)
	if err != nil {
		return dst, detail(ErrCorrupt, "%v", err)
	}
	if n > limit-len(dst) {
		return dst, detail(ErrTooLarge, "more than %d bytes", limit)
	}
	if n > snappyMaxRatio*len(src)+32 {
		return dst, detail(ErrCorrupt, "snappy: block of %d bytes claims %d decoded bytes", len(src), n)
	}
	var ok bool
	if dst, ok = growTo(dst, n, limit); !ok {
		return dst, detail(ErrTooLarge, "more than %d bytes", limit)
	}
	if err := snappyDecode(dst[len(dst):len(dst)+n], src, hdr); err != nil {
		return dst, detail(ErrCorrupt, "%v", err)
	}
	return dst[:len(dst)+n], nil
}
