package transcode

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/kwire/kwire/internal/wire"
)

// Doc's accessors read values straight from the spans Parse found; the wire reader,
// which Parse itself uses, must read the same values from the same spans.
func TestDocAccessorsMatchReader(t *testing.T) {
	var d Doc
	checked := 0
	for _, info := range schemaInfos() {
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			b, err := randomWire(info.Name, v, rand.New(rand.NewSource(int64(v)*31+int64(len(info.Name)))))
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Parse(b, info.Name, v); err != nil {
				t.Fatal(err)
			}
			for i := range d.nodes {
				p := &d.nodes[i]
				if p.kind != dScalar {
					continue
				}
				r := wire.Reader{Src: d.src[:p.end], Off: int(p.start)}
				n := Node(i)
				switch p.f.typ {
				case tBool, tInt8:
					checked++
					if want := int64(r.Int8()); d.Int(n) != want {
						t.Fatalf("%s v%d %s: Int %d, want %d", info.Name, v, d.Path(n), d.Int(n), want)
					}
				case tInt16, tUint16, tInt32, tUint32, tInt64:
					checked++
					var want int64
					switch p.f.typ {
					case tInt16:
						want = int64(r.Int16())
					case tUint16:
						want = int64(r.Uint16())
					case tInt32:
						want = int64(r.Int32())
					case tUint32:
						want = int64(r.Uint32())
					default:
						want = r.Int64()
					}
					if d.Int(n) != want {
						t.Fatalf("%s v%d %s: Int %d, want %d", info.Name, v, d.Path(n), d.Int(n), want)
					}
				case tString:
					checked++
					want, wnull := r.NullableStringView(p.compact)
					got, null := d.Str(n)
					if null != wnull || !bytes.Equal(got, want) || (got == nil) != (want == nil) {
						t.Fatalf("%s v%d %s: Str %q %v, want %q %v", info.Name, v, d.Path(n), got, null, want, wnull)
					}
				case tBytes, tRecords:
					checked++
					want := r.NullableBytes(p.compact)
					if got := d.Bytes(n); !bytes.Equal(got, want) || (got == nil) != (want == nil) || d.IsNull(n) != (want == nil) {
						t.Fatalf("%s v%d %s: Bytes %x, want %x", info.Name, v, d.Path(n), got, want)
					}
				}
			}
		}
	}
	if checked < 5000 {
		t.Fatalf("only %d values checked", checked)
	}
}
