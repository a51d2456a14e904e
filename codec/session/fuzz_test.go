package session

import (
	"encoding/binary"
	"testing"
)

// FuzzFeed feeds arbitrary bytes, in two chunks, to a session with requests pending on
// correlation ids 0-3 (header v0 and v1 apis, and a negotiation): nothing panics, and
// every response handed out lies inside the bytes fed.
func FuzzFeed(f *testing.F) {
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0}, 3)
	f.Add([]byte{0, 0, 0, 5, 0, 0, 0, 1, 0}, 1)
	f.Add([]byte{0, 0, 0, 7, 0, 0, 0, 2, 1, 0, 0}, 9)
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff}, 2)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		s := New(Config{MaxFrameSize: 1 << 16})
		s.BeginRequest(18, 3, nil)
		s.BeginRequest(3, 12, nil)
		s.BeginRequest(0, 8, nil)
		if _, err := s.BeginNegotiation(); err != nil {
			t.Fatal(err)
		}
		if split < 0 {
			split = -split
		}
		if len(data) > 0 {
			split %= len(data) + 1
		} else {
			split = 0
		}
		total := 0
		for _, chunk := range [][]byte{data[:split], data[split:]} {
			if s.Feed(chunk) != nil {
				return
			}
			for {
				r, ok, err := s.Next()
				if err != nil || !ok {
					break
				}
				total += len(r.Frame)
				if int(binary.BigEndian.Uint32(r.Frame)) != len(r.Frame)-4 || total > len(data) {
					t.Fatalf("frame of %d bytes with size %d (%d of %d bytes)", len(r.Frame), binary.BigEndian.Uint32(r.Frame), total, len(data))
				}
				if r.Err == nil && r.Negotiation == NotNegotiation {
					DecodeBody(r)
				}
			}
		}
	})
}
