package records

import (
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/errtext"
)

// ForEachFetchMessage calls fn for every message of a FetchResponse: every
// topic, partition and batch, in response order. Topics are named by Topic up to
// version 12; from version 13 responses carry only TopicId, which is set in
// Message.TopicID and, when names has it, resolved into Message.Topic.
//
// Messages of aborted transactions are marked Aborted, using each partition's
// AbortedTransactions list the way Kafka's read_committed consumer does; they
// are still passed to fn. Partitions with an error code and no records are
// passed over. A partial batch at the end of a partition is skipped, as Kafka
// does. Errors name the topic and partition and wrap the *Error.
//
// As with ForEachMessage, the Message is reused and aliases the response's
// record bytes (or the decoder's buffer).
func (d *Decoder) ForEachFetchMessage(resp *codec.FetchResponse, names map[codec.UUID]string, fn func(m *Message) error) error {
	for ti := range resp.Responses {
		t := &resp.Responses[ti]
		topic := t.Topic
		if topic == "" && names != nil {
			topic = names[t.TopicID]
		}
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			if len(p.Records) == 0 {
				continue
			}
			ab := abortTracker{list: p.AbortedTransactions}
			_, err := d.ForEachMessage(p.Records, topic, p.PartitionIndex, func(m *Message) error {
				m.TopicID = t.TopicID
				m.Aborted = ab.aborted(m)
				return fn(m)
			})
			if err != nil {
				name := topic
				if name == "" {
					name = t.TopicID.String()
				}
				// An *Error's text starts with "records: " already: say it once.
				text := err.Error()
				if len(text) >= len("records: ") && text[:len("records: ")] == "records: " {
					text = text[len("records: "):]
				}
				return errtext.Wrap("records: fetch topic "+name+" partition "+strconv.Itoa(int(p.PartitionIndex))+": "+text, err)
			}
		}
	}
	return nil
}

// abortTracker follows Kafka's read_committed rule: a producer's transactional
// data from its aborted transaction's first offset up to its ABORT marker is
// aborted.
type abortTracker struct {
	list    []codec.FetchResponseAbortedTransaction
	started []int64 // producer ids whose aborted transaction has begun
}

func (a *abortTracker) aborted(m *Message) bool {
	if (len(a.list) == 0 && len(a.started) == 0) || !m.Transactional {
		return false
	}
	// Open every aborted transaction that starts at or before the end of this
	// message's batch (Kafka decides per batch).
	for i := 0; i < len(a.list); {
		if a.list[i].FirstOffset <= m.batchLastOffset {
			a.started = append(a.started, a.list[i].ProducerID)
			a.list = append(a.list[:i:i], a.list[i+1:]...)
			continue
		}
		i++
	}
	for i, pid := range a.started {
		if pid != m.ProducerID {
			continue
		}
		if m.Control {
			if m.ControlRecord.Type == ControlAbort {
				a.started = append(a.started[:i], a.started[i+1:]...)
			}
			return false
		}
		return true
	}
	return false
}
