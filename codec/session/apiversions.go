package session

import (
	"math"

	"github.com/kwire/kwire/internal/errtext"
	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/transcode"
	"github.com/kwire/kwire/internal/wire"
)

// The session writes, checks and reads ApiVersions with the schema-driven transcoder
// (internal/transcode), which the WebAssembly module carries for every message anyway,
// rather than with the generated codec.APIVersions* types: those would be the only
// generated message code the module links. The transcoder writes the bytes the typed
// codec writes and fails with the same errors (*codec.DecodeError, *codec.VersionError:
// message, version, field path, offset).

// The descriptor names of ApiVersions' request and response.
const (
	apiVersionsRequestName  = "ApiVersionsRequest"
	apiVersionsResponseName = "ApiVersionsResponse"
)

// apiVersionsDefault is the JSON form of an ApiVersions request with every field at
// its default: v3+ client software fields empty (FinishFrame fills them in).
var apiVersionsDefault = []byte("{}")

// apiRange is one entry of the apiKeys table of an ApiVersions response.
type apiRange struct{ key, min, max int16 }

// readApiVersionsResponse decodes an ApiVersions response body at version v and returns
// its error code and its apiKeys table. The transcoder checks the whole body, as the
// typed codec's Decode does, and writes its JSON form, from which the two are read.
func readApiVersionsResponse(body []byte, v int16) (code int16, keys []apiRange, err error) {
	js, err := transcode.AppendJSON(nil, apiVersionsResponseName, v, body, nil)
	if err != nil {
		return 0, nil, err
	}
	d := jsonx.NewDecoder(js)
	int16Value := func() int16 { return int16(d.Int(math.MinInt16, math.MaxInt16)) }
	d.Object(func(key string) {
		switch key {
		case "errorCode":
			code = int16Value()
		case "apiKeys":
			if !d.BeginArray() {
				return
			}
			for first := true; d.More(&first, ']'); {
				var k apiRange
				d.Object(func(key string) {
					switch key {
					case "apiKey":
						k.key = int16Value()
					case "minVersion":
						k.min = int16Value()
					case "maxVersion":
						k.max = int16Value()
					default:
						d.Skip()
					}
				})
				keys = append(keys, k)
			}
		default:
			d.Skip()
		}
	})
	d.End()
	if err := d.Err(); err != nil {
		// The transcoder's own output always reads; this is a kwire bug.
		return 0, nil, &proto.DecodeError{Message: apiVersionsResponseName, Version: v, Err: err,
			Detail: "reading its JSON form"}
	}
	return code, keys, nil
}

// apiVersionsSoftwareFields are the client software fields of ApiVersions v3+: the
// first two fields of the body, compact strings.
var apiVersionsSoftwareFields = [2]string{"clientSoftwareName", "clientSoftwareVersion"}

// softwareTooLong is the typed encoder's failure for a client software value above
// Kafka's string limit in an ApiVersions request at bv, or nil.
func softwareTooLong(bv int16, field, value string) error {
	if len(value) <= math.MaxInt16 {
		return nil
	}
	return &proto.EncodeError{Message: apiVersionsRequestName, Version: bv, Path: field, Err: wire.ErrTooLong,
		Detail: wire.TooLong(len(value))}
}

// fillApiVersionsBody is fillApiVersions on a request body at bv (>= 3) of a frame
// labelled version: it returns the body with the empty client software fields filled
// in, or nil when there is nothing to change or the body does not decode (the body of
// a request is the caller's).
//
// The transcoder checks the body as the typed codec's Decode does. The two fields are
// then read and written as wire strings, not through the JSON form, which holds invalid
// UTF-8 as U+FFFD: an error quotes a refused value byte for byte, and the bytes after
// the two fields (clusterId, nodeId, tagged fields, trailing bytes) are kept as they
// are.
func (s *Session) fillApiVersionsBody(body []byte, bv, version int16) ([]byte, error) {
	if _, err := transcode.AppendJSON(nil, apiVersionsRequestName, bv, body, nil); err != nil {
		return nil, nil
	}
	r := wire.Reader{Src: body}
	values := [2]string{string(r.StringView(true)), string(r.StringView(true))}
	if r.Err != nil {
		return nil, nil // not reached: the body decoded
	}
	rest := body[r.Off:]
	filled := false
	for i, v := range [2]string{s.softwareName(), s.softwareVersion()} {
		if values[i] == "" {
			values[i], filled = v, true
		}
	}
	for i, field := range apiVersionsSoftwareFields {
		if err := checkSoftware(version, field, values[i]); err != nil {
			return nil, err
		}
	}
	if !filled {
		return nil, nil
	}
	for i, field := range apiVersionsSoftwareFields {
		if err := softwareTooLong(bv, field, values[i]); err != nil {
			return nil, errtext.Wrap("kwire session: ApiVersions v"+itoa(version)+" request: "+err.Error(), err)
		}
	}
	out := make([]byte, 0, 2*3+len(values[0])+len(values[1])+len(rest)) // a length prefix takes at most 3 bytes
	out = wire.AppendString(out, values[0], true)
	out = wire.AppendString(out, values[1], true)
	return append(out, rest...), nil
}
