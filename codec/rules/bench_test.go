package rules_test

import (
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/rules"
	"github.com/kwire/kwire/internal/transcode"
)

func benchSet(b *testing.B) *rules.Set {
	set, err := rules.Parse([]byte(safeguards))
	if err != nil {
		b.Fatal(err)
	}
	return set
}

// benchCreateTopics is a CreateTopics v7 request of 3 topics with 2 configs each.
func benchCreateTopics(b testing.TB) []byte {
	var ts []topic
	for i := 0; i < 3; i++ {
		ts = append(ts, topic{name: "orders-" + string(rune('a'+i)), np: 12, rf: 3, configs: []string{"retention.ms", "cleanup.policy"}})
	}
	return encode(b, createTopics(ts...), 7)
}

// benchProduce is a Produce v9 request to one topic, 4 partitions of 16 KiB of records.
func benchProduce(b testing.TB) []byte {
	m := produce(-1, nil, 0, 1, 2, 3)
	for i := range m.TopicData[0].PartitionData {
		m.TopicData[0].PartitionData[i].Records = make([]byte, 16<<10)
	}
	return encode(b, m, 9)
}

func benchCheck(b *testing.B, key, v int16, body []byte) {
	set := benchSet(b)
	id := "app-1"
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		viol, err := set.Check(key, v, &id, body)
		if viol != nil || err != nil {
			b.Fatal(viol, err)
		}
	}
}

func BenchmarkCheckCreateTopics(b *testing.B) { benchCheck(b, 19, 7, benchCreateTopics(b)) }
func BenchmarkCheckProduce(b *testing.B)      { benchCheck(b, 0, 9, benchProduce(b)) }

// BenchmarkCheckNoRule is a request of an api no rule names (Fetch).
func BenchmarkCheckNoRule(b *testing.B) {
	set, err := rules.Parse([]byte(`[{"api": "Produce", "field": "acks", "in": [-1]}]`))
	if err != nil {
		b.Fatal(err)
	}
	body := encode(b, codec.NewFetchRequest(), 12)
	b.ReportAllocs()
	for b.Loop() {
		if v, err := set.Check(1, 12, nil, body); v != nil || err != nil {
			b.Fatal(v, err)
		}
	}
}

// The walker reads only the selected fields: what reading the same values of the
// same bodies costs that way, for comparison with Check (which indexes the body with
// transcode.Doc).
type whole struct{ b []byte }

func (w *whole) At(off, n int) []byte { return w.b[off:] }

func benchWalk(b *testing.B, key, v int16, body []byte, paths ...string) {
	plan, err := transcode.NewWalkPlan(key, codec.KindRequest, paths...)
	if err != nil {
		b.Fatal(err)
	}
	var w transcode.Walker
	src := &whole{body}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Reset(plan, v, len(body), false); err != nil {
			b.Fatal(err)
		}
		n := 0
		for st := w.Next(src); st != transcode.WalkDone; st = w.Next(src) {
			if st != transcode.WalkField {
				b.Fatal(st, w.Err())
			}
			n++
		}
		if n == 0 {
			b.Fatal("nothing selected")
		}
	}
}

func BenchmarkWalkCreateTopics(b *testing.B) {
	benchWalk(b, 19, 7, benchCreateTopics(b), "topics.replicationFactor", "topics.numPartitions", "topics", "topics.configs.name", "topics.assignments.brokerIds")
}

func BenchmarkWalkProduce(b *testing.B) {
	benchWalk(b, 0, 9, benchProduce(b), "acks", "transactionalId", "topicData.partitionData.index")
}
