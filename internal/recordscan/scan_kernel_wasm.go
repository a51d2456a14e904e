//go:build wasm && !kwire_purego

package recordscan

// scanRecordsKernel is the WebAssembly loop of scan_wasm.s: it reads records whose
// varints take one or two bytes, from data[pos:] while there is room, into spans and
// hdrs as Scan does. done is true when it stopped for want of room or data;
// false when the record at next is one it leaves to scanRecordsGeneric.
//
//go:noescape
func scanRecordsKernel(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, done bool)

// scanRecords runs the kernel and gives each record it stops at to the twin, which
// reads it (a long varint) or refuses it (bad bytes; the reader explains).
func scanRecords(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, ok bool) {
	for {
		n, r, h, done := scanRecordsKernel(data, pos, spans[nrec*SpanRecordWords:], hdrs[nhdr*SpanHeaderWords:])
		pos, nrec, nhdr = n, nrec+r, nhdr+h
		if done {
			return pos, nrec, nhdr, true
		}
		n, r, h, ok = scanRecordsGeneric(data, pos, spans[nrec*SpanRecordWords:nrec*SpanRecordWords+SpanRecordWords], hdrs[nhdr*SpanHeaderWords:])
		pos, nrec, nhdr = n, nrec+r, nhdr+h
		if !ok || r == 0 {
			return pos, nrec, nhdr, ok
		}
	}
}
