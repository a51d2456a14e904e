package transcode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/internal/transcode"
)

// randomMessage is a filled message of name at v and its wire bytes.
func randomMessage(t *testing.T, name string, v int16, seed int64) (*rand.Rand, []byte) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	m := codec.NewMessage(name)
	codectest.Fill(m, r, v)
	b, err := m.Encode(nil, v)
	if err != nil {
		t.Fatalf("%s v%d: %v", name, v, err)
	}
	return r, b
}

// checkParse compares Doc.Parse with AppendJSON on src: the same accept or refuse and
// error, and an unedited AppendTo that gives src back.
func checkParse(t *testing.T, d *transcode.Doc, what, name string, v int16, src []byte) bool {
	t.Helper()
	_, werr := transcode.AppendJSON(nil, name, v, src, nil)
	gerr := d.Parse(src, name, v)
	if !sameError(t, what+": parse", gerr, werr) {
		return false
	}
	if gerr != nil {
		return true
	}
	out, err := d.AppendTo(nil)
	if err != nil || !bytes.Equal(out, src) {
		t.Errorf("%s: unedited AppendTo differs (%v)\n got  %x\n want %x", what, err, out, src)
		return false
	}
	return true
}

func TestDocParseAgreesWithDecode(t *testing.T) {
	var d transcode.Doc
	pairs := 0
	for _, info := range codec.Messages() {
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			pairs++
			for seed := int64(0); seed < 6; seed++ {
				what := fmt.Sprintf("%s/v%d/seed%d", info.Name, v, seed)
				r, b := randomMessage(t, info.Name, v, seed*7919+int64(v))
				if !checkParse(t, &d, what, info.Name, v, b) {
					t.FailNow()
				}
				for i := 0; i < 6 && len(b) > 0; i++ {
					cut := r.Intn(len(b))
					mut := append([]byte(nil), b...)
					mut[r.Intn(len(mut))] ^= byte(1 + r.Intn(255))
					if !checkParse(t, &d, what+" cut", info.Name, v, b[:cut]) || !checkParse(t, &d, what+" mutated", info.Name, v, mut) {
						t.FailNow()
					}
				}
			}
		}
	}
	if pairs < 500 {
		t.Fatalf("only %d (message, version) pairs", pairs)
	}
}

// generic is a message's JSON as plain values, for comparing edits.
func generic(t *testing.T, js []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v in %s", err, js)
	}
	return v
}

// at returns the container holding path's last segment and that segment.
func at(root any, path string) (parent any, key string, idx int) {
	cur := root
	segs := strings.Split(strings.ReplaceAll(path, "[", ".["), ".")
	for i, s := range segs {
		last := i == len(segs)-1
		if strings.HasPrefix(s, "[") {
			n, _ := strconv.Atoi(strings.Trim(s, "[]"))
			if last {
				return cur, "", n
			}
			cur = cur.([]any)[n]
			continue
		}
		if last {
			return cur, s, -1
		}
		cur = cur.(map[string]any)[s]
	}
	return nil, "", -1
}

// candidates are the nodes of a Doc an edit may pick: integer scalars, strings and array
// elements, in preorder.
func candidates(d *transcode.Doc, n transcode.Node, out []transcode.Node) []transcode.Node {
	for c := d.First(n); c != transcode.NoNode; c = d.Next(c) {
		out = append(out, c)
		out = candidates(d, c, out)
	}
	return out
}

