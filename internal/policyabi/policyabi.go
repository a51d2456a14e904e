// Package policyabi is the bytes-in, bytes-out form of codec/policy that kwire's flat
// ABI speaks (kw_policy_check in capi/kwire.h): a policy as JSON in, a partition's
// verdict as JSON out.
package policyabi

import (
	"strconv"

	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/internal/jsonx"
)

// Check parses policyJSON (a policy.Config), checks recs (the records field of one
// Produce partition of topic) and appends the verdict to dst as JSON (AppendVerdict).
// An error (a *policy.ConfigError) is returned only for a bad policy; undecodable
// records are a verdict, not an error.
func Check(dst, policyJSON []byte, topic string, partition int32, recs []byte) ([]byte, error) {
	p, err := policy.Parse(policyJSON)
	if err != nil {
		return nil, err
	}
	v := p.NewChecker().Check(topic, partition, recs)
	return AppendVerdict(dst, &v), nil
}

// AppendVerdict appends v as the JSON kw_policy_check returns:
//
//	{"topic":"orders","partition":0,"policy":"enforce","rule":"topic:orders",
//	 "checked":true,"records":2,"failed":1,"accept":false,"errorCode":87,
//	 "error":"...", (only for undecodable records)
//	 "failures":[{"index":1,"offset":"1","reason":"no-schema","field":"value",
//	              "schema":{"source":"none","id":-1,"version":-1},"message":"..."}]}
//
// "failures" is left out when no record failed.
func AppendVerdict(b []byte, v *policy.PartitionVerdict) []byte {
	b = append(b, `{"topic":`...)
	b = jsonx.AppendString(b, v.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(v.Partition), 10)
	b = append(b, `,"policy":`...)
	b = jsonx.AppendString(b, v.Mode.String())
	b = append(b, `,"rule":`...)
	b = jsonx.AppendString(b, v.Rule)
	b = append(b, `,"checked":`...)
	b = strconv.AppendBool(b, v.Checked)
	b = append(b, `,"records":`...)
	b = strconv.AppendInt(b, int64(v.Records), 10)
	b = append(b, `,"failed":`...)
	b = strconv.AppendInt(b, int64(v.Failed), 10)
	b = append(b, `,"accept":`...)
	b = strconv.AppendBool(b, v.Accept)
	b = append(b, `,"errorCode":`...)
	b = strconv.AppendInt(b, int64(v.ErrorCode), 10)
	if v.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonx.AppendString(b, v.Error)
	}
	if len(v.Failures) > 0 {
		b = append(b, `,"failures":[`...)
		for i := range v.Failures {
			f := &v.Failures[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(f.Index), 10)
			b = append(b, `,"offset":"`...) // int64: a decimal string, as in kwire's JSON form
			b = strconv.AppendInt(b, f.Offset, 10)
			b = append(b, '"')
			b = append(b, `,"reason":`...)
			b = jsonx.AppendString(b, f.Reason.String())
			b = append(b, `,"field":`...)
			b = jsonx.AppendString(b, f.Field)
			b = append(b, `,"schema":{"source":`...)
			b = jsonx.AppendString(b, f.Schema.Source)
			b = append(b, `,"id":`...)
			b = strconv.AppendInt(b, int64(f.Schema.ID), 10)
			b = append(b, `,"version":`...)
			b = strconv.AppendInt(b, int64(f.Schema.Version), 10)
			b = append(b, `},"message":`...)
			b = jsonx.AppendString(b, f.Detail)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
