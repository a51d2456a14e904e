package recordscan

import (
	"bytes"
	"encoding/json"
	"github.com/kwire/kwire/codec/records"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// checkScan holds Scan (the kernel in WebAssembly builds), scanRecordsGeneric and
// the record reader (records.RecordIter) to one verdict on the records section data of a batch
// that says it holds n records: when the reader reads all n and nothing is left, both
// scans read the same n records with the reader's keys, values, headers and deltas,
// and the schema reference of ResolveSchema; when the reader refuses, neither scan
// reads them all. The scans run with header room of every size from 0 up, so that the
// resume path is exercised too.
func checkScan(t *testing.T, what string, data []byte, n int) {
	t.Helper()
	it, err := records.NewDecoder(records.Options{}).Records(&records.Batch{Records: data, NumRecords: int32(n)})
	if err != nil {
		t.Fatal(err)
	}
	var want []records.Record
	for {
		var r records.Record
		if !it.Next(&r) {
			break
		}
		r.Headers = append([]records.Header(nil), r.Headers...)
		want = append(want, r)
	}
	readerOK := it.Err() == nil
	for _, scan := range []struct {
		name string
		fn   func(data []byte, pos int, spans, hdrs []int32) (int, int, int, bool)
	}{{"Scan", Scan}, {"generic", scanRecordsGeneric}} {
		for _, room := range []int{0, 1, 3, 64} {
			spans := make([]int32, n*SpanRecordWords)
			var hspans []int32
			pos, nrec, ok, grown := 0, 0, true, room
			for nrec < n {
				hdrs := make([]int32, grown*SpanHeaderWords)
				next, k, h, sok := scan.fn(data, pos, spans[nrec*SpanRecordWords:], hdrs)
				hspans = append(hspans, hdrs[:h*SpanHeaderWords]...)
				pos, nrec = next, nrec+k
				if !sok {
					ok = false
					break
				}
				if k == 0 {
					if pos >= len(data) {
						ok = false
						break
					}
					// A record with more headers than room: double it, as abi's record
					// table does (growing by one would rescan the record once per header).
					grown = max(2*grown, 1)
				}
			}
			ok = ok && pos == len(data)
			if ok != readerOK {
				t.Fatalf("%s: %s (header room %d) says %v, the reader %v (%v)", what, scan.name, room, ok, readerOK, it.Err())
			}
			if !ok {
				continue
			}
			hp := 0
			for i, w := range want {
				s := spans[i*SpanRecordWords : (i+1)*SpanRecordWords]
				get := func(off, l int32) []byte {
					if l == -1 {
						if off != 0 {
							t.Fatalf("%s: null span at %d", what, off)
						}
						return nil
					}
					return data[off : off+l]
				}
				tsd := int64(uint64(uint32(s[SpanTSDeltaLo])) | uint64(uint32(s[SpanTSDeltaHi]))<<32)
				if s[SpanOffsetDelta] != w.OffsetDelta || tsd != w.TimestampDelta || !sameBytes(get(s[SpanKeyOff], s[SpanKeyLen]), w.Key) ||
					!sameBytes(get(s[SpanValueOff], s[SpanValueLen]), w.Value) || int(s[SpanHeaders]) != len(w.Headers) {
					t.Fatalf("%s: %s: record %d differs: %v", what, scan.name, i, s)
				}
				hs := hspans[hp : hp+len(w.Headers)*SpanHeaderWords]
				for j, h := range w.Headers {
					x := hs[j*SpanHeaderWords:]
					if !sameBytes(get(x[0], x[1]), h.Key) || !sameBytes(get(x[2], x[3]), h.Value) {
						t.Fatalf("%s: %s: record %d header %d differs", what, scan.name, i, j)
					}
				}
				ref := records.ResolveSchema(w.Value, w.Headers)
				got := records.SchemaRef{ID: -1, Version: -1}
				if MayHaveSchema(data, s, hs) {
					got = SpanSchema(data, s, hs)
				}
				if got != ref {
					t.Fatalf("%s: record %d: schema %+v, ResolveSchema %+v", what, i, got, ref)
				}
				hp += len(hs)
			}
		}
	}
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// scanRecordsOf builds the records section of recs (uncompressed).
func scanSection(t testing.TB, recs []records.Record) []byte {
	var out []byte
	for i := range recs {
		var err error
		if out, err = records.AppendRecord(out, &recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// randomRecords makes records with every shape: null and empty keys and values,
// long varints (values of 200 and 20000 bytes), headers with schema references
// (valid, malformed, null), Confluent-prefixed values, negative and huge deltas.
func randomRecords(r *rand.Rand, n int) []records.Record {
	recs := make([]records.Record, n)
	for i := range recs {
		rec := &recs[i]
		rec.OffsetDelta = int32(i)
		switch r.Intn(4) {
		case 0:
			rec.TimestampDelta = int64(r.Intn(100))
		case 1:
			rec.TimestampDelta = -int64(r.Intn(1 << 20))
		case 2:
			rec.TimestampDelta = r.Int63() - 1<<62
		}
		if r.Intn(8) == 0 {
			rec.OffsetDelta = int32(r.Uint32())
		}
		bytesOf := func() []byte {
			switch r.Intn(6) {
			case 0:
				return nil
			case 1:
				return []byte{}
			case 2:
				return bytes.Repeat([]byte{byte(r.Intn(256))}, 200+r.Intn(20000))
			case 3:
				v := []byte{0, 0, 0, 1, byte(r.Intn(256)), 'x'}
				return v[:4+r.Intn(3)]
			}
			return []byte("v" + strconv.Itoa(r.Intn(1000)))
		}
		rec.Key, rec.Value = bytesOf(), bytesOf()
		for h := r.Intn(4); h > 0; h-- {
			k := []byte("h" + strconv.Itoa(r.Intn(3)))
			switch r.Intn(5) {
			case 0:
				k = []byte(records.SchemaIDHeader)
			case 1:
				k = []byte(records.SchemaVersionHeader)
			case 2:
				k = []byte("123456789") // the length of schema.id
			}
			var v []byte
			switch r.Intn(4) {
			case 0:
				v = []byte(strconv.Itoa(r.Intn(5000) - 10))
			case 1:
				v = []byte("12x")
			case 2:
				v = bytesOf()
			}
			rec.Headers = append(rec.Headers, records.Header{Key: k, Value: v})
		}
	}
	return recs
}

func TestScanRecordsAgreesWithReader(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := 0
	for round := 0; round < 300; round++ {
		recs := randomRecords(r, 1+r.Intn(12))
		data := scanSection(t, recs)
		checkScan(t, "random "+strconv.Itoa(round), data, len(recs))
		checkScan(t, "random "+strconv.Itoa(round)+", one record too many", data, len(recs)+1)
		if len(recs) > 1 {
			checkScan(t, "random "+strconv.Itoa(round)+", one record too few", data, len(recs)-1)
		}
		// Truncations and byte flips, at every byte of short sections.
		step := 1 + len(data)/64
		for at := 0; at < len(data); at += step {
			checkScan(t, "cut", data[:at], len(recs))
			for _, x := range []byte{0x01, 0x40, 0x80, 0xff} {
				b := append([]byte(nil), data...)
				b[at] ^= x
				checkScan(t, "flip", b, len(recs))
				cases++
			}
		}
	}
	// Varints at their limits: 5-byte lengths, a varint with a sixth byte.
	long := []byte{0x80, 0x80, 0x80, 0x80, 0x00}
	checkScan(t, "five-byte zero length", append(long, make([]byte, 10)...), 1)
	checkScan(t, "six-byte varint", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 0, 0, 0, 0, 0, 0}, 1)
	t.Logf("%d spoilt sections", cases)
}

// A record with far more headers than any header room: checkScan grows the room until
// the record fits (by doubling: the fuzz target reaches such records), and the scans
// read every header as the reader does.
func TestScanRecordsManyHeaders(t *testing.T) {
	for _, n := range []int{65, 1000, 20000} {
		hs := make([]records.Header, n)
		for i := range hs {
			hs[i] = records.Header{Key: []byte{}, Value: nil}
		}
		hs[n-1] = records.Header{Key: []byte(records.SchemaIDHeader), Value: []byte("7")}
		recs := []records.Record{{Value: []byte("a")}, {Key: []byte("k"), Headers: hs}, {Value: []byte("b")}}
		checkScan(t, strconv.Itoa(n)+" headers", scanSection(t, recs), len(recs))
	}
}

func TestScanRecordsOnVectors(t *testing.T) {
	n := 0
	for _, v := range loadRecordVectorsForScan(t) {
		d := records.NewDecoder(records.Options{})
		for pos := 0; pos < len(v); {
			size, magic, err := records.PeekEntry(v[pos:])
			if err != nil || size == 0 {
				break
			}
			if magic == 2 {
				b, _, err := records.ParseBatch(v[pos:pos+size], false)
				if err != nil {
					t.Fatal(err)
				}
				data, _, err := d.BatchData(&b)
				if err != nil {
					t.Fatal(err)
				}
				checkScan(t, "vector", data, int(b.NumRecords))
				n++
			}
			pos += size
		}
	}
	if n < 15 {
		t.Fatalf("only %d magic 2 batches", n)
	}
	t.Logf("%d magic 2 batches of the record vectors", n)
}

// FuzzScanRecords: the scans against the reader on any bytes.
func FuzzScanRecords(f *testing.F) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 8; i++ {
		recs := randomRecords(r, 1+r.Intn(4))
		f.Add(scanSection(f, recs), uint8(len(recs)))
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		checkScan(t, "fuzz", data, int(n))
	})
}

// loadRecordVectorsForScan reads the bytes of every record vector (the records field of
// a partition, written by kafka-clients).
func loadRecordVectorsForScan(t *testing.T) [][]byte {
	t.Helper()
	files, err := filepath.Glob("../../conformance/vectors/records/kafka-clients-*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no record vectors found (%v)", err)
	}
	var out [][]byte
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(text, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var v struct{ Bytes []byte }
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v.Bytes)
		}
	}
	return out
}

