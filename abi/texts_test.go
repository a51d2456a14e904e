package abi

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
)

// TestErrorTexts pins the text and status of the errors this package builds itself
// (the bindings compare texts).
func TestErrorTexts(t *testing.T) {
	h, err := SessionNew(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer SessionFree(h)
	api, _ := codec.LookupAPI(18)
	apiVersionsMax := strconv.Itoa(int(api.Request.MaxVersion))
	cases := []struct {
		name   string
		run    func() error
		status int32
		want   string
	}{
		{"record flags", func() error { _, err := RecordsDecodeJSON(nil, nil, 0x40, 0); return err }, StatusArg, "kwire: unknown record flags 0x40"},
		{"negative record flags", func() error { _, err := RecordsDecodeTable(nil, nil, -2, 0); return err }, StatusArg, "kwire: unknown record flags 0x-2"},
		{"negative max_decompressed", func() error { _, err := RecordsDecodeJSON(nil, nil, 0, -5); return err }, StatusArg, "kwire: negative max_decompressed -5"},
		{"compression", func() error { _, err := RecordsEncode(nil, nil, 9); return err }, StatusArg, "kwire: unknown compression 9"},
		{"message name", func() error { _, err := DecodeMessage(nil, "No\"Such\x00", 0, nil); return err }, StatusUnknownAPI, "kwire: unknown message \"No\\\"Such\\x00\""},
		{"response api key", func() error { _, err := DecodeResponseFrame(nil, nil, 9999, 0); return err }, StatusUnknownAPI, "kwire: unknown api key 9999"},
		{"policy topic length", func() error {
			_, err := PolicyCheck(nil, nil, strings.Repeat("t", 40000), 0, nil)
			return err
		}, StatusArg, "kwire: policy check: topic of 40000 bytes exceeds 32767"},
		{"policy partition", func() error { _, err := PolicyCheck(nil, nil, "t", -1, nil); return err }, StatusArg, "kwire: policy check: negative partition -1"},
		{"record table", func() error { _, err := EncodeRequestFrameRecords(nil, nil, []byte{1, 2, 3}); return err }, StatusArg, "kwire: not a record table (want the magic \"KWRT\" and a 40-byte header)"},
		{"session handle", func() error { return SessionFree(123456) }, StatusArg, "kwire: 123456 is not a live session handle"},
		{"session handle in use", func() error { return SessionFeed(123456, nil) }, StatusArg, "kwire: 123456 is not a live session handle"},
		{"maxFrameSize", func() error { _, err := SessionNew([]byte(`{"maxFrameSize":-1}`)); return err }, StatusArg, "kwire: session config: maxFrameSize -1 out of range"},
		{"bootstrapVersion", func() error { _, err := SessionNew([]byte(`{"bootstrapVersion":70000}`)); return err }, StatusArg, "kwire: session config: bootstrapVersion 70000 out of range"},
		{"session request flags", func() error { _, _, err := SessionRequest(nil, h, 18, 0, nil, -4); return err }, StatusArg, "kwire: unknown session request flags 0x-4"},
		{"session request api key", func() error { _, _, err := SessionRequest(nil, h, 70000, 0, nil, 0); return err }, StatusUnknownAPI, "kwire: unknown api key 70000"},
		{"session request version", func() error { _, _, err := SessionRequest(nil, h, 18, 70000, nil, 0); return err }, StatusVersion, "kwire: version 70000 out of range"},
		{"session request unknown api", func() error { _, _, err := SessionRequest(nil, h, 9999, 0, nil, 0); return err }, StatusUnknownAPI, "kwire: unknown api key 9999"},
		{"session request unsupported version", func() error {
			_, _, err := SessionRequest(nil, h, 18, 20000, []byte(`{}`), 0)
			return err
		}, StatusVersion, "kwire: ApiVersionsRequest version 20000: unsupported version (valid 0-" + apiVersionsMax + ")"},
		{"session version for", func() error { _, err := SessionVersionFor(h, 70000); return err }, StatusUnknownAPI, "kwire: unknown api key 70000"},
		{"recovered panic", func() error { return Recovered(errors.New("boom")) }, StatusInternal, "kwire: internal error (recovered panic): boom"},
		{"recovered runtime error", func() (err error) {
			defer guard(&err)
			var s []int
			_ = s[3]
			return nil
		}, StatusInternal, "kwire: internal error (recovered panic): runtime error: index out of range [3] with length 0"},
		{"argument", func() error { return ArgText("kw_free: 8 is not a live buffer") }, StatusArg, "kwire: kw_free: 8 is not a live buffer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != c.want {
				t.Errorf("text\n got %q\nwant %q", err.Error(), c.want)
			}
			if st := StatusOf(err); st != c.status {
				t.Errorf("status %s, want %s", StatusName(st), StatusName(c.status))
			}
		})
	}
}

type stringer struct{}

func (stringer) String() string { return "a stringer" }

type badError struct{}

func (badError) Error() string { panic("again") }

// TestPanicText: recovered panic values render as fmt's %v renders them, for the types
// panics carry; other types and a panicking Error method get a fixed text.
func TestPanicText(t *testing.T) {
	for _, p := range []any{nil, errors.New("e"), stringer{}, "s", 7, -7} {
		if got, want := panicText(p), fmt.Sprint(p); got != want {
			t.Errorf("panicText(%#v) = %q, fmt renders %q", p, got, want)
		}
	}
	for _, c := range []struct {
		p    any
		want string
	}{
		{3.5, "(a panic value of an unprintable type)"},
		{[]int{1}, "(a panic value of an unprintable type)"},
		{badError{}, "(a panic value whose Error or String method panics)"},
	} {
		if got := panicText(c.p); got != c.want {
			t.Errorf("panicText(%#v) = %q, want %q", c.p, got, c.want)
		}
	}
}
