//go:build wasm && !kwire_purego

package inflate

// In WebAssembly builds the fast decode loop runs in fast_wasm.s. Go's
// WebAssembly code pays for every call (copy is a call to the runtime's
// memmove), every taken branch and every bounds check; the kernel keeps the
// whole loop in one function, in locals, and copies matches with 8-byte moves,
// memory.copy and memory.fill.
//
// The kernel is fastCodesGeneric instruction for instruction in what it
// decodes: the same symbols, the same stopping points, the same state given
// back (TestFastKernelFuzz holds it to the twin). It decodes only what is
// well-formed and stops before anything else, so every error comes from the
// plain-Go loop in codes.

// fastCodesKernel is fastCodesGeneric in assembly.
//
//go:noescape
func fastCodesKernel(out, src []byte, st *fastState, lit, dist *[1 << fastBits]uint32, start int)

// kernelOff, set by the package's tests, runs the plain-Go loop instead.
var kernelOff bool

func fastCodes(out, src []byte, st *fastState, lit, dist *[1 << fastBits]uint32, start int) {
	if kernelOff {
		fastCodesGeneric(out, src, st, lit, dist, start)
		return
	}
	fastCodesKernel(out, src, st, lit, dist, start)
}
