package frames

import (
	"github.com/kwire/kwire/codec"
)

// Topics maps topic ids to names. It learns them from the responses in which the
// broker states both: Metadata v10+, CreateTopics v7+, DeleteTopics v6+ and
// DescribeTopicPartitions. A Writer given Topics (ResolveTopics) learns from the
// responses it writes and names the topics of frames that carry ids alone (Produce
// v13, Fetch v13+, ShareFetch, ...). To name the topics of frames that come before
// the response that names them, set Missing.
type Topics struct {
	names map[codec.UUID]string
	// Missing, when set, is called the first time Name is asked for an id it does not
	// know, before Name answers, and then never again: a caller that can read the whole
	// capture learns all its names there (Learn), so that the frame that asked and every
	// frame after it get them. A capture whose ids are all named by earlier responses
	// never calls it.
	Missing func(t *Topics)
}

// NewTopics returns an empty map.
func NewTopics() *Topics { return &Topics{names: map[codec.UUID]string{}} }

// Len is the number of ids named.
func (t *Topics) Len() int { return len(t.names) }

// Name returns the name of a topic id, if a response named it (see Missing).
func (t *Topics) Name(id [16]byte) (string, bool) {
	name, ok := t.names[id]
	if !ok && t.Missing != nil && id != (codec.UUID{}) {
		fill := t.Missing
		t.Missing = nil
		fill(t)
		name, ok = t.names[id]
	}
	return name, ok
}

// Add names a topic id; the zero id and an empty name are ignored.
func (t *Topics) Add(id [16]byte, name string) {
	if id == (codec.UUID{}) || name == "" {
		return
	}
	t.names[id] = name
}

// Learns reports whether responses of apiKey at version name topic ids (Learn reads
// only those).
func Learns(apiKey, version int16) bool {
	switch apiKey {
	case 3: // Metadata
		return version >= 10
	case 19: // CreateTopics
		return version >= 7
	case 20: // DeleteTopics
		return version >= 6
	case 75: // DescribeTopicPartitions
		return true
	}
	return false
}

// Learn reads the topic ids and names of a response frame (size prefix included) to a
// request of apiKey at version. Frames of other apis, and frames that do not decode,
// teach nothing.
func (t *Topics) Learn(frame []byte, apiKey, version int16) {
	if !Learns(apiKey, version) {
		return
	}
	f, err := codec.DecodeResponseFrame(frame, apiKey, version)
	if err != nil {
		return
	}
	switch b := f.Body.(type) {
	case *codec.MetadataResponse:
		for i := range b.Topics {
			t.addNamed(b.Topics[i].TopicID, b.Topics[i].Name)
		}
	case *codec.CreateTopicsResponse:
		for i := range b.Topics {
			t.Add(b.Topics[i].TopicID, b.Topics[i].Name)
		}
	case *codec.DeleteTopicsResponse:
		for i := range b.Responses {
			t.addNamed(b.Responses[i].TopicID, b.Responses[i].Name)
		}
	case *codec.DescribeTopicPartitionsResponse:
		for i := range b.Topics {
			t.addNamed(b.Topics[i].TopicID, b.Topics[i].Name)
		}
	}
}

// addNamed adds the topic id of an entry whose name is nullable, when it has a name.
func (t *Topics) addNamed(id [16]byte, name *string) {
	if name != nil {
		t.Add(id, *name)
	}
}
