//go:build wasm

package abi

// littleEndian: WebAssembly's memory is little-endian, as a record table is, so a column
// is its slice's memory (a constant here: the module carries no byte-by-byte path).
const littleEndian = true
