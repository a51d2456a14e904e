package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadCapture feeds arbitrary bytes to the capture reader: it must return (an
// error or not) without panicking, every frame it hands over must be a whole frame
// (its size prefix matches its length), and a whole input must never allocate more
// than allocLimit of its size, whatever its headers claim.
//
// One Reader serves every input of a worker, closed after each (which ends every
// connection), as kwire pcap reads file after file: a new Reader costs about 3 MB of
// reassembly pools before it reads a byte, which would be most of the time of a small
// input. The seeds are small (a whole exchange in a few hundred bytes) so that
// minimizing what they lead to is quick.
func FuzzReadCapture(f *testing.F) {
	if b, err := os.ReadFile("../../../../examples/data/sample.pcap"); err == nil {
		f.Add(b[:min(len(b), 4096)])
	}
	files, _ := filepath.Glob(filepath.Join(hostileDir, "*"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0})
	var t *testing.T
	r := NewReader(Options{}, func(fr *Frame) {
		if len(fr.Data) < 4 || int(uint32(fr.Data[0])<<24|uint32(fr.Data[1])<<16|uint32(fr.Data[2])<<8|uint32(fr.Data[3]))+4 != len(fr.Data) {
			t.Fatalf("frame of %d bytes with size prefix % x", len(fr.Data), fr.Data[:min(4, len(fr.Data))])
		}
	})
	f.Fuzz(func(tt *testing.T, data []byte) {
		t = tt
		alloc := allocated(func() {
			_ = r.ReadCapture(bytes.NewReader(data))
			r.Close()
		})
		if limit := allocLimit(len(data)); alloc > limit {
			t.Fatalf("%d bytes allocated for a %d-byte input, more than %d", alloc, len(data), limit)
		}
	})
}