func TestDocEditsMatchDecodedEdits(t *testing.T) {
	var d transcode.Doc
	edits := 0
	for _, info := range codec.Messages() {
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			for seed := int64(0); seed < 4; seed++ {
				what := fmt.Sprintf("%s/v%d/seed%d", info.Name, v, seed)
				r, b := randomMessage(t, info.Name, v, seed*104723+int64(v)*17)
				js, err := transcode.AppendJSON(nil, info.Name, v, b, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := generic(t, js)
				if err := d.Parse(b, info.Name, v); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				nodes := candidates(&d, d.Root(), nil)
				r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
				// Apply up to three edits, deepest-path-last so a removal does not shift
				// the path of an edit made before it in the same array.
				var applied []string
				removedUnder := map[string]bool{}
				for _, n := range nodes {
					if len(applied) == 3 {
						break
					}
					path := d.Path(n)
					skip := false
					for p := range removedUnder {
						if strings.HasPrefix(path, p) {
							skip = true
						}
					}
					if skip || path == "" {
						continue
					}
					parent, key, idx := at(want, path)
					if parent == nil {
						continue
					}
					switch {
					case idx >= 0:
						arrPath := path[:strings.LastIndex(path, "[")]
						if removedUnder[arrPath+"["] {
							continue
						}
						if err := d.Remove(n); err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						// Later paths into this array would be shifted: take no more there.
						removedUnder[arrPath+"["] = true
						pp, pk, pi := at(want, arrPath)
						arr := append(make([]any, 0, idx), parent.([]any)[:idx]...)
						arr = append(arr, parent.([]any)[idx+1:]...)
						setAt(pp, pk, pi, arr)
					default:
						s, null := d.Str(n)
						cur := parent.(map[string]any)[key]
						switch {
						case s != nil:
							nv := "edited-" + strconv.Itoa(edits)
							if err := d.SetString(n, nv); err != nil {
								t.Fatalf("%s %s: %v", what, path, err)
							}
							setAt(parent, key, idx, nv)
						case null || d.Int(n) == 0:
							continue
						default:
							nv := d.Int(n) ^ 1
							if err := d.SetInt(n, nv); err != nil {
								t.Fatalf("%s %s: %v", what, path, err)
							}
							switch c := cur.(type) {
							case bool:
								setAt(parent, key, idx, !c)
							case string: // int64 is written as a JSON string
								setAt(parent, key, idx, strconv.FormatInt(nv, 10))
							default:
								setAt(parent, key, idx, json.Number(strconv.FormatInt(nv, 10)))
							}
						}
					}
					applied = append(applied, path)
					edits++
				}
				out, err := d.AppendTo(nil)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				gotJS, err := transcode.AppendJSON(nil, info.Name, v, out, nil)
				if err != nil {
					t.Fatalf("%s: edited message (%v) does not decode: %v", what, applied, err)
				}
				if got := generic(t, gotJS); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: edits %v\n got  %s\n want %v", what, applied, gotJS, want)
				}
			}
		}
	}
	if edits < 1000 {
		t.Fatalf("only %d edits made", edits)
	}
	t.Logf("%d edits", edits)
}

func setAt(parent any, key string, idx int, v any) {
	switch p := parent.(type) {
	case map[string]any:
		p[key] = v
	case []any:
		p[idx] = v
	}
}

func TestDocAppendRaw(t *testing.T) {
	// A Metadata response's broker taken from one message and appended to another's.
	var a, b transcode.Doc
	for v := int16(0); v <= 13; v++ {
		_, wa := randomMessage(t, "MetadataResponse", v, 11)
		_, wb := randomMessage(t, "MetadataResponse", v, 12)
		if err := a.Parse(wa, "MetadataResponse", v); err != nil {
			t.Fatal(err)
		}
		if err := b.Parse(wb, "MetadataResponse", v); err != nil {
			t.Fatal(err)
		}
		brokersA, brokersB := a.Field(a.Root(), "brokers"), b.Field(b.Root(), "brokers")
		first := b.First(brokersB)
		if first == transcode.NoNode {
			continue
		}
		if err := a.AppendRaw(brokersA, b.Raw(first)); err != nil {
			t.Fatal(err)
		}
		if err := a.AppendRaw(brokersA, b.Raw(first)); err != nil {
			t.Fatal(err)
		}
		out, err := a.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		jsA, _ := transcode.AppendJSON(nil, "MetadataResponse", v, wa, nil)
		jsB, _ := transcode.AppendJSON(nil, "MetadataResponse", v, wb, nil)
		want := generic(t, jsA).(map[string]any)
		el := generic(t, jsB).(map[string]any)["brokers"].([]any)[0]
		want["brokers"] = append(want["brokers"].([]any), el, el)
		gotJS, err := transcode.AppendJSON(nil, "MetadataResponse", v, out, nil)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if got := generic(t, gotJS); !reflect.DeepEqual(got, any(want)) {
			t.Fatalf("v%d:\n got  %s\n want %v", v, gotJS, want)
		}
	}
}

