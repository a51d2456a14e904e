package codec_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
)

// TestRoundTripEveryVersion fills every message at every version with random content and
// checks that encode -> decode -> encode and encode -> JSON -> encode give the same bytes.
func TestRoundTripEveryVersion(t *testing.T) {
	const perVersion = 24
	triples, cases := 0, 0
	for _, info := range codec.Messages() {
		// One instance decodes every version and seed in turn: Decode reuses the slices
		// of the previous contents and must still give exactly the new message.
		reused := codec.NewMessage(info.Name)
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			triples++
			for seed := 0; seed < perVersion; seed++ {
				cases++
				name := fmt.Sprintf("%s/v%d/seed%d", info.Name, v, seed)
				r := rand.New(rand.NewSource(int64(seed)*7919 + int64(v)*31 + int64(len(info.Name))))
				m := codec.NewMessage(info.Name)
				codectest.Fill(m, r, v)
				b1, err := m.Encode(nil, v)
				if err != nil {
					t.Fatalf("%s: encode: %v", name, err)
				}
				m2 := codec.NewMessage(info.Name)
				if err := m2.Decode(b1, v); err != nil {
					t.Fatalf("%s: decode: %v\nbytes %x", name, err, b1)
				}
				b2, err := m2.Encode(nil, v)
				if err != nil {
					t.Fatalf("%s: re-encode: %v", name, err)
				}
				if !bytes.Equal(b1, b2) {
					t.Fatalf("%s: re-encode differs\n got %x\nwant %x", name, b2, b1)
				}
				if err := reused.Decode(b1, v); err != nil {
					t.Fatalf("%s: decode into a reused message: %v", name, err)
				}
				if b4, err := reused.Encode(nil, v); err != nil || !bytes.Equal(b4, b1) {
					t.Fatalf("%s: decoding into a reused message changed the result (%v)\n got %x\nwant %x", name, err, b4, b1)
				}
				j1, err := m2.AppendJSON(nil, v)
				if err != nil {
					t.Fatalf("%s: json: %v", name, err)
				}
				m3 := codec.NewMessage(info.Name)
				if err := m3.DecodeJSON(j1, v); err != nil {
					t.Fatalf("%s: unmarshal json: %v\n%s", name, err, j1)
				}
				b3, err := m3.Encode(nil, v)
				if err != nil {
					t.Fatalf("%s: encode from json: %v\n%s", name, err, j1)
				}
				if !bytes.Equal(b1, b3) {
					t.Fatalf("%s: json round trip differs\n got %x\nwant %x\njson %s", name, b3, b1, j1)
				}
				j2, _ := m3.AppendJSON(nil, v)
				if !bytes.Equal(j1, j2) {
					t.Fatalf("%s: json not stable\n%s\n%s", name, j1, j2)
				}
			}
		}
	}
	t.Logf("%d (message, version) pairs, %d random round trips", triples, cases)
}
