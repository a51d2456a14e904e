package wire

// Varint reads a zigzag varint of at most 5 bytes (Kafka's int32 varint)
// starting at b[pos]. ok is false when the input ends or the varint is too long.
func Varint(b []byte, pos int) (v int32, next int, ok bool) {
	if pos < len(b) {
		c := b[pos]
		if c < 0x80 {
			return int32(c>>1) ^ -int32(c&1), pos + 1, true
		}
	}
	var x uint32
	var shift uint
	for i := 0; i < 5; i++ {
		if pos >= len(b) {
			return 0, pos, false
		}
		c := b[pos]
		pos++
		x |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return int32(x>>1) ^ -int32(x&1), pos, true
		}
		shift += 7
	}
	return 0, pos, false
}

// Varlong reads a zigzag varint of at most 10 bytes (Kafka's int64 varlong) starting
// at b[pos]. ok is false when the input ends or the varlong is too long.
func Varlong(b []byte, pos int) (v int64, next int, ok bool) {
	if pos < len(b) {
		c := b[pos]
		if c < 0x80 {
			return int64(c>>1) ^ -int64(c&1), pos + 1, true
		}
	}
	var x uint64
	var shift uint
	for i := 0; i < 10; i++ {
		if pos >= len(b) {
			return 0, pos, false
		}
		c := b[pos]
		pos++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(x>>1) ^ -int64(x&1), pos, true
		}
		shift += 7
	}
	return 0, pos, false
}
