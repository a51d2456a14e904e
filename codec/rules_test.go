package codec_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
)

func mustEncode(t *testing.T, m codec.Message, v int16) []byte {
	t.Helper()
	b, err := m.Encode(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUnknownTagsPreservedAtEveryLevel puts unknown tags at the top, in a nested struct
// and in a doubly nested struct, and checks bytes and JSON survive.
func TestUnknownTagsPreservedAtEveryLevel(t *testing.T) {
	m := codec.NewMetadataResponse()
	m.UnknownTaggedFields = []codec.TaggedField{{Tag: 7, Data: []byte{0xde, 0xad}}}
	topic := *codec.NewMetadataResponseTopic()
	name := "t"
	topic.Name = &name
	topic.UnknownTaggedFields = []codec.TaggedField{{Tag: 0, Data: nil}, {Tag: 300, Data: []byte("x")}}
	part := *codec.NewMetadataResponsePartition()
	part.UnknownTaggedFields = []codec.TaggedField{{Tag: 1, Data: []byte{1, 2, 3}}}
	topic.Partitions = append(topic.Partitions, part)
	m.Topics = append(m.Topics, topic)

	b := mustEncode(t, m, 12)
	got := codec.NewMetadataResponse()
	if err := got.Decode(b, 12); err != nil {
		t.Fatal(err)
	}
	if len(got.UnknownTaggedFields) != 1 || got.UnknownTaggedFields[0].Tag != 7 ||
		len(got.Topics[0].UnknownTaggedFields) != 2 || got.Topics[0].UnknownTaggedFields[1].Tag != 300 ||
		!bytes.Equal(got.Topics[0].Partitions[0].UnknownTaggedFields[0].Data, []byte{1, 2, 3}) {
		t.Fatalf("unknown tags lost: %+v", got)
	}
	if again := mustEncode(t, got, 12); !bytes.Equal(again, b) {
		t.Fatalf("re-encode %x, want %x", again, b)
	}
	j, _ := got.AppendJSON(nil, 12)
	for _, want := range []string{
		`"_unknownTaggedFields":[{"tag":7,"data":"3q0="}]`,
		`"_unknownTaggedFields":[{"tag":0,"data":""},{"tag":300,"data":"eA=="}]`,
		`"_unknownTaggedFields":[{"tag":1,"data":"AQID"}]`,
	} {
		if !strings.Contains(string(j), want) {
			t.Errorf("json lacks %s:\n%s", want, j)
		}
	}
	fromJSON := codec.NewMetadataResponse()
	if err := fromJSON.DecodeJSON(j, 12); err != nil {
		t.Fatal(err)
	}
	if again := mustEncode(t, fromJSON, 12); !bytes.Equal(again, b) {
		t.Fatalf("json round trip %x, want %x", again, b)
	}
}

// TestTaggedSectionOrder checks unknown tags interleave with known ones by tag number
// and that disorder or reuse of a known tag is refused both ways.
func TestTaggedSectionOrder(t *testing.T) {
	// ResponseHeader v1 defines no tags: count 2, tag 5 (1 byte), tag 9 (0 bytes).
	body := []byte{0, 0, 0, 1, 2, 5, 1, 0xaa, 9, 0}
	h := codec.NewResponseHeader()
	if err := h.Decode(body, 1); err != nil {
		t.Fatal(err)
	}
	if again := mustEncode(t, h, 1); !bytes.Equal(again, body) {
		t.Fatalf("re-encode %x, want %x", again, body)
	}
	disordered := []byte{0, 0, 0, 1, 2, 9, 0, 5, 1, 0xaa}
	err := h.Decode(disordered, 1)
	if !errors.Is(err, codec.ErrTags) || !strings.Contains(err.Error(), "_tags") || !strings.Contains(err.Error(), "offset 7") {
		t.Fatalf("disordered tags: %v", err)
	}
	// Declared size beyond the input.
	if err := h.Decode([]byte{0, 0, 0, 1, 1, 5, 9, 0xaa}, 1); !errors.Is(err, codec.ErrTags) {
		t.Fatalf("oversized tag: %v", err)
	}
	// A known tagged field must use exactly its declared size: FetchRequest v12 tag 0
	// (ClusterId) with a size of 3 holding a 1-byte null string.
	fr := codec.NewFetchRequest()
	good := mustEncode(t, fr, 12)
	bad := append(append([]byte(nil), good[:len(good)-1]...), 1, 0, 3, 0, 0, 0)
	if err := fr.Decode(bad, 12); !errors.Is(err, codec.ErrTags) {
		t.Fatalf("tag with slack: %v", err)
	}

	h.UnknownTaggedFields = []codec.TaggedField{{Tag: 9}, {Tag: 5}}
	if _, err := h.Encode(nil, 1); !errors.Is(err, codec.ErrBadTags) {
		t.Fatalf("encode disordered: %v", err)
	}
	// FetchRequest v12 defines tag 0 (ClusterId): an unknown tag 0 collides.
	fr.UnknownTaggedFields = []codec.TaggedField{{Tag: 0, Data: []byte{0}}}
	if _, err := fr.Encode(nil, 12); !errors.Is(err, codec.ErrBadTags) {
		t.Fatalf("encode colliding tag: %v", err)
	}
	// Known and unknown tags merge in order: ClusterId (tag 0) then unknown tag 4.
	cid := "c"
	fr.ClusterID = &cid
	fr.UnknownTaggedFields = []codec.TaggedField{{Tag: 4, Data: []byte{0xee}}}
	b := mustEncode(t, fr, 12)
	tail := []byte{2, 0, 2, 2, 'c', 4, 1, 0xee}
	if !bytes.HasSuffix(b, tail) {
		t.Fatalf("tagged section %x, want suffix %x", b, tail)
	}
}

func TestNonDefaultAndIgnorable(t *testing.T) {
	// AllowAutoTopicCreation exists from v4 and is not ignorable.
	m := codec.NewMetadataRequest()
	m.AllowAutoTopicCreation = false
	_, err := m.Encode(nil, 3)
	var ee *codec.EncodeError
	if !errors.As(err, &ee) || !errors.Is(err, codec.ErrNonDefault) || ee.Path != "allowAutoTopicCreation" || ee.Version != 3 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "MetadataRequest v3 field allowAutoTopicCreation") {
		t.Fatalf("message %q", err)
	}
	// At its default it is simply absent.
	m.AllowAutoTopicCreation = true
	mustEncode(t, m, 3)

	// Topic ids exist from v10 and are ignorable: dropped at v9.
	topic := codec.NewMetadataRequestTopic()
	name := "a"
	topic.Name = &name
	m.Topics = []codec.MetadataRequestTopic{*topic}
	plain := mustEncode(t, m, 9)
	m.Topics[0].TopicID = codec.UUID{1}
	if dropped := mustEncode(t, m, 9); !bytes.Equal(dropped, plain) {
		t.Fatalf("ignorable field changed the bytes: %x vs %x", dropped, plain)
	}

	// Null where the version forbids it: Topics is nullable only from v1.
	m.Topics = nil
	if _, err := m.Encode(nil, 0); !errors.Is(err, codec.ErrNotNullable) || !strings.Contains(err.Error(), "topics") {
		t.Fatalf("null at v0: %v", err)
	}
	mustEncode(t, m, 1)

	// A version outside the valid range.
	if _, err := m.Encode(nil, 99); !errors.Is(err, codec.ErrVersion) {
		t.Fatalf("v99: %v", err)
	}
	// Strings over 32767 bytes are refused, as Kafka does.
	long := strings.Repeat("x", 40000)
	m.Topics = []codec.MetadataRequestTopic{{Name: &long}}
	if _, err := m.Encode(nil, 12); !errors.Is(err, codec.ErrTooLong) || !strings.Contains(err.Error(), "topics[0].name") {
		t.Fatalf("long string: %v", err)
	}
}

func TestNullForNonNullableOnDecode(t *testing.T) {
	// MetadataRequest v0: topics is a non-nullable array, here -1.
	err := codec.NewMetadataRequest().Decode([]byte{0xff, 0xff, 0xff, 0xff}, 0)
	if !errors.Is(err, codec.ErrNull) || !strings.Contains(err.Error(), "field topics at offset 0") {
		t.Fatalf("err = %v", err)
	}
}

func TestJSONStrictness(t *testing.T) {
	tests := []struct {
		name, json string
		want       []string
	}{
		{"unknown key", `{"acks":1,"timeoutMs":5,"topicData":[{"name":"a","partitionData":[{"index":0,"bogus":1}]}]}`,
			[]string{"$.topicData[0].partitionData[0].bogus", "unknown key"}},
		{"wrong type", `{"acks":"1"}`, []string{"$.acks", "wrong type", "want number, got string"}},
		{"out of range", `{"acks":70000}`, []string{"$.acks", "out of range"}},
		{"fraction for an integer", `{"timeoutMs":1.5}`, []string{"$.timeoutMs", "want an integer"}},
		{"duplicate key", `{"acks":1,"acks":1}`, []string{"$.acks", "duplicate key"}},
		{"bad base64", `{"topicData":[{"name":"a","partitionData":[{"index":0,"records":"!!"}]}]}`,
			[]string{"$.topicData[0].partitionData[0].records", "base64"}},
		{"trailing data", `{} {}`, []string{"unexpected data"}},
		{"not an object", `[1]`, []string{"want object, got array"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := codec.NewProduceRequest().DecodeJSON([]byte(tc.json), 9)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestJSONInt64Lossless(t *testing.T) {
	m := codec.NewInitProducerIDResponse()
	m.ProducerID = 1<<62 + 1
	j, err := m.AppendJSON(nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"producerId":"4611686018427387905"`) {
		t.Fatalf("json %s", j)
	}
	back := codec.NewInitProducerIDResponse()
	if err := back.DecodeJSON(j, 4); err != nil || back.ProducerID != 1<<62+1 {
		t.Fatalf("back %d, %v", back.ProducerID, err)
	}
	// Numbers are accepted on input too, exactly.
	if err := back.DecodeJSON([]byte(`{"producerId":9223372036854775807}`), 4); err != nil || back.ProducerID != 1<<63-1 {
		t.Fatalf("number form %d, %v", back.ProducerID, err)
	}
	if err := back.DecodeJSON([]byte(`{"producerId":"9223372036854775808"}`), 4); err == nil {
		t.Fatal("accepted an int64 overflow")
	}
}

func TestLookups(t *testing.T) {
	if r := codec.NewRequest(0); r == nil || r.MessageName() != "ProduceRequest" {
		t.Fatalf("NewRequest(0) = %v", r)
	}
	if _, ok := codec.NewRequest(1).NewResponse().(*codec.FetchResponse); !ok {
		t.Fatal("FetchRequest does not pair with FetchResponse")
	}
	if m := codec.LookupMessage(3, codec.KindResponse); m == nil || m.MessageName() != "MetadataResponse" {
		t.Fatalf("LookupMessage = %v", m)
	}
	if codec.NewMessage("ConsumerProtocolSubscription") == nil || codec.NewMessage("RequestHeader") == nil {
		t.Fatal("data and header types missing")
	}
	api, ok := codec.LookupAPI(4)
	if !ok || api.Name != "LeaderAndIsr" || !contains(api.Request.Listeners, "zkBroker") {
		t.Fatalf("LeaderAndIsr (a ZooKeeper-era key of 3.9) = %+v", api)
	}
	produce, _ := codec.LookupAPI(0)
	if produce.Request.MinVersion != 0 || produce.Request.FlexibleMin != 9 {
		t.Fatalf("Produce %+v", produce.Request)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestJSONErrorIsTyped(t *testing.T) {
	err := codec.NewProduceRequest().DecodeJSON([]byte(`{"acks":"1"}`), 9)
	var je *codec.JSONError
	if !errors.As(err, &je) || je.Message != "ProduceRequest" || je.Path != "$.acks" || je.Offset != 8 || !errors.Is(err, codec.ErrJSONType) {
		t.Fatalf("err = %#v", err)
	}
}
