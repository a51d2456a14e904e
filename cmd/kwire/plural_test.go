package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPlurals: one of a thing is singular in the command's messages.
func TestPlurals(t *testing.T) {
	// kwire encode: one line that cannot be encoded, then two.
	for _, c := range []struct{ in, want string }{
		{"not json\n", "kwire: 1 line could not be encoded\n"},
		{"not json\nnor this\n", "kwire: 2 lines could not be encoded\n"},
	} {
		var out, errOut bytes.Buffer
		run([]string{"encode"}, strings.NewReader(c.in), &out, &errOut)
		if !strings.HasSuffix(errOut.String(), c.want) {
			t.Errorf("encode %q: stderr %q, want it to end %q", c.in, errOut.String(), c.want)
		}
	}
	// kwire pcap: one frame that does not decode; the summary of one connection.
	req, resp := sampleFrames(t)
	bad := append([]byte(nil), req...)
	bad[3] -= 20
	bad = bad[:len(bad)-20]
	c := newSynthConn(t, 9092)
	c.handshake()
	c.send(false, bad, 1460)
	c.send(true, resp, 1460)
	file := filepath.Join(t.TempDir(), "one.pcap")
	writePcap(t, file, false, c.pkts)
	var out, errOut bytes.Buffer
	if code := run([]string{"pcap", file}, nil, &out, &errOut); code != exitFrames || errOut.String() != "kwire: 1 frame did not decode\n" {
		t.Errorf("pcap: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	run([]string{"pcap", "--summary", file}, nil, &out, &errOut)
	if !regexp.MustCompile(`\n[0-9]+ packets, 1 connection, `).MatchString(out.String()) {
		t.Errorf("summary: %s", out.String())
	}
	if got := plural(1, "byte") + " " + plural(0, "byte") + " " + plural(2, "resynchronisation"); got != "1 byte 0 bytes 2 resynchronisations" {
		t.Errorf("plural: %q", got)
	}
}
