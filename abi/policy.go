package abi

import (
	"errors"
	"unicode/utf8"

	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/internal/policyabi"
)

// maxTopicLen is the longest topic name a Kafka string can carry.
const maxTopicLen = 1<<15 - 1

// PolicyCheck is kw_policy_check, appended to dst: it reads policyJSON (a
// codec/policy configuration), checks records (the records field of one Produce
// partition of topic) and returns the partition's verdict as JSON
// (policyabi.AppendVerdict). A bad policy is StatusJSON with the JSON
// path and byte offset of the offending value; an empty, over-long or non-UTF-8
// topic or a negative partition is StatusArg. Undecodable records are a verdict
// (accept false under enforce, with "error"), not an error.
func PolicyCheck(dst, policyJSON []byte, topic string, partition int32, records []byte) (out []byte, err error) {
	defer guard(&err)
	switch {
	case topic == "":
		return nil, newErr(StatusArg, "kwire: policy check: empty topic")
	case len(topic) > maxTopicLen:
		return nil, newErr(StatusArg, "kwire: policy check: topic of "+decimal(len(topic))+" bytes exceeds "+decimal(maxTopicLen))
	case !utf8.ValidString(topic):
		return nil, newErr(StatusArg, "kwire: policy check: topic is not valid UTF-8")
	case partition < 0:
		return nil, newErr(StatusArg, "kwire: policy check: negative partition "+decimal(partition))
	}
	out, perr := policyabi.Check(dst, policyJSON, topic, partition, records)
	if perr != nil {
		var ce *policy.ConfigError
		if errors.As(perr, &ce) {
			return nil, &Error{Status: StatusJSON, Text: "kwire: " + ce.Error(), Message: "policy", Version: -1, Path: ce.Path, Offset: ce.Offset}
		}
		return nil, &Error{Status: StatusJSON, Text: "kwire: " + perr.Error(), Message: "policy", Version: -1, Offset: -1}
	}
	return out, nil
}
