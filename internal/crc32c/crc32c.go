// Package crc32c computes CRC-32C, the checksum with the Castagnoli polynomial
// that Kafka's magic 2 record batches carry. Its results are those of
// hash/crc32 with crc32.MakeTable(crc32.Castagnoli). ChecksumIEEE computes the
// CRC-32 of gzip trailers (and of Kafka's magic 0 and 1 messages) the same
// way, over tables of the IEEE polynomial.
//
// Natively the package hands the work to hash/crc32, which uses the CPU's CRC
// instructions. In the WebAssembly build a hand-written kernel (crc32c_wasm.s)
// runs slicing-by-16 over the tables below; the build tag kwire_purego turns
// it off, and hash/crc32 then does the work there too. updateGeneric is the
// same algorithm in plain Go, present in every build as the kernel's
// reference.
package crc32c

import (
	"encoding/binary"
	"sync"
)

// poly is the Castagnoli polynomial in reversed (LSB-first) form, the value of
// crc32.Castagnoli; ieeePoly likewise crc32.IEEE.
const (
	poly     = 0x82f63b78
	ieeePoly = 0xedb88320
)

// slicing16 holds the slicing-by-16 tables: t[k][v] is the CRC register after
// the byte v followed by k zero bytes is fed into a zero register. t[0] is the
// ordinary byte-at-a-time table.
type slicing16 [16][256]uint32

// tab is filled when the package is initialized; that is all the package
// does at init.
var tab slicing16

func init() { fillTable(&tab, poly) }

// ieeeTab holds the IEEE polynomial's tables, filled on first use.
var (
	ieeeTab     slicing16
	ieeeTabOnce sync.Once
)

func ieeeTables() *slicing16 {
	ieeeTabOnce.Do(func() { fillTable(&ieeeTab, ieeePoly) })
	return &ieeeTab
}

// fillTable computes the tables of the polynomial p into t.
func fillTable(t *slicing16, p uint32) {
	for i := range 256 {
		c := uint32(i)
		for range 8 {
			c = c>>1 ^ p&-(c&1)
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 16; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
}

// Checksum is the CRC-32C of b.
func Checksum(b []byte) uint32 { return update(0, b) }

// Update returns the CRC-32C of what crc was the checksum of followed by b:
// Update(Checksum(a), b) == Checksum(append(a, b...)).
func Update(crc uint32, b []byte) uint32 { return update(crc, b) }

// ChecksumIEEE is the CRC-32 of b with the IEEE polynomial, as
// hash/crc32.ChecksumIEEE computes it.
func ChecksumIEEE(b []byte) uint32 { return updateIEEE(0, b) }

// updateGeneric is Update in plain Go: slicing-by-16 over tab, then one
// slicing-by-8 and one slicing-by-4 step, then single bytes. The wasm kernel
// does exactly these steps.
func updateGeneric(crc uint32, b []byte) uint32 { return updateTables(crc, b, &tab) }

// updateTables is updateGeneric over the tables t.
func updateTables(crc uint32, b []byte, t *slicing16) uint32 {
	crc = ^crc
	for len(b) >= 16 {
		crc ^= binary.LittleEndian.Uint32(b)
		crc = t[15][crc&0xff] ^ t[14][crc>>8&0xff] ^ t[13][crc>>16&0xff] ^ t[12][crc>>24] ^
			t[11][b[4]] ^ t[10][b[5]] ^ t[9][b[6]] ^ t[8][b[7]] ^
			t[7][b[8]] ^ t[6][b[9]] ^ t[5][b[10]] ^ t[4][b[11]] ^
			t[3][b[12]] ^ t[2][b[13]] ^ t[1][b[14]] ^ t[0][b[15]]
		b = b[16:]
	}
	if len(b) >= 8 {
		crc ^= binary.LittleEndian.Uint32(b)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24] ^
			t[3][b[4]] ^ t[2][b[5]] ^ t[1][b[6]] ^ t[0][b[7]]
		b = b[8:]
	}
	if len(b) >= 4 {
		crc ^= binary.LittleEndian.Uint32(b)
		crc = t[3][crc&0xff] ^ t[2][crc>>8&0xff] ^ t[1][crc>>16&0xff] ^ t[0][crc>>24]
		b = b[4:]
	}
	for _, c := range b {
		crc = t[0][byte(crc)^c] ^ crc>>8
	}
	return ^crc
}