// An edit inside an array whose count does not change keeps the count's prefix as the
// client wrote it, even in a non-canonical encoding (3 as the two-byte varint 83 00):
// only the edited value is written anew.
func TestDocKeepsArrayPrefix(t *testing.T) {
	src := []byte("\x83\x00\x03ab\x00\x04cde\x00\x01\x00\x00\x00")
	var d transcode.Doc
	if err := d.Parse(src, "MetadataRequest", 9); err != nil {
		t.Fatal(err)
	}
	first := d.Field(d.First(d.Field(d.Root(), "topics")), "name")
	if err := d.SetString(first, "xyz"); err != nil {
		t.Fatal(err)
	}
	out, err := d.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("\x83\x00\x04xyz\x00\x04cde\x00\x01\x00\x00\x00")
	if !bytes.Equal(out, want) {
		t.Fatalf("got  % x\nwant % x", out, want)
	}
	// A count that changes is written anew, canonically.
	if err := d.Parse(src, "MetadataRequest", 9); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(d.First(d.Field(d.Root(), "topics"))); err != nil {
		t.Fatal(err)
	}
	if out, err = d.AppendTo(nil); err != nil || !bytes.Equal(out, []byte("\x02\x04cde\x00\x01\x00\x00\x00")) {
		t.Fatalf("one topic removed: % x, %v", out, err)
	}
}

