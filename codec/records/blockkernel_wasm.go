//go:build wasm && !kwire_purego

package records

// In WebAssembly builds the LZ4 and snappy block decoders run their loops in
// blockkernel_wasm.s. Go's WebAssembly code pays for every taken branch and
// every call (copy is a call to the runtime's memmove); the kernels keep the
// whole block in one function, copy short runs with 8-byte moves and long ones
// with memory.copy / memory.fill.
//
// A kernel decodes a block only when all of it is well-formed, and otherwise
// says so without an error of its own: lz4DecodeGeneric and
// snappyDecodeGeneric then decode the block again, so what is accepted, the
// bytes decoded and every error with its byte offset are the plain-Go
// decoders' in every build.

// lz4DecodeKernel decodes the block src into buf[start:] as lz4DecodeGeneric
// does (base <= start <= len(buf), len(src) > 0) and returns how many bytes it
// wrote, or -1, having written only within buf[start:], when the block is
// truncated, has a bad offset or a bad end, or does not fit in buf.
//
//go:noescape
func lz4DecodeKernel(buf []byte, base, start int, src []byte) int

// snappyDecodeKernel decodes the elements src[s:] into dst as
// snappyDecodeGeneric does (s <= len(src)) and reports whether they were
// well-formed and filled dst exactly; it writes only within dst[:cap(dst)],
// at most 15 bytes past len(dst).
//
//go:noescape
func snappyDecodeKernel(dst, src []byte, s int) bool

// When set (by the package's tests), these see every block a kernel decoded
// or refused, with what it returned, to check it against the plain-Go decoder.
var (
	lz4KernelHook    func(buf []byte, base, start int, src []byte, n int)
	snappyKernelHook func(dst, src []byte, s int, ok bool)
)

// lz4Decode is lz4DecodeGeneric, by the kernel where the block is well-formed.
func lz4Decode(buf []byte, base, start int, src []byte) (int, error) {
	if len(src) > 0 {
		n := lz4DecodeKernel(buf, base, start, src)
		if lz4KernelHook != nil {
			lz4KernelHook(buf, base, start, src, n)
		}
		if n >= 0 {
			return n, nil
		}
	}
	return lz4DecodeGeneric(buf, base, start, src)
}

// snappyDecode is snappyDecodeGeneric, by the kernel where the block is
// well-formed.
func snappyDecode(dst, src []byte, s int) error {
	ok := snappyDecodeKernel(dst, src, s)
	if snappyKernelHook != nil {
		snappyKernelHook(dst, src, s, ok)
	}
	if ok {
		return nil
	}
	return snappyDecodeGeneric(dst, src, s)
}
