//go:build !wasm

package abi

import "encoding/binary"

// littleEndian: the host's integers are laid out as a record table's, so a column is
// its slice's memory; otherwise columns are written integer by integer.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1
