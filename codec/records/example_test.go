//go:build !kwire_nocompress

package records_test

import (
	"fmt"

	"github.com/kwire/kwire/codec/records"
)

// Build a zstd batch, then walk it as messages.
func ExampleDecoder_ForEachMessage() {
	recs := []records.Record{
		{Timestamp: 1000, Key: []byte("k1"), Value: []byte{0, 0, 0, 0, 42, 'h', 'i'}},
		{Timestamp: 1001, Key: nil, Value: []byte("plain"), Headers: []records.Header{{Key: []byte("schema.id"), Value: []byte("7")}}},
	}
	b := records.Batch{BaseOffset: 100, Attributes: int16(records.CompressionZstd), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	b.SetDeltas(recs)
	var enc records.Encoder
	data, err := enc.AppendBatch(nil, &b, recs)
	if err != nil {
		panic(err)
	}

	var d records.Decoder
	_, err = d.ForEachMessage(data, "orders", 0, func(m *records.Message) error {
		fmt.Printf("%s/%d@%d key=%q schema=%v:%d payload=%q\n", m.Topic, m.Partition, m.Offset, m.Key, m.Schema.Source, m.Schema.ID, m.Payload())
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// orders/0@100 key="k1" schema=value-prefix:42 payload="hi"
	// orders/0@101 key="" schema=header:7 payload="plain"
}
