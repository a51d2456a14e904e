//go:build !wasm || kwire_purego

package crc32c

import "hash/crc32"

// castagnoli is hash/crc32's table; passing it to crc32.Update selects the
// CPU's CRC instructions where hash/crc32 has them.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// update is Update: hash/crc32.
func update(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// updateIEEE is hash/crc32's, which uses the CPU's instructions where it has them.
func updateIEEE(crc uint32, b []byte) uint32 { return crc32.Update(crc, crc32.IEEETable, b) }
