package abi

import (
	"encoding/binary"

	"github.com/kwire/kwire/internal/recordscan"
)

// The record entries of layouts 2 and 3 are written as each batch is scanned
// (recordColumns.writeBatch with rows set): gathering columns and writing entries from
// them at the end cost layout 3 about half again as much natively.

// writeHeaderEntries writes the header entries of one record (its spans hs) from entry
// hp/SpanHeaderWords of hents on, its spans moved by base, and returns hp past them.
func writeHeaderEntries(hents []byte, hs []int32, hp int, base int32) int {
	le := binary.LittleEndian
	for j := 0; j+recordscan.SpanHeaderWords <= len(hs); j += recordscan.SpanHeaderWords {
		h := hents[hp/recordscan.SpanHeaderWords*TableHeaderStride:]
		h = h[:TableHeaderStride:TableHeaderStride]
		hvo, hvl := hs[j+2]+base, hs[j+3]
		if hvl < 0 {
			hvo = 0
		}
		le.PutUint32(h[0:], uint32(hs[j]+base))
		le.PutUint32(h[4:], uint32(hs[j+1]))
		le.PutUint32(h[8:], uint32(hvo))
		le.PutUint32(h[12:], uint32(hvl))
		hp += recordscan.SpanHeaderWords
	}
	return hp
}
