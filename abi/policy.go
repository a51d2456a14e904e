package abi

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/internal/jsonx"
)

// maxTopicLen is the longest topic name a Kafka string can carry.
const maxTopicLen = 1<<15 - 1

// PolicyCheck is kw_policy_check, appended to dst: it reads policyJSON (a
// codec/policy configuration), checks records (the records field of one Produce
// partition of topic) and returns the partition's verdict as JSON
// (appendPartitionVerdict). A bad policy is StatusJSON with the JSON
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
	p, perr := policy.Parse(policyJSON)
	if perr != nil {
		var ce *policy.ConfigError
		if errors.As(perr, &ce) {
			return nil, configError("policy", ce.Error(), ce.Path, ce.Offset)
		}
		return nil, configError("policy", perr.Error(), "", -1)
	}
	v := p.NewChecker().Check(topic, partition, records)
	return appendPartitionVerdict(dst, &v), nil
}

// configError is the StatusJSON error of a configuration (a policy, a rule set), with
// the JSON path and byte offset of the offending value when known.
func configError(what, text, path string, offset int) *Error {
	return &Error{Status: StatusJSON, Text: "kwire: " + text, Message: what, Version: -1, Path: path, Offset: offset}
}

// appendPartitionVerdict appends v as the JSON kw_policy_check returns:
//
//	{"topic":"orders","partition":0,"policy":"enforce","rule":"topic:orders",
//	 "checked":true,"records":2,"failed":1,"accept":false,"errorCode":87,
//	 "error":"...", (only for undecodable records)
//	 "failures":[{"index":1,"offset":"1","reason":"no-schema","field":"value",
//	              "schema":{"source":"none","id":-1,"version":-1},"message":"..."}]}
//
// "failures" is left out when no record failed.
func appendPartitionVerdict(b []byte, v *policy.PartitionVerdict) []byte {
	b = append(b, `{"topic":`...)
	b = jsonx.AppendString(b, v.Topic)
	b = appendInt(b, "partition", int64(v.Partition))
	b = appendString(b, "policy", v.Mode.String())
	b = appendString(b, "rule", v.Rule)
	b = appendBool(b, "checked", v.Checked)
	b = appendInt(b, "records", int64(v.Records))
	b = appendInt(b, "failed", int64(v.Failed))
	b = appendBool(b, "accept", v.Accept)
	b = appendInt(b, "errorCode", int64(v.ErrorCode))
	b = appendKnownString(b, "error", v.Error)
	if len(v.Failures) > 0 {
		b = append(b, `,"failures":[`...)
		for i := range v.Failures {
			f := &v.Failures[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(f.Index), 10)
			b = appendInt64(b, "offset", f.Offset)
			b = appendString(b, "reason", f.Reason.String())
			b = appendString(b, "field", f.Field)
			b = append(b, `,"schema":{"source":`...)
			b = jsonx.AppendString(b, f.Schema.Source)
			b = appendInt(b, "id", int64(f.Schema.ID))
			b = appendInt(b, "version", int64(f.Schema.Version))
			b = append(b, `},"message":`...)
			b = jsonx.AppendString(b, f.Detail)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