// SetStruct replaces a nullable struct field whole, null to present and present to
// null, inside a message with other edits; what the replaced struct held is no longer
// visited by FilterEntities, and a field that is not a struct is refused.
func TestDocSetStruct(t *testing.T) {
	name := "x"
	resp := codec.NewDescribeTopicPartitionsResponse()
	resp.Topics = []codec.DescribeTopicPartitionsResponseTopic{{Name: &name}}
	resp.NextCursor = &codec.DescribeTopicPartitionsResponseCursor{TopicName: "next", PartitionIndex: 4}
	src, err := resp.Encode(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var d transcode.Doc
	if err := d.Parse(src, "DescribeTopicPartitionsResponse", 0); err != nil {
		t.Fatal(err)
	}
	cur := d.Field(d.Root(), "nextCursor")
	if err := d.SetStruct(cur, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	seen := []string{}
	if _, _, err := d.FilterEntities(1<<transcode.EntityTopicName, func(_ uint8, s string) (string, transcode.Verdict) {
		seen = append(seen, s)
		return "p." + s, transcode.Keep
	}); err != nil {
		t.Fatal(err)
	}
	out, err := d.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := codec.NewDescribeTopicPartitionsResponse()
	if err := got.Decode(out, 0); err != nil {
		t.Fatal(err)
	}
	if got.NextCursor != nil || *got.Topics[0].Name != "p.x" || len(seen) != 1 {
		t.Fatalf("present to null: cursor %+v, topic %q, names visited %v", got.NextCursor, *got.Topics[0].Name, seen)
	}

	// And back: null to present.
	if err := d.Parse(out, "DescribeTopicPartitionsResponse", 0); err != nil {
		t.Fatal(err)
	}
	if err := d.SetStruct(d.Field(d.Root(), "nextCursor"), []byte{1, 3, 'a', 'b', 0, 0, 0, 9, 0}); err != nil {
		t.Fatal(err)
	}
	if out, err = d.AppendTo(nil); err != nil {
		t.Fatal(err)
	}
	if err := got.Decode(out, 0); err != nil {
		t.Fatal(err)
	}
	if got.NextCursor == nil || got.NextCursor.TopicName != "ab" || got.NextCursor.PartitionIndex != 9 {
		t.Fatalf("null to present: cursor %+v", got.NextCursor)
	}
	if err := d.SetStruct(d.Field(d.Root(), "throttleTimeMs"), []byte{0xff}); !errors.Is(err, transcode.ErrEdit) {
		t.Fatalf("SetStruct of an int32: %v", err)
	}
	if err := d.SetStruct(d.First(d.Field(d.Root(), "topics")), []byte{0xff}); !errors.Is(err, transcode.ErrEdit) {
		t.Fatalf("SetStruct of an array element: %v", err)
	}
}

func TestDocNavigationAndErrors(t *testing.T) {
	req := codec.NewProduceRequest()
	req.Acks = -1
	name := "orders"
	req.TopicData = []codec.ProduceRequestTopicProduceData{{Name: name, PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 3, Records: []byte{1, 2, 3}}, {Index: 4}}}}
	src, err := req.Encode(nil, 9)
	if err != nil {
		t.Fatal(err)
	}
	var d transcode.Doc
	if err := d.ParseAPI(src, 0, codec.KindRequest, 9); err != nil {
		t.Fatal(err)
	}
	root := d.Root()
	if got := d.Int(d.Field(root, "acks")); got != -1 {
		t.Errorf("acks %d", got)
	}
	if d.Field(root, "noSuchField") != transcode.NoNode {
		t.Error("a missing field has a node")
	}
	topics := d.Field(root, "topicData")
	if d.Len(topics) != 1 {
		t.Fatalf("topics %d", d.Len(topics))
	}
	topic := d.First(topics)
	if s, _ := d.Str(d.Field(topic, "name")); string(s) != name {
		t.Errorf("name %q", s)
	}
	parts := d.Field(topic, "partitionData")
	p0 := d.First(parts)
	p1 := d.Next(p0)
	if d.Int(d.Field(p0, "index")) != 3 || !bytes.Equal(d.Bytes(d.Field(p0, "records")), []byte{1, 2, 3}) {
		t.Error("partition 0")
	}
	if !d.IsNull(d.Field(p1, "records")) || d.Path(d.Field(p1, "records")) != "topicData[0].partitionData[1].records" {
		t.Errorf("partition 1: null %v path %q", d.IsNull(d.Field(p1, "records")), d.Path(d.Field(p1, "records")))
	}
	if d.Next(p1) != transcode.NoNode {
		t.Error("a third partition")
	}
	if err := d.SetInt(d.Field(root, "acks"), 1<<20); !errors.Is(err, transcode.ErrEdit) {
		t.Errorf("out of range: %v", err)
	}
	if err := d.SetString(d.Field(root, "acks"), "x"); !errors.Is(err, transcode.ErrEdit) {
		t.Errorf("string into int16: %v", err)
	}
	if err := d.Remove(topics); !errors.Is(err, transcode.ErrEdit) {
		t.Errorf("remove of an array: %v", err)
	}
	// Dropping a partition gives the message without it.
	if err := d.Remove(p0); err != nil {
		t.Fatal(err)
	}
	if d.First(parts) != p1 {
		t.Error("a removed element is still listed")
	}
	out, err := d.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	req.TopicData[0].PartitionData = req.TopicData[0].PartitionData[1:]
	want, _ := req.Encode(nil, 9)
	if !bytes.Equal(out, want) {
		t.Errorf("after removal\n got  %x\n want %x", out, want)
	}
	if err := d.ParseAPI(src, 999, codec.KindRequest, 0); !errors.Is(err, transcode.ErrUnknownMessage) {
		t.Errorf("unknown api: %v", err)
	}
	if err := d.Parse(src, "ProduceRequest", 99); !errors.Is(err, codec.ErrVersion) {
		t.Errorf("bad version: %v", err)
	}
	if d.Root() != transcode.NoNode {
		t.Error("a failed parse left nodes")
	}
	if _, err := d.AppendTo(nil); err == nil {
		t.Error("AppendTo of an empty Doc")
	}
}

func FuzzDoc(f *testing.F) {
	for _, name := range []string{"ProduceRequest", "MetadataResponse", "ProduceResponse", "FetchResponse"} {
		for _, v := range []int16{0, 3, 9, 12} {
			m := codec.NewMessage(name)
			codectest.Fill(m, rand.New(rand.NewSource(int64(v))), v)
			if b, err := m.Encode(nil, v); err == nil {
				f.Add(name, v, b)
			}
		}
	}
	var d transcode.Doc
	f.Fuzz(func(t *testing.T, name string, v int16, src []byte) {
		if _, ok := transcode.Lookup(name); !ok {
			return
		}
		checkParse(t, &d, "fuzz", name, v, src)
	})
}
