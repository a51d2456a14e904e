package capture

import (
	"bytes"
	"os"
	"testing"
)

// FuzzReadCapture feeds arbitrary bytes to the capture reader: it must return (an
// error or not) without panicking, and every frame it hands over must be a whole
// frame (its size prefix matches its length).
func FuzzReadCapture(f *testing.F) {
	if b, err := os.ReadFile("../../../../examples/data/sample.pcap"); err == nil {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(Options{}, func(fr *Frame) {
			if len(fr.Data) < 4 || int(uint32(fr.Data[0])<<24|uint32(fr.Data[1])<<16|uint32(fr.Data[2])<<8|uint32(fr.Data[3]))+4 != len(fr.Data) {
				t.Fatalf("frame of %d bytes with size prefix % x", len(fr.Data), fr.Data[:min(4, len(fr.Data))])
			}
		})
		_ = r.ReadCapture(bytes.NewReader(data))
		r.Close()
	})
}
