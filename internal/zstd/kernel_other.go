//go:build !wasm || kwire_purego

package zstd

// Outside WebAssembly (and with kwire_purego) sequences and literal streams
// are decoded by the plain-Go code only; kernel_wasm.go has the kernels.

// sequences is sequencesGeneric.
func (d *Decoder) sequences(dst, lits, src []byte, nseq, at int) ([]byte, error) {
	return d.sequencesGeneric(dst, lits, src, nseq, at)
}

// huffStream is huffStreamGeneric.
func (d *Decoder) huffStream(out, src []byte) bool {
	return d.huffStreamGeneric(out, src)
}
