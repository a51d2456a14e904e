//go:build !wasm || kwire_purego

package inflate

// Outside WebAssembly (and with kwire_purego) the fast decode loop is the
// plain-Go one; fast_wasm.go has the kernel.

func fastCodes(out, src []byte, st *fastState, lit, dist *[1 << fastBits]uint32, start int) {
	fastCodesGeneric(out, src, st, lit, dist, start)
}
