package records

import (
	"bytes"

	"github.com/klauspost/compress/snappy"
)

// Kafka's Java clients write snappy through snappy-java's stream format
// ("xerial" framing): an 8-byte magic, two 4-byte fields (version and
// minimum-compatible version, big-endian 1 and 1 as snappy-java writes them; some
// brokers write them little-endian, so their values are not checked), then chunks
// of a 4-byte big-endian length and a raw snappy block. Other clients send one raw
// snappy block with no framing. Both are read; xerial framing is written.

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

// unsnappyBlock appends one raw snappy block to dst.
func unsnappyBlock(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, detail(ErrCorrupt, "snappy: %v", err)
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
	out, err := snappy.DecodeStrict(dst[len(dst):len(dst)+n], src)
	if err != nil {
		return dst, detail(ErrCorrupt, "snappy: %v", err)
	}
	if len(out) != n {
		return dst, detail(ErrCorrupt, "snappy: decoded %d bytes, header says %d", len(out), n)
	}
	return dst[:len(dst)+n], nil
}

// appendXerial appends src compressed with snappy in xerial framing.
func appendXerial(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = append(dst, 0, 0, 0, 1, 0, 0, 0, 1)
	for len(src) > 0 {
		chunk := src
		if len(chunk) > xerialChunk {
			chunk = chunk[:xerialChunk]
		}
		src = src[len(chunk):]
		dst = appendSnappyBlock(dst, chunk, true)
	}
	return dst
}

// appendSnappyBlock appends one raw snappy block, with a 4-byte big-endian length
// before it when framed.
func appendSnappyBlock(dst, src []byte, framed bool) []byte {
	hdr := 0
	if framed {
		hdr = 4
	}
	need := hdr + snappy.MaxEncodedLen(len(src))
	if cap(dst)-len(dst) < need {
		nd := make([]byte, len(dst), 2*cap(dst)+need)
		copy(nd, dst)
		dst = nd
	}
	start := len(dst)
	enc := snappy.Encode(dst[start+hdr:start+need], src)
	dst = dst[:start+hdr]
	if framed {
		be.PutUint32(dst[start:], uint32(len(enc)))
	}
	return dst[:start+hdr+len(enc)]
}
