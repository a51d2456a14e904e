package kafkafilter

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/internal/transcode"
)

type bytesSrc []byte

func (b bytesSrc) At(off, n int) []byte {
	if off >= len(b) {
		return nil
	}
	return b[off:]
}

// walkProduceHead is the reference for produceHead: the walk over the whole body,
// as decide runs it, up to the first topic's partition count. ok is false when the
// walk fails or ends before (no topic, or a malformed body).
func walkProduceHead(t testing.TB, body []byte, ver int16) (h produceHeadInfo, topics int, ok bool) {
	plans()
	if producePlanErr != nil {
		t.Fatal(producePlanErr)
	}
	var w transcode.Walker
	if err := w.Reset(producePlan, ver, len(body), false); err != nil {
		return h, 0, false
	}
	for {
		switch w.Next(bytesSrc(body)) {
		case transcode.WalkField:
			ev := w.Event()
			switch ev.Sel {
			case selAcks:
				h.acks = int16(ev.Int)
			case selTopics:
				topics = int(ev.Int)
			case selTopicName:
				h.name = append([]byte{}, ev.Bytes...)
			case selTopicID:
				copy(h.id[:], ev.Bytes)
			case selPartitions:
				h.parts = int(ev.Int)
				return h, topics, true
			}
		default:
			return h, topics, false
		}
	}
}

// checkProduceHead holds produceHead to the walk on one body: on every prefix of
// it, what the fast path reads is what the walk reads, and it reads only what has
// arrived; on the whole body of a single-topic request it decides.
func checkProduceHead(t *testing.T, body []byte, ver int16, mustDecide bool) (decided bool) {
	t.Helper()
	want, topics, wantOK := walkProduceHead(t, body, ver)
	for n := 0; n <= len(body); n++ {
		got, ok := produceHead(body[:n], ver, len(body))
		if !ok {
			if n == len(body) && mustDecide && wantOK && topics == 1 {
				t.Fatalf("v%d: produceHead did not decide a whole single-topic request of %d bytes", ver, len(body))
			}
			continue
		}
		if !wantOK || topics != 1 {
			t.Fatalf("v%d, %d of %d bytes: produceHead decided %+v where the walk gives ok=%v, %d topics", ver, n, len(body), got, wantOK, topics)
		}
		if got.acks != want.acks || !bytes.Equal(got.name, want.name) || got.id != want.id || got.parts != want.parts {
			t.Fatalf("v%d, %d of %d bytes: produceHead %+v, walk %+v", ver, n, len(body), got, want)
		}
		decided = decided || n == len(body)
	}
	return decided
}

// TestProduceHeadMatchesWalk: on Produce requests of every version with random
// contents (one topic, several, none), the fast path agrees with the walk.
func TestProduceHeadMatchesWalk(t *testing.T) {
	api, _ := codec.LookupAPI(apiProduce)
	rnd := rand.New(rand.NewSource(7))
	for ver := api.Request.MinVersion; ver <= api.Request.MaxVersion; ver++ {
		decided := 0
		for i := 0; i < 40; i++ {
			req := codec.NewProduceRequest()
			codectest.Fill(req, rnd, ver)
			if i%2 == 0 && len(req.TopicData) > 1 {
				req.TopicData = req.TopicData[:1]
			}
			body, err := req.Encode(nil, ver)
			if err != nil {
				t.Fatal(err)
			}
			if checkProduceHead(t, body, ver, true) {
				decided++
			}
		}
		if decided < 10 {
			t.Errorf("v%d: the fast path decided %d of 40 requests, half of which name one topic", ver, decided)
		}
	}
}

// FuzzProduceHead: on any bytes, what the fast path decides the walk confirms.
func FuzzProduceHead(f *testing.F) {
	rnd := rand.New(rand.NewSource(1))
	for _, ver := range []int16{3, 8, 9, 12, 13} {
		req := codec.NewProduceRequest()
		codectest.Fill(req, rnd, ver)
		req.TopicData = req.TopicData[:min(1, len(req.TopicData))]
		body, _ := req.Encode(nil, ver)
		f.Add(body, ver)
	}
	f.Fuzz(func(t *testing.T, body []byte, ver int16) {
		if ver < 0 || ver > 13 {
			return
		}
		api, _ := codec.LookupAPI(apiProduce)
		if !api.Request.ValidVersion(ver) {
			return
		}
		checkProduceHead(t, body, ver, false)
	})
}
