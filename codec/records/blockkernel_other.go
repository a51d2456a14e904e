//go:build !wasm || kwire_purego

package records

// Outside WebAssembly (and with kwire_purego) the block decoders are the
// plain-Go ones; blockkernel_wasm.go has the kernels.

// lz4Decode is lz4DecodeGeneric.
func lz4Decode(buf []byte, base, start int, src []byte) (int, error) {
	return lz4DecodeGeneric(buf, base, start, src)
}

// snappyDecode is snappyDecodeGeneric.
func snappyDecode(dst, src []byte, s int) error {
	return snappyDecodeGeneric(dst, src, s)
}
