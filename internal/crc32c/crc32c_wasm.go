//go:build wasm && !kwire_purego

package crc32c

// updateKernel is updateGeneric in WebAssembly (crc32c_wasm.s), without the
// inversions: crc is the register (the inverted checksum), t the tables; it
// returns the register.
//
//go:noescape
func updateKernel(crc uint32, b []byte, t *slicing16) uint32

// update is Update: the kernel.
func update(crc uint32, b []byte) uint32 { return ^updateKernel(^crc, b, &tab) }

// updateIEEE is the kernel over the IEEE polynomial's tables.
func updateIEEE(crc uint32, b []byte) uint32 { return ^updateKernel(^crc, b, ieeeTables()) }
