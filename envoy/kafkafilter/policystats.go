package kafkafilter

import (
	"strings"

	"github.com/kwire/kwire/codec/policy"
)

// Per-topic policy counters. For every topic a rule checks (mode warn or
// enforce), the filter counts
//
//	<prefix>.policy.topic.<topic>.records_checked
//	<prefix>.policy.topic.<topic>.<check>.<outcome>
//
// where check is the side and check that failed (value_schema, value_json,
// value_null, key_schema, key_json, key_null; undecodable counts partitions whose
// records could not be read) and outcome is warned (the rule's mode is warn: the
// records went through) or rejected (enforce: their partition was answered by the
// filter). A counter is defined on its first non-zero count; the counts of one
// Produce request are added in one host call per counter. Past maxStatTopics
// topics, further topics count under the topic name "_other".

// The counters of one topic, by index.
const (
	statChecked = iota
	statValueSchema
	statValueJSON
	statValueNull
	statKeySchema
	statKeyJSON
	statKeyNull
	statUndecodable
	nChecks = iota - 1 // failure checks (each with two outcomes)
)

var statNames = [...]string{"value_schema", "value_json", "value_null", "key_schema", "key_json", "key_null", "undecodable"}

// nStats is the number of counters of a topic: records_checked, then each check
// warned and rejected.
const nStats = 1 + 2*nChecks

// maxStatTopics bounds the topics counted by name (a prefix rule may match any
// number of them).
const maxStatTopics = 1000

// policyStats are the filter's per-topic policy counters.
type policyStats struct {
	topics  map[string]*topicStats
	touched []*topicStats // topics with pending counts
}

type topicStats struct {
	name    string
	ids     [nStats]counter
	defined [nStats]bool
	pending [nStats]int
	touched bool
}

// statIndex is the counter of a failing record's check under mode.
func statIndex(r policy.Reason, field string, enforce bool) int {
	c := statValueSchema
	switch r {
	case policy.InvalidJSON, policy.DuplicateKey:
		c = statValueJSON
	case policy.NullRefused:
		c = statValueNull
	}
	if field == "key" {
		c += statKeySchema - statValueSchema
	}
	return statOutcome(c, enforce)
}

func statOutcome(check int, enforce bool) int {
	i := 1 + 2*(check-statValueSchema)
	if enforce {
		i++
	}
	return i
}

func statName(i int) string {
	if i == statChecked {
		return "records_checked"
	}
	i--
	name := statNames[i/2]
	if i%2 == 0 {
		return name + ".warned"
	}
	return name + ".rejected"
}

// countPolicy adds the verdict of one partition of topic to the pending counts.
func (f *Filter) countPolicy(topic string, v *policy.PartitionVerdict) {
	if !v.Checked {
		return
	}
	s := &f.s.stats
	st := s.topics[topic]
	if st == nil {
		if s.topics == nil {
			s.topics = map[string]*topicStats{}
		}
		if len(s.topics) >= maxStatTopics {
			topic = "_other"
		}
		if st = s.topics[topic]; st == nil {
			st = &topicStats{name: strings.Clone(topic)}
			s.topics[st.name] = st
		}
	}
	if !st.touched {
		st.touched = true
		s.touched = append(s.touched, st)
	}
	enforce := v.Mode == policy.Enforce
	st.pending[statChecked] += v.Records
	for i := range v.Failures {
		st.pending[statIndex(v.Failures[i].Reason, v.Failures[i].Field, enforce)]++
	}
	if v.Err != nil {
		st.pending[statOutcome(statUndecodable, enforce)]++
	}
}

// flushPolicy adds the pending counts to the host's counters.
func (f *Filter) flushPolicy() {
	s := &f.s.stats
	for _, st := range s.touched {
		for i, n := range st.pending {
			if n == 0 {
				continue
			}
			if !st.defined[i] {
				st.ids[i] = f.counter("policy.topic." + st.name + "." + statName(i))
				st.defined[i] = true
			}
			f.inc(st.ids[i], n)
			st.pending[i] = 0
		}
		st.touched = false
	}
	s.touched = s.touched[:0]
}