// BenchmarkScanRecords: Scan (the kernel in WebAssembly builds) and its plain-Go
// twin on the records of the benches' batches: 100 records, key ~10 bytes, value ~100
// or 1000 bytes, one header.
func BenchmarkScanRecords(b *testing.B) {
	for _, size := range []int{100, 1000} {
		recs := make([]records.Record, 100)
		for i := range recs {
			recs[i] = records.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte("key-" + strconv.Itoa(i)), Value: bytes.Repeat([]byte("v"), size),
				Headers: []records.Header{{Key: []byte("trace-id"), Value: []byte("t-" + strconv.Itoa(i))}}}
		}
		data := scanSection(b, recs)
		spans, hdrs := make([]int32, 100*SpanRecordWords), make([]int32, 100*SpanHeaderWords)
		for _, c := range []struct {
			name string
			fn   func(data []byte, pos int, spans, hdrs []int32) (int, int, int, bool)
		}{{"Scan", Scan}, {"generic", scanRecordsGeneric}} {
			b.Run(strconv.Itoa(size)+"B/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for i := 0; i < b.N; i++ {
					if _, n, _, ok := c.fn(data, 0, spans, hdrs); !ok || n != 100 {
						b.Fatal(n, ok)
					}
				}
			})
		}
	}
}
