// Package vecjson is the JSON Lines form of kwire's record-batch conformance
// vectors (conformance/vectors/records): the raw bytes of one or more batches
// and, for each batch, what a reader must see in it. The same form goes both
// ways: kafka-clients writes it for kwire to decode, and kwire writes it for
// Kafka's reader to check.
package vecjson

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// Vector is one line.
type Vector struct {
	Name    string  `json:"name"`
	Source  string  `json:"source"`
	Bytes   []byte  `json:"bytes"`
	Batches []Batch `json:"batches"`
}

// Batch is a magic 2 batch, or a legacy message (a compressed wrapper and its
// inner messages, or one plain message) as Kafka's reader presents it.
type Batch struct {
	BaseOffset           string   `json:"baseOffset"`
	LastOffset           string   `json:"lastOffset"`
	Magic                int8     `json:"magic"`
	Compression          string   `json:"compression"`
	TimestampType        string   `json:"timestampType"`
	MaxTimestamp         string   `json:"maxTimestamp"`
	ProducerID           string   `json:"producerId"`
	ProducerEpoch        int16    `json:"producerEpoch"`
	BaseSequence         int32    `json:"baseSequence"`
	PartitionLeaderEpoch int32    `json:"partitionLeaderEpoch"`
	Transactional        bool     `json:"transactional"`
	Control              bool     `json:"control"`
	DeleteHorizonMs      string   `json:"deleteHorizonMs"`
	Records              []Record `json:"records"`
}

// Record is one record; key and values are base64, null when null.
type Record struct {
	Offset    string   `json:"offset"`
	Timestamp string   `json:"timestamp"`
	Sequence  int32    `json:"sequence"`
	Key       []byte   `json:"key"`
	Value     []byte   `json:"value"`
	Headers   []Header `json:"headers"`
	Control   *Control `json:"control,omitempty"`
}

type Header struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

type Control struct {
	Type             string `json:"type"`
	CoordinatorEpoch *int32 `json:"coordinatorEpoch,omitempty"`
}

// Read reads a JSON Lines file of vectors. json.Unmarshal keeps nil for a JSON
// null and a non-nil empty slice for "".
func Read(path string) ([]Vector, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var v Vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Write writes vectors as JSON Lines.
func Write(path string, vs []Vector) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			f.Close()
			return err
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
