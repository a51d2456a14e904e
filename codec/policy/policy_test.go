package policy

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
)

// batch encodes msgs as the records field of one Produce partition (version 9,
// magic 2) with the given compression.
func batch(t testing.TB, c records.Compression, msgs ...records.Message) []byte {
	t.Helper()
	for i := range msgs {
		msgs[i].Topic, msgs[i].Partition = "t", 0
	}
	req := codec.NewProduceRequest()
	var e records.Encoder
	if err := e.AppendProduceMessages(req, 9, msgs, records.ProduceOptions{Compression: c, PartitionLeaderEpoch: -1}); err != nil {
		t.Fatal(err)
	}
	return req.TopicData[0].PartitionData[0].Records
}

func hdr(kv ...string) []records.Header {
	var h []records.Header
	for i := 0; i+1 < len(kv); i += 2 {
		h = append(h, records.Header{Key: []byte(kv[i]), Value: []byte(kv[i+1])})
	}
	return h
}

func prefixed(id uint32, payload string) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], id)
	return append(b, payload...)
}

func msg(value []byte, h ...string) records.Message {
	return records.Message{Value: value, Headers: hdr(h...)}
}

func TestRuleMatching(t *testing.T) {
	p, err := Parse([]byte(`{"default":"warn","rules":[
		{"topic":"orders","policy":"enforce"},
		{"prefix":"ord","policy":"none"},
		{"prefix":"orders.","policy":"enforce","schema_ids":[7]},
		{"prefix":"orders.eu.","policy":"warn"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		topic, rule string
		mode        Mode
	}{
		{"orders", "topic:orders", Enforce},
		{"orders.eu.x", "prefix:orders.eu.", Warn},
		{"orders.us", "prefix:orders.", Enforce},
		{"ordinal", "prefix:ord", None},
		{"other", "default", Warn},
		{"", "default", Warn},
	} {
		r := p.RuleFor(tc.topic)
		if r.Name() != tc.rule || r.Mode != tc.mode {
			t.Errorf("%q: got %s/%s, want %s/%s", tc.topic, r.Name(), r.Mode, tc.rule, tc.mode)
		}
	}
	if !p.Active() || !p.Enforces() {
		t.Errorf("Active %v Enforces %v, want both", p.Active(), p.Enforces())
	}
	q, err := Parse([]byte(`{"default":"none","rules":[{"prefix":"a","policy":"warn"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !q.Active() || q.Enforces() {
		t.Errorf("warn-only: Active %v Enforces %v", q.Active(), q.Enforces())
	}
	n, _ := Parse([]byte(`{"default":"none"}`))
	if n.Active() {
		t.Error("all-none policy is active")
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		json, path, want string
		offset           int
	}{
		{`{"default":"block"}`, "$.default", `unknown mode "block"`, 11},
		{`{"default":"none","rules":[{"policy":"warn"}]}`, "$.rules[0]", "needs a topic or a prefix", 27},
		{`{"rules":[{"topic":"a","prefix":"b","policy":"warn"}]}`, "$.rules[0]", "sets both topic", 10},
		{`{"rules":[{"topic":"a","policy":"warn"},{"topic":"a","policy":"none"}]}`, "$.rules[1].topic", `topic "a" has a rule already`, 49},
		{`{"rules":[{"prefix":"a","policy":"warn"},{"prefix":"a","policy":"none"}]}`, "$.rules[1].prefix", `prefix "a" has a rule already`, 51},
		{`{"rules":[{"topic":"a","policy":"warn","schema_ids":[-1]}]}`, "$.rules[0].schema_ids[0]", "-1 is negative", 53},
		{`{"rules":[{"topic":"a","policy":"warn","versions":[1,-2]}]}`, "$.rules[0].versions[1]", "-2 is negative", 53},
		{`{"rules":[{"topic":"a","policy":"warn","colour":1}]}`, "$.rules[0].colour", `unknown key: "colour"`, 48},
		{`{"default":1}`, "$.default", "wrong type: want string, got number", 11},
		{`{"default":"none","default":"warn"}`, "$", `duplicate key: "default"`, 18},
		{`{"max_decompressed_bytes":-1}`, "$.max_decompressed_bytes", "-1 is negative", 26},
		{`{"skip_crc":"yes"}`, "$.skip_crc", "want boolean", 12},
		{`{} {}`, "$", "unexpected data after the top-level value", 3},
		{`[`, "$", "want object, got array", 0},
	} {
		_, err := Parse([]byte(tc.json))
		ce, ok := err.(*ConfigError)
		if !ok {
			t.Errorf("%s: got %v (%T), want a *ConfigError", tc.json, err, err)
			continue
		}
		if ce.Path != tc.path || !strings.Contains(ce.Msg, tc.want) || ce.Offset != tc.offset || !strings.HasPrefix(ce.Error(), "policy: "+tc.path+": ") {
			t.Errorf("%s: got path %s offset %d %q, want %s offset %d containing %q", tc.json, ce.Path, ce.Offset, ce.Error(), tc.path, tc.offset, tc.want)
		}
	}
	// New names the field too, without an offset.
	_, err := New(Config{Rules: []Rule{{Topic: "a", Mode: Warn, SchemaIDs: []int32{-3}}}})
	if ce, ok := err.(*ConfigError); !ok || ce.Path != "$.rules[0].schema_ids[0]" || ce.Offset != -1 || ce.Error() != "policy: $.rules[0].schema_ids[0]: -3 is negative" {
		t.Errorf("New: %v", err)
	}
}

func TestCheck(t *testing.T) {
	p, err := Parse([]byte(`{"default":"none","rules":[
		{"topic":"any","policy":"enforce"},
		{"topic":"ids","policy":"enforce","schema_ids":[1,2]},
		{"topic":"ver","policy":"enforce","schema_ids":[1],"require_version":true},
		{"topic":"vers","policy":"enforce","versions":[3]},
		{"prefix":"warn.","policy":"warn","schema_ids":[1]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	good1 := msg(prefixed(1, "x"))
	hdr2 := msg([]byte("plain"), "schema.id", "2")
	hdr2v3 := msg([]byte("plain"), "schema.id", "2", "schema.version", "3")
	noref := msg([]byte("plain"))
	badhdr := msg(prefixed(1, "x"), "schema.id", "one")
	badver := msg(prefixed(1, "x"), "schema.version", "v1")
	wrong := msg(prefixed(9, "x"))
	chk := p.NewChecker()
	var reused PartitionVerdict
	for _, tc := range []struct {
		name, topic string
		msgs        []records.Message
		accept      bool
		failed      []Reason
		code        kerr.Code
		checked     bool
	}{
		{"any id", "any", []records.Message{good1, hdr2}, true, nil, 0, true},
		{"no reference", "any", []records.Message{good1, noref}, false, []Reason{NoSchema}, kerr.InvalidRecord, true},
		{"allowed ids", "ids", []records.Message{good1, hdr2}, true, nil, 0, true},
		{"wrong id", "ids", []records.Message{wrong, good1}, false, []Reason{IDNotAllowed}, kerr.InvalidRecord, true},
		{"malformed id header", "ids", []records.Message{badhdr}, false, []Reason{MalformedHeader}, kerr.InvalidRecord, true},
		{"malformed version header", "any", []records.Message{badver}, false, []Reason{MalformedHeader}, kerr.InvalidRecord, true},
		{"version required", "ver", []records.Message{good1}, false, []Reason{NoVersion}, kerr.InvalidRecord, true},
		{"version present", "ver", []records.Message{msg(prefixed(1, "x"), "schema.version", "4")}, true, nil, 0, true},
		{"version listed", "vers", []records.Message{hdr2v3}, true, nil, 0, true},
		{"version not listed", "vers", []records.Message{msg([]byte("p"), "schema.id", "2", "schema.version", "4")}, false, []Reason{VersionNotAllowed}, kerr.InvalidRecord, true},
		{"warn counts", "warn.a", []records.Message{noref, good1, wrong}, true, []Reason{NoSchema, IDNotAllowed}, 0, true},
		{"none skips", "free", []records.Message{noref}, true, nil, 0, false},
	} {
		for _, c := range []records.Compression{records.CompressionNone, records.CompressionLZ4, records.CompressionZstd} {
			recs := batch(t, c, append([]records.Message(nil), tc.msgs...)...)
			v := p.NewChecker().Check(tc.topic, 3, recs)
			if v.Accept != tc.accept || v.ErrorCode != int16(tc.code) || v.Checked != tc.checked {
				t.Errorf("%s/%s: accept %v code %d checked %v, want %v %d %v (%s)", tc.name, c, v.Accept, v.ErrorCode, v.Checked, tc.accept, tc.code, tc.checked, v.Message())
			}
			if v.Failed != len(tc.failed) || len(v.Failures) != len(tc.failed) {
				t.Errorf("%s/%s: %d failed (%v), want %v", tc.name, c, v.Failed, v.Failures, tc.failed)
				continue
			}
			for i, r := range tc.failed {
				if v.Failures[i].Reason != r {
					t.Errorf("%s/%s: failure %d is %s, want %s", tc.name, c, i, v.Failures[i].Reason, r)
				}
			}
			if tc.checked && v.Records != len(tc.msgs) {
				t.Errorf("%s/%s: %d records, want %d", tc.name, c, v.Records, len(tc.msgs))
			}
			if v.Partition != 3 || v.Topic != tc.topic {
				t.Errorf("%s: verdict names %s/%d", tc.name, v.Topic, v.Partition)
			}
			// CheckRule into a verdict left over from another partition gives the same.
			reused.Failed, reused.Records, reused.Accept = 7, 9, false
			reused.Failures = append(reused.Failures, RecordVerdict{Index: 5})
			chk.CheckRule(&reused, p.RuleFor(tc.topic), tc.topic, 3, recs)
			if !reflect.DeepEqual(reused, v) {
				t.Errorf("%s/%s: CheckRule gave %+v, Check %+v", tc.name, c, reused, v)
			}
		}
	}
}

func TestFailureIndex(t *testing.T) {
	p, _ := Parse([]byte(`{"default":"enforce"}`))
	recs := batch(t, records.CompressionNone, msg(prefixed(1, "a")), msg([]byte("b")), msg(prefixed(1, "c")), msg([]byte("d")))
	v := p.NewChecker().Check("x", 0, recs)
	if len(v.Failures) != 2 || v.Failures[0].Index != 1 || v.Failures[1].Index != 3 {
		t.Fatalf("failures %+v, want indexes 1 and 3", v.Failures)
	}
	if !strings.Contains(v.Message(), "2 of 4 records failed, first at index 1") {
		t.Errorf("message %q", v.Message())
	}
}

func TestUndecodable(t *testing.T) {
	p, _ := Parse([]byte(`{"default":"none","rules":[{"topic":"e","policy":"enforce"},{"topic":"w","policy":"warn"}]}`))
	good := batch(t, records.CompressionNone, msg(prefixed(1, "a")))
	crc := append([]byte(nil), good...)
	crc[len(crc)-1] ^= 0xff
	for _, tc := range []struct {
		name string
		recs []byte
		code kerr.Code
	}{
		{"crc", crc, kerr.CorruptMessage},
		{"truncated", good[:len(good)-3], kerr.CorruptMessage},
		{"garbage", []byte{1, 2, 3}, kerr.CorruptMessage},
	} {
		v := p.NewChecker().Check("e", 0, tc.recs)
		if v.Accept || v.ErrorCode != int16(tc.code) || v.Err == nil {
			t.Errorf("enforce %s: accept %v code %d err %v", tc.name, v.Accept, v.ErrorCode, v.Err)
		}
		w := p.NewChecker().Check("w", 0, tc.recs)
		if !w.Accept || w.Err == nil {
			t.Errorf("warn %s: accept %v err %v, want accepted with the error reported", tc.name, w.Accept, w.Err)
		}
	}
	// Over the decompression cap: INVALID_RECORD, not passed.
	big := strings.Repeat("x", 1<<16)
	q, _ := Parse([]byte(`{"default":"enforce","max_decompressed_bytes":4096}`))
	v := q.NewChecker().Check("x", 0, batch(t, records.CompressionLZ4, msg(append(prefixed(1, ""), big...))))
	if v.Accept || v.ErrorCode != int16(kerr.InvalidRecord) {
		t.Errorf("over the cap: accept %v code %d (%v)", v.Accept, v.ErrorCode, v.Err)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(batch(f, records.CompressionNone, msg(prefixed(1, "a"), "schema.version", "2")))
	f.Add(batch(f, records.CompressionLZ4, msg([]byte("b"))))
	f.Add([]byte{0, 0, 0, 0})
	p, _ := Parse([]byte(`{"default":"enforce","max_decompressed_bytes":1048576}`))
	c := p.NewChecker()
	f.Fuzz(func(t *testing.T, recs []byte) {
		v := c.Check("t", 0, recs)
		if v.Accept && (v.Err != nil || v.Failed > 0) {
			t.Fatalf("accepted under enforce with err %v, %d failed", v.Err, v.Failed)
		}
		if !v.Accept && v.ErrorCode == 0 {
			t.Fatal("rejected without an error code")
		}
	})
}

// reference is Check written over records.ForEachMessage (one Message per record):
// the fast walk must agree with it on every input.
func reference(p *Policy, topic string, recs []byte) (n, failed int, reasons []Reason, errText string) {
	rule := p.RuleFor(topic)
	var dec records.Decoder
	dec.MaxDecompressedSize = p.cfg.MaxDecompressedBytes
	dec.SkipCRC = p.cfg.SkipCRC
	c := p.NewChecker()
	skipped, err := dec.ForEachMessage(recs, topic, 0, func(m *records.Message) error {
		n++
		reason, _, _, _ := c.checkRecord(rule, m.Key, m.Value, m.Headers)
		if m.Control {
			reason = NoSchema
		}
		if reason != OK {
			failed++
			reasons = append(reasons, reason)
		}
		return nil
	})
	if err != nil {
		errText = err.Error()
	} else if skipped > 0 {
		errText = "skipped"
	}
	return
}

func TestWalkMatchesForEachMessage(t *testing.T) {
	var inputs [][]byte
	for _, c := range []records.Compression{records.CompressionNone, records.CompressionLZ4, records.CompressionGzip} {
		b := batch(t, c, msg(prefixed(1, "a")), msg([]byte("b"), "schema.id", "x"), msg([]byte("c"), "schema.id", "7", "schema.version", "2"))
		inputs = append(inputs, b, append(append([]byte(nil), b...), b...), b[:len(b)-1])
		for i := 0; i < len(b); i += 7 {
			bad := append([]byte(nil), b...)
			bad[i] ^= 0x5a
			inputs = append(inputs, bad)
		}
	}
	errs := 0
	for k, in := range append(inputs, inputs...) {
		cfg := `{"default":"enforce"}`
		if k >= len(inputs) {
			cfg = `{"default":"enforce","skip_crc":true}`
		}
		p, _ := Parse([]byte(cfg))
		i := k % len(inputs)
		v := p.NewChecker().Check("t", 0, in)
		if v.Err != nil {
			errs++
		}
		n, failed, reasons, errText := reference(p, "t", in)
		if (v.Err != nil) != (errText != "") {
			t.Errorf("input %d: walk error %v, reference %q", i, v.Err, errText)
			continue
		}
		if v.Err == nil && errText == "skipped" {
			t.Errorf("input %d: reference skipped a partial batch the walk accepted", i)
		}
		if v.Err != nil && errText != "skipped" && v.Error != errText {
			t.Errorf("input %d: walk error %q, reference %q", i, v.Error, errText)
		}
		if v.Err == nil && (v.Records != n || v.Failed != failed) {
			t.Errorf("input %d: walk %d records %d failed, reference %d %d", i, v.Records, v.Failed, n, failed)
		}
		for j := range reasons {
			if v.Err == nil && v.Failures[j].Reason != reasons[j] {
				t.Errorf("input %d failure %d: %s, reference %s", i, j, v.Failures[j].Reason, reasons[j])
			}
		}
	}
	if errs == 0 || errs == 2*len(inputs) {
		t.Errorf("%d of %d inputs failed to decode: the damaged inputs do not exercise both paths", errs, 2*len(inputs))
	}
}

// FuzzScanMatchesIterator holds the fast scan to the records iterator: whenever
// the scan accepts a batch, the iterator reads the same number of records without
// error and every one passes the rule.
func FuzzScanMatchesIterator(f *testing.F) {
	for _, c := range []records.Compression{records.CompressionNone, records.CompressionLZ4} {
		f.Add(batch(f, c, msg(prefixed(1, "a")), msg([]byte("b"), "schema.id", "1", "schema.version", "2")))
		f.Add(batch(f, c, msg([]byte("x"), "k", "v", "schema.id", "-0", "schema.id", "1")))
	}
	f.Add(batch(f, records.CompressionNone, rec([]byte(`{"k":1}`), []byte(`{"a":1,"a":2}`)), rec(nil, nil), rec(prefixed(3, "[]"), prefixed(1, "{}"))))
	p, _ := Parse([]byte(`{"default":"enforce","skip_crc":true,"max_decompressed_bytes":1048576,"rules":[{"topic":"v","policy":"enforce","schema_ids":[1],"versions":[2]},
		{"topic":"j","policy":"enforce","value":{"require_schema":false,"unique_keys":true,"null":"refuse"},"key":{"json":true,"null":"refuse"}},
		{"topic":"f","policy":"enforce","value":{"schema_ids":[1],"json":true},"key":{"require_schema":true,"json":true}}]}`))
	f.Fuzz(func(t *testing.T, recs []byte) {
		for _, topic := range []string{"t", "v", "j", "f"} {
			rule := p.RuleFor(topic)
			b, _, err := records.ParseBatch(recs, true)
			if err != nil || b.IsControl() {
				return
			}
			c := p.NewChecker()
			n, ok := c.scanBatch(rule, &b)
			if !ok {
				continue
			}
			it, err := c.dec.Records(&b)
			if err != nil {
				t.Fatalf("scan accepted %d records, iterator: %v", n, err)
			}
			var r records.Record
			got := 0
			for it.Next(&r) {
				got++
				if reason, _, _, _ := c.checkRecord(rule, r.Key, r.Value, r.Headers); reason != OK {
					t.Fatalf("scan accepted record %d, the rule says %s", got-1, reason)
				}
			}
			if it.Err() != nil || got != n {
				t.Fatalf("scan accepted %d records, iterator read %d: %v", n, got, it.Err())
			}
		}
	})
}

func TestRuleNameFollowsConfig(t *testing.T) {
	p, _ := Parse([]byte(`{"rules":[{"topic":"a","policy":"warn"}]}`))
	cfg := p.Config()
	cfg.Rules[0].Topic = "b"
	q, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.RuleFor("b").Name(); got != "topic:b" {
		t.Errorf("rule name %q, want topic:b", got)
	}
	if got := p.RuleFor("a").Name(); got != "topic:a" {
		t.Errorf("the first policy's rule name changed to %q", got)
	}
}

// refOK is checkRef's verdict without the detail: the two agree on every
// combination of the rule's id, version and required-version settings.
func TestRefOKMatchesCheckRef(t *testing.T) {
	for _, ids := range [][]int32{nil, {1, 2}} {
		for _, versions := range [][]int32{nil, {3}} {
			for _, requireVersion := range []bool{false, true} {
				p := &part{schema: true, ids: ids, versions: versions, requireVersion: requireVersion}
				for _, src := range []records.SchemaSource{records.SchemaNone, records.SchemaHeader, records.SchemaValuePrefix} {
					for _, id := range []int32{-1, 1, 5} {
						for _, ver := range []int32{-1, 3, 4} {
							ref := records.SchemaRef{ID: id, Version: ver, Source: src}
							reason, _ := checkRef(p, ref)
							if got := refOK(p, ref); got != (reason == OK) {
								t.Errorf("rule %+v, ref %+v: refOK %v, checkRef %s", *p, ref, got, reason)
							}
						}
					}
				}
			}
		}
	}
}
