//go:build !wasm || kwire_rules

package abi

import (
	"bytes"
	"encoding/base64"
	"errors"
	"sync"

	"github.com/kwire/kwire/codec/rules"
)

// RulesCheck is kw_rules_check, appended to dst: it reads rulesJSON (a codec/rules
// rule set), applies it to one whole request frame, and returns the verdict as JSON:
//
//	{"allowed":true}
//	{"allowed":false,"rule":0,"api":"CreateTopics","field":"topics[].replicationFactor",
//	 "path":"topics[1].replicationFactor","value":"1",
//	 "message":"topics[1].replicationFactor is 1, below the minimum 3",
//	 "place":"perEntity","response":"<base64 of the response frame>"}
//
// A request whose body cannot be read is refused (policy fails closed) with rule -1
// and empty api, field, path and value. "place" says where the error lands in the
// api's response (perEntity, topLevel, or nowhere: no response can carry it, close
// the connection); "response" is the whole response frame a proxy sends in the
// broker's place, every error field errorCode, or null (place nowhere, or a Produce
// request with acks=0, which gets no response). A bad rule set is StatusJSON with the
// JSON path and byte offset of the offending value; a frame whose header cannot be
// read is StatusDecode; an errorCode of 0 or outside int16 is StatusArg.
//
// The rule set is parsed once and kept while the same bytes come back (the common
// case: one configuration, many frames).
func RulesCheck(dst, rulesJSON, frame []byte, errorCode int32) (out []byte, err error) {
	defer guard(&err)
	if errorCode == 0 || errorCode != int32(int16(errorCode)) {
		return nil, newErr(StatusArg, "kwire: rules check: error code "+decimal(errorCode)+" is not a Kafka error (a non-zero int16)")
	}
	set, err := parsedRules(rulesJSON)
	if err != nil {
		return nil, err
	}
	r, err := set.CheckFrame(frame, int16(errorCode))
	if err != nil {
		return nil, &Error{Status: StatusDecode, Text: "kwire: rules check: " + err.Error(), Message: "RequestHeader", Version: -1, Offset: -1}
	}
	if r == nil {
		return append(dst, `{"allowed":true}`...), nil
	}
	b := append(dst, `{"allowed":false`...)
	v := r.Violation
	if v == nil {
		v = &rules.Violation{Rule: -1}
	}
	b = appendInt(b, "rule", int64(v.Rule))
	b = appendString(b, "api", v.API)
	b = appendString(b, "field", v.Field)
	b = appendString(b, "path", v.Path)
	b = appendString(b, "value", v.Value)
	b = appendString(b, "message", r.Message)
	place := "nowhere"
	switch r.Place {
	case rules.PerEntity:
		place = "perEntity"
	case rules.TopLevel:
		place = "topLevel"
	}
	b = appendString(b, "place", place)
	b = append(b, `,"response":`...)
	if r.Response == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, r.Response)
		b = append(b, '"')
	}
	return append(b, '}'), nil
}

// lastRules is the rule set RulesCheck parsed last, with its bytes.
var lastRules struct {
	sync.Mutex
	src []byte
	set *rules.Set
}

func parsedRules(src []byte) (*rules.Set, error) {
	lastRules.Lock()
	defer lastRules.Unlock()
	if lastRules.set != nil && bytes.Equal(lastRules.src, src) {
		return lastRules.set, nil
	}
	set, err := rules.Parse(src)
	if err != nil {
		var ce *rules.ConfigError
		if errors.As(err, &ce) {
			return nil, configError("rules", ce.Error(), ce.Path, ce.Offset)
		}
		return nil, configError("rules", err.Error(), "", -1)
	}
	lastRules.src, lastRules.set = append(lastRules.src[:0], src...), set
	return set, nil
}
