package records

import (
	"github.com/kwire/kwire/codec"
)

// ProducerState carries an idempotent or transactional producer's identity
// into the batches a ProduceRequest gets.
type ProducerState struct {
	ID            int64
	Epoch         int16
	Transactional bool
}

// ProduceOptions choose how AppendProduceMessages writes batches.
type ProduceOptions struct {
	Compression Compression
	// Level is the codec's compression level, 0 for its default.
	Level int
	// Producer is nil for a plain producer (producer id, epoch and sequence -1).
	// When set, each partition's base sequence is the Sequence of its first message.
	Producer *ProducerState
	// PartitionLeaderEpoch is written into magic 2 batches (-1 is what producers send).
	PartitionLeaderEpoch int32
}

// ProduceMagic is the message format a Produce request of the given version
// carries: magic 0 for v0-v1, 1 for v2, 2 from v3 on.
func ProduceMagic(version int16) int8 {
	switch {
	case version <= 1:
		return 0
	case version == 2:
		return 1
	}
	return 2
}

type topicPartition struct {
	topic string
	id    codec.UUID
	part  int32
}

// AppendProduceMessages adds msgs to req as one batch per topic-partition, in
// the order partitions first appear in msgs, written in the format the Produce
// version needs (see ProduceMagic). From version 13 topics are identified by
// Message.TopicID, before that by Message.Topic. Topics and partitions already
// in req are reused: a new batch is appended to a partition's records.
//
// Offsets count from 0 within each batch, timestamps are the messages' (create
// time), as a producer sends them. Magic 0 and 1 have no headers: a message with
// headers is an error there.
func (e *Encoder) AppendProduceMessages(req *codec.ProduceRequest, version int16, msgs []Message, opts ProduceOptions) error {
	byID := version >= 13
	magic := ProduceMagic(version)
	var order []topicPartition
	groups := map[topicPartition][]int{}
	for i := range msgs {
		m := &msgs[i]
		k := topicPartition{part: m.Partition}
		if byID {
			k.id = m.TopicID
		} else {
			k.topic = m.Topic
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		idx := groups[k]
		td := findTopic(req, k, byID)
		pd := findPartition(td, k.part)
		var err error
		if magic == 2 {
			pd.Records, err = e.appendProduceBatch(pd.Records, msgs, idx, opts)
		} else {
			pd.Records, err = e.appendProduceLegacy(pd.Records, magic, msgs, idx, opts)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func findTopic(req *codec.ProduceRequest, k topicPartition, byID bool) *codec.ProduceRequestTopicProduceData {
	for i := range req.TopicData {
		t := &req.TopicData[i]
		if (byID && t.TopicID == k.id) || (!byID && t.Name == k.topic) {
			return t
		}
	}
	t := codec.NewProduceRequestTopicProduceData()
	if byID {
		t.TopicID = k.id
	} else {
		t.Name = k.topic
	}
	req.TopicData = append(req.TopicData, *t)
	return &req.TopicData[len(req.TopicData)-1]
}

func findPartition(t *codec.ProduceRequestTopicProduceData, part int32) *codec.ProduceRequestPartitionProduceData {
	for i := range t.PartitionData {
		if t.PartitionData[i].Index == part {
			return &t.PartitionData[i]
		}
	}
	p := codec.NewProduceRequestPartitionProduceData()
	p.Index = part
	t.PartitionData = append(t.PartitionData, *p)
	return &t.PartitionData[len(t.PartitionData)-1]
}

func (e *Encoder) appendProduceBatch(dst []byte, msgs []Message, idx []int, opts ProduceOptions) ([]byte, error) {
	recs := make([]Record, len(idx))
	for j, i := range idx {
		m := &msgs[i]
		recs[j] = Record{Timestamp: m.Timestamp, Key: m.Key, Value: m.Value, Headers: m.Headers}
	}
	b := Batch{PartitionLeaderEpoch: opts.PartitionLeaderEpoch, Attributes: int16(opts.Compression) & AttrCompressionMask,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	if p := opts.Producer; p != nil {
		b.ProducerID, b.ProducerEpoch = p.ID, p.Epoch
		b.BaseSequence = msgs[idx[0]].Sequence
		if p.Transactional {
			b.Attributes |= AttrTransactional
		}
	}
	b.SetDeltas(recs)
	saved := e.Level
	e.Level = opts.Level
	defer func() { e.Level = saved }()
	return e.AppendBatch(dst, &b, recs)
}

func (e *Encoder) appendProduceLegacy(dst []byte, magic int8, msgs []Message, idx []int, opts ProduceOptions) ([]byte, error) {
	lm := make([]LegacyMessage, len(idx))
	for j, i := range idx {
		m := &msgs[i]
		if len(m.Headers) > 0 {
			return dst, newErr(0, j, "headers", 0, detail(ErrUnsupported, "magic %d messages have no headers", magic))
		}
		lm[j] = LegacyMessage{Timestamp: m.Timestamp, Key: m.Key, Value: m.Value}
	}
	saved := e.Level
	e.Level = opts.Level
	defer func() { e.Level = saved }()
	return e.AppendLegacySet(dst, LegacySet{Magic: magic, Compression: opts.Compression, TimestampType: CreateTime}, lm)
}
