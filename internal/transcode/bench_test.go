package transcode_test

import (
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance"
	"github.com/kwire/kwire/internal/transcode"
)

type benchItem struct {
	name string
	v    int16
	wire []byte
	json []byte
}

func benchItems(b *testing.B, names ...string) []benchItem {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-*.jsonl")
	var out []benchItem
	for _, f := range files {
		vs, err := conformance.ReadVectors(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range vs {
			if !want[v.Name] {
				continue
			}
			js, err := transcode.AppendJSON(nil, v.Name, v.Version, v.Bytes, nil)
			if err != nil {
				continue
			}
			out = append(out, benchItem{v.Name, v.Version, v.Bytes, js})
		}
	}
	return out
}

var benchSets = []string{"ProduceRequest", "FetchResponse", "MetadataResponse"}

// BenchmarkDecodeJSON compares wire -> JSON: the transcoder against the typed codec's
// Decode + AppendJSON, on the vectors of one message.
func BenchmarkDecodeJSON(b *testing.B) {
	for _, name := range benchSets {
		items := benchItems(b, name)
		b.Run(name+"/typed", func(b *testing.B) {
			var out []byte
			for i := 0; i < b.N; i++ {
				for _, it := range items {
					m := codec.NewMessage(it.name)
					if err := m.Decode(it.wire, it.v); err != nil {
						b.Fatal(err)
					}
					out, _ = m.AppendJSON(out[:0], it.v)
				}
			}
		})
		b.Run(name+"/transcoder", func(b *testing.B) {
			var out []byte
			var err error
			for i := 0; i < b.N; i++ {
				for _, it := range items {
					if out, err = transcode.AppendJSON(out[:0], it.name, it.v, it.wire, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkEncodeJSON compares JSON -> wire: the transcoder against the typed codec's
// DecodeJSON + Encode.
func BenchmarkEncodeJSON(b *testing.B) {
	for _, name := range benchSets {
		items := benchItems(b, name)
		b.Run(name+"/typed", func(b *testing.B) {
			var out []byte
			for i := 0; i < b.N; i++ {
				for _, it := range items {
					m := codec.NewMessage(it.name)
					if err := m.DecodeJSON(it.json, it.v); err != nil {
						b.Fatal(err)
					}
					out, _ = m.Encode(out[:0], it.v)
				}
			}
		})
		b.Run(name+"/transcoder", func(b *testing.B) {
			var out []byte
			var err error
			for i := 0; i < b.N; i++ {
				for _, it := range items {
					if out, err = transcode.AppendWire(out[:0], it.name, it.v, it.json); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkDoc compares indexing a message with Doc.Parse against the typed codec's
// Decode (with unsafe strings, its cheapest form), on the vectors of one message.
func BenchmarkDoc(b *testing.B) {
	for _, name := range benchSets {
		items := benchItems(b, name)
		b.Run(name+"/typed", func(b *testing.B) {
			for b.Loop() {
				for _, it := range items {
					m := codec.NewMessage(it.name)
					if err := m.DecodeWith(it.wire, it.v, codec.DecodeOptions{UnsafeStrings: true}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(name+"/doc", func(b *testing.B) {
			var d transcode.Doc
			for b.Loop() {
				for _, it := range items {
					if err := d.Parse(it.wire, it.name, it.v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
