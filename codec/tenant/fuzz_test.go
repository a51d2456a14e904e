package tenant

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/transcode"
)

// FuzzTenant maps arbitrary bytes as a request or response of any api a tenant may
// use. No input panics. A request that maps reaches the broker with every entity name
// under the prefix (nothing un-renamed), and stripping the prefix again gives the bytes
// the client sent. A response that maps parses, and names only what the broker named
// under the prefix.
func FuzzTenant(f *testing.F) {
	for _, v := range vectors(f) {
		f.Add(v.APIKey, v.Version, v.Kind == "response", v.Bytes)
	}
	for _, s := range consumerSeeds(f) {
		f.Add(s.key, s.version, s.response, s.body)
	}
	tn, _ := New(testPrefix)
	f.Fuzz(func(t *testing.T, key, version int16, response bool, body []byte) {
		if APIAccess(key) != Mapped {
			return
		}
		kind := proto.KindRequest
		if response {
			kind = proto.KindResponse
		}
		if !response {
			out, c, err := tn.Request(nil, body, key, version)
			if err != nil {
				return
			}
			var d transcode.Doc
			if err := d.ParseAPI(out, key, kind, version); err != nil {
				t.Fatalf("the mapped request does not parse: %v", err)
			}
			n := 0
			check := func(s string) string {
				rest, ok := strings.CutPrefix(s, testPrefix)
				if !ok {
					t.Fatalf("%q reaches the broker without the prefix", s)
				}
				n++
				return rest
			}
			for _, h := range handFields(&d, key, "request") {
				if s, null := d.Str(h); !null {
					d.SetString(h, check(string(s)))
				}
			}
			for _, h := range regexFields(&d, key, "request") {
				s, _ := d.Str(h)
				r, ok := tn.unwrapRegex(string(s))
				if !ok {
					t.Fatalf("regex %q reaches the broker outside the prefix", s)
				}
				n++
				d.SetString(h, r)
			}
			if _, _, err := d.FilterEntities(entities, func(_ uint8, s string) (string, transcode.Verdict) {
				return check(s), transcode.Keep
			}); err != nil {
				t.Fatal(err)
			}
			// A consumer group's subscriptions and assignments: every topic in them
			// under the prefix too.
			for _, cf := range consumerFields(&d, key, true, c.ConsumerGroup) {
				b := d.Bytes(cf.n)
				names, ok := consumerTopics(b, cf.assignment)
				if !ok {
					continue // not the consumer protocol: passed as it is
				}
				for _, s := range names {
					check(s)
				}
				stripped, _ := tn.consumerBytes(b, cf.assignment, false)
				d.SetBytes(cf.n, stripped)
			}
			if n != c.Renamed {
				t.Fatalf("%d names under the prefix, %d renamed", n, c.Renamed)
			}
			if key == keyDescribeTopics {
				// A listing of every topic starts at the prefix: the cursor the client did
				// not send is the start of the tenant's names (stripped: empty), at 0.
				var orig transcode.Doc
				if orig.ParseAPI(body, key, kind, version) == nil && orig.Len(orig.Field(orig.Root(), "topics")) == 0 && orig.IsNull(orig.Field(orig.Root(), "cursor")) {
					cur := d.Field(d.Root(), "cursor")
					if s, _ := d.Str(d.Field(cur, "topicName")); string(s) != testPrefix || d.Int(d.Field(cur, "partitionIndex")) != 0 {
						t.Fatalf("a listing of every topic reaches the broker with cursor %q at %d", s, d.Int(d.Field(cur, "partitionIndex")))
					}
					d.SetStruct(cur, []byte{0xff})
				}
			}
			back, err := d.AppendTo(nil)
			if err != nil {
				t.Fatalf("strip after prefix: %v", err)
			}
			if !bytes.Equal(back, body) && !sameMeaning(t, key, version, back, body) {
				t.Fatalf("strip after prefix: not the client's request")
			}
			return
		}
		out, c, err := tn.Response(nil, body, key, version)
		if err != nil {
			return
		}
		var d transcode.Doc
		if err := d.ParseAPI(out, key, kind, version); err != nil {
			t.Fatalf("the mapped response does not parse: %v", err)
		}
		n := len(handFields(&d, key, "response")) + len(regexFields(&d, key, "response"))
		for _, h := range handFields(&d, key, "response") {
			if d.IsNull(h) {
				n--
			}
		}
		kept, _, _ := d.FilterEntities(entities, func(_ uint8, s string) (string, transcode.Verdict) { return s, transcode.Keep })
		var orig transcode.Doc
		if orig.ParseAPI(body, key, kind, version) == nil {
			for _, cf := range consumerFields(&orig, key, false, false) {
				names, _ := consumerTopics(orig.Bytes(cf.n), cf.assignment)
				for _, s := range names {
					if strings.HasPrefix(s, testPrefix) {
						n++ // stripped in the consumer protocol's bytes
					}
				}
			}
		}
		if n+kept != c.Renamed {
			t.Fatalf("the client sees %d names, %d were stripped", n+kept, c.Renamed)
		}
	})
}

// sameMeaning reports whether back, a request the client sent (body) prefixed and
// stripped again, differs from it only where body had a value the prefix rewrote in a
// non-canonical encoding (a string length as a two-byte varint): a rewritten value is
// written canonically, everything else as it was. Both then read as the same message.
func sameMeaning(t *testing.T, key, version int16, back, body []byte) bool {
	t.Helper()
	api, _ := codec.LookupAPI(key)
	name := api.Request.Name
	jb, err1 := transcode.AppendJSON(nil, name, version, body, nil)
	jk, err2 := transcode.AppendJSON(nil, name, version, back, nil)
	canon, err3 := transcode.AppendWire(nil, name, version, jb)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Logf("as JSON: %v, %v, %v", err1, err2, err3)
		return false
	}
	if bytes.Equal(canon, body) {
		t.Logf("the client's request was canonical, and came back different")
		return false
	}
	return bytes.Equal(jb, jk)
}
