//go:build !wasm || kwire_purego

package recordscan

func scanRecords(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, ok bool) {
	return scanRecordsGeneric(data, pos, spans, hdrs)
}
