package kafkafilter

import (
	"encoding/binary"
	"math/rand"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/envoy/kafkatest"
)

// benchProduce is n Produce v9 requests of 64 records of 1 KiB (lz4 batches over
// four partitions), every record carrying schema id 1: the traffic of the proxy
// benchmark in conformance/hosts/proxywasm.
func benchProduce(b testing.TB, n int) []byte {
	var all []byte
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < n; i++ {
		var msgs []records.Message
		for j := 0; j < 64; j++ {
			v := make([]byte, 1024)
			binary.BigEndian.PutUint32(v[1:], 1)
			rnd.Read(v[5:])
			msgs = append(msgs, records.Message{Topic: "bench", Partition: int32(j % 4), Value: v})
		}
		req, err := kafkatest.Produce(9, 1, records.CompressionLZ4, msgs)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, kafkatest.MustRequest(int32(i+1), 9, req)...)
	}
	return all
}

// BenchmarkDownstreamProduce runs the benchmark traffic through a Conn in whole
// frames (what the proxy-wasm module hands over after buffering), with the policy
// named by each sub-benchmark.
func BenchmarkDownstreamProduce(b *testing.B) {
	const n = 50
	traffic := benchProduce(b, n)
	var frames [][]byte
	for rest := traffic; len(rest) > 0; {
		k := 4 + int(binary.BigEndian.Uint32(rest))
		frames = append(frames, rest[:k])
		rest = rest[k:]
	}
	resp := codec.NewProduceResponse()
	tmpl, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{}, 9, resp)
	if err != nil {
		b.Fatal(err)
	}
	// The broker's answer under a tenant names the prefixed topic.
	rt := codec.ProduceResponseTopicProduceResponse{Name: "team-a.bench"}
	for i := int32(0); i < 4; i++ {
		pr := codec.NewProduceResponsePartitionProduceResponse()
		pr.Index = i
		rt.PartitionResponses = append(rt.PartitionResponses, *pr)
	}
	resp.Responses = []codec.ProduceResponseTopicProduceResponse{rt}
	tenantTmpl, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{}, 9, resp)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, cfg string }{
		{"enforce", `{"schema":{"rules":[{"topic":"bench","policy":"enforce","schema_ids":[1]}]}}`},
		{"none", `{"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]}}`},
		{"nopolicy", `{}`},
		{"rules", `{"rules":[{"api":"Produce","field":"acks","in":[-1,1]},{"api":"Produce","field":"topicData[].partitionData[].index","max":99}]}`},
		{"tenant", `{"tenant":{"prefix":"team-a."}}`},
		{"safeguards", `{"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]},"rules":[{"api":"Produce","field":"acks","in":[-1,1]},{"api":"Produce","field":"timeoutMs","max":60000},{"api":"*","field":"header.clientId","pattern":"^[a-z0-9-]+$"}]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := New(newHost(), []byte(bc.cfg))
			if err != nil {
				b.Fatal(err)
			}
			c := f.NewConn()
			reply := append([]byte(nil), tmpl...)
			if bc.name == "tenant" {
				reply = append([]byte(nil), tenantTmpl...)
			}
			b.SetBytes(int64(len(traffic)))
			b.ReportAllocs()
			for b.Loop() {
				for _, fr := range frames {
					act := c.OnDownstream(sliceBuffer(fr), false)
					if act.Close || act.Pause || act.Edit && bc.name != "tenant" {
						b.Fatalf("closed %v, paused %v, edited %v", act.Close, act.Pause, act.Edit)
					}
					copy(reply[4:8], fr[8:12])
					c.OnUpstream(sliceBuffer(reply), false)
				}
			}
		})
	}
}

// BenchmarkProduceSteps times the steps of one Produce request of the benchmark
// traffic: indexing it (parse), and checkProduce under a policy that does not
// apply to its topic (none) and under the enforcing one (enforce).
func BenchmarkProduceSteps(b *testing.B) {
	frame := benchProduce(b, 1)
	hlen, err := codec.RequestHeaderLen(frame)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parse", func(b *testing.B) {
		f, err := New(newHost(), []byte(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := f.doc.ParseAPI(frame[hlen:], apiProduce, codec.KindRequest, 9); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct{ name, cfg string }{
		{"none", `{"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]}}`},
		{"enforce", `{"schema":{"rules":[{"topic":"bench","policy":"enforce","schema_ids":[1]}]}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := New(newHost(), []byte(bc.cfg))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if act := f.checkProduce(frame, hlen, 9); !act.forwardAsIs {
					b.Fatal("not forwarded as is")
				}
			}
		})
	}
}

// BenchmarkStreamFetch runs a 1 MiB Fetch response through a Conn in 64 KiB reads,
// natively, per fetch_endpoints mode: the filter's own cost, without a VM.
func BenchmarkStreamFetch(b *testing.B) {
	for _, bc := range []struct {
		name, cfg string
		ver       int16
	}{
		{"v12-pass", `{"brokers":{"1":"proxy:9000"}}`, 12},
		{"v18-in-place", `{"brokers":{"1":"proxy:9000"}}`, 18},
		{"v18-hold", `{"brokers":{"1":"proxy:9000"},"fetch_endpoints":"hold"}`, 18},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := New(newHost(), []byte(bc.cfg))
			if err != nil {
				b.Fatal(err)
			}
			c := f.NewConn()
			req, resp := fetchRequest(b, 5, bc.ver), fetchResponse(b, 5, bc.ver, 10, 105<<10, nil)
			b.SetBytes(int64(len(resp)))
			b.ReportAllocs()
			for b.Loop() {
				c.OnDownstream(sliceBuffer(req), false)
				for _, piece := range chunk64K(resp) {
					if act := c.OnUpstream(sliceBuffer(piece), false); act.Edit && bc.name != "v18-hold" {
						b.Fatal("edited")
					}
				}
			}
		})
	}
}
