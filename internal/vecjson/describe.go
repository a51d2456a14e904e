package vecjson

import (
	"strconv"

	"github.com/kwire/kwire/codec/records"
)

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// Describe reads src with kwire the way Kafka's MemoryRecords reader walks it:
// every complete entry, a partial trailing one skipped.
func Describe(d *records.Decoder, src []byte) ([]Batch, error) {
	out := []Batch{}
	for pos := 0; pos < len(src); {
		size, magic, err := records.PeekEntry(src[pos:])
		if err != nil {
			return out, err
		}
		if size == 0 {
			break
		}
		entry := src[pos : pos+size]
		pos += size
		if magic == 2 {
			b, _, err := records.ParseBatch(entry, d.SkipCRC)
			if err != nil {
				return out, err
			}
			recs, err := d.AppendRecords(nil, &b)
			if err != nil {
				return out, err
			}
			vb := Batch{
				BaseOffset:           i64(b.BaseOffset),
				LastOffset:           i64(b.LastOffset()),
				Magic:                2,
				Compression:          b.Compression().String(),
				TimestampType:        b.TimestampType().String(),
				MaxTimestamp:         i64(b.MaxTimestamp),
				ProducerID:           i64(b.ProducerID),
				ProducerEpoch:        b.ProducerEpoch,
				BaseSequence:         b.BaseSequence,
				PartitionLeaderEpoch: b.PartitionLeaderEpoch,
				Transactional:        b.IsTransactional(),
				Control:              b.IsControl(),
				DeleteHorizonMs:      i64(b.DeleteHorizonMs()),
				Records:              []Record{},
			}
			for _, r := range recs {
				vr := Record{
					Offset:    i64(r.Offset),
					Timestamp: i64(r.Timestamp),
					Sequence:  records.RecordSequence(b.BaseSequence, r.OffsetDelta),
					Key:       clone(r.Key),
					Value:     clone(r.Value),
					Headers:   []Header{},
				}
				for _, h := range r.Headers {
					vr.Headers = append(vr.Headers, Header{Key: string(h.Key), Value: clone(h.Value)})
				}
				if b.IsControl() {
					c, err := records.ParseControlRecord(r.Key, r.Value)
					if err != nil {
						return out, err
					}
					vr.Control = &Control{Type: c.Type.String()}
					if c.IsEndTxnMarker() {
						e := c.CoordinatorEpoch
						vr.Control.CoordinatorEpoch = &e
					}
				}
				vb.Records = append(vb.Records, vr)
			}
			out = append(out, vb)
			continue
		}
		w, _, err := records.ParseLegacyMessage(entry, d.SkipCRC)
		if err != nil {
			return out, err
		}
		vb := Batch{
			LastOffset:           i64(w.Offset),
			Magic:                w.Magic,
			Compression:          w.Compression().String(),
			TimestampType:        w.TimestampType().String(),
			MaxTimestamp:         i64(w.Timestamp),
			ProducerID:           "-1",
			ProducerEpoch:        -1,
			BaseSequence:         -1,
			PartitionLeaderEpoch: -1,
			DeleteHorizonMs:      "-1",
			Records:              []Record{},
		}
		err = d.ForEachInner(&w, func(m *records.LegacyMessage) error {
			if len(vb.Records) == 0 {
				vb.BaseOffset = i64(m.Offset)
			}
			vb.Records = append(vb.Records, Record{
				Offset:    i64(m.Offset),
				Timestamp: i64(m.Timestamp),
				Sequence:  -1,
				Key:       clone(m.Key),
				Value:     clone(m.Value),
				Headers:   []Header{},
			})
			return nil
		})
		if err != nil {
			return out, err
		}
		out = append(out, vb)
	}
	return out, nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
