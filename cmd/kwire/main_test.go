package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/kwire/kwire/conformance/broker"
)

// TestMain stops the broker the capture and tap tests share. With KWIRE_TEST_MAIN=1
// the test binary is the command itself (tests run it in a child process).
func TestMain(m *testing.M) {
	if os.Getenv("KWIRE_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	broker.StopShared()
	os.Exit(code)
}

// TestDecodeEncode: the sample frames decode, and encode back byte for byte (records
// raw) or to the same decoded lines (records decoded and compressed again).
func TestDecodeEncode(t *testing.T) {
	for _, c := range []struct {
		file string
		args []string
	}{
		{"../../examples/data/produce-request.bin", nil},
		{"../../examples/data/fetch-response.bin", []string{"--response", "Fetch:12"}},
	} {
		frame, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []bool{false, true} {
			args := append([]string{"decode"}, c.args...)
			if raw {
				args = append(args, "--raw-records")
			}
			var lines, errOut bytes.Buffer
			if code := run(append(args, c.file), nil, &lines, &errOut); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
			}
			if raw {
				if !strings.Contains(lines.String(), `"records":"`) {
					t.Errorf("--raw-records: records not base64: %.300s", lines.String())
				}
			} else if !strings.Contains(lines.String(), `"batches":[`) || !strings.Contains(lines.String(), `{"text":`) {
				t.Errorf("records not decoded: %.300s", lines.String())
			}
			var out bytes.Buffer
			if code := run([]string{"encode"}, bytes.NewReader(lines.Bytes()), &out, &errOut); code != 0 {
				t.Fatalf("encode: exit %d: %s", code, errOut.String())
			}
			if raw || strings.Contains(c.file, "produce") {
				if !bytes.Equal(out.Bytes(), frame) {
					t.Errorf("%s raw=%v: encode gives other bytes", c.file, raw)
				}
				continue
			}
			// compressed batches are compressed again: compare the decoded lines
			var again bytes.Buffer
			run(append(append([]string{"decode"}, c.args...), "-"), bytes.NewReader(out.Bytes()), &again, &errOut)
			if again.String() != lines.String() {
				t.Errorf("%s: decode(encode(decode)) differs", c.file)
			}
		}
	}
	// hex and base64 input, one frame per line
	frame, _ := os.ReadFile("../../examples/data/produce-request.bin")
	var hexOut, b64Out, errOut bytes.Buffer
	run([]string{"encode", "--format", "hex"}, bytes.NewReader(decodeLine(t, frame)), &hexOut, &errOut)
	run([]string{"encode", "--format", "base64"}, bytes.NewReader(decodeLine(t, frame)), &b64Out, &errOut)
	for _, in := range []struct{ format, text string }{{"hex", hexOut.String()}, {"base64", b64Out.String()}} {
		var l bytes.Buffer
		if code := run([]string{"decode", "--format", in.format}, strings.NewReader(in.text+"\n"+in.text), &l, &errOut); code != 0 || strings.Count(l.String(), "\n") != 2 {
			t.Errorf("decode --format %s: exit %d, %d lines", in.format, code, strings.Count(l.String(), "\n"))
		}
	}
}

func decodeLine(t *testing.T, frame []byte) []byte {
	var out, errOut bytes.Buffer
	if code := run([]string{"decode"}, bytes.NewReader(frame), &out, &errOut); code != 0 {
		t.Fatalf("decode: %d %s", code, errOut.String())
	}
	return out.Bytes()
}

// TestUsageAndExitCodes covers the command line's failures.
func TestUsageAndExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		in   string
		code int
	}{
		{nil, "", exitUsage},
		{[]string{"nope"}, "", exitUsage},
		{[]string{"decode", "--response", "Nope:1"}, "", exitUsage},
		{[]string{"decode", "--response", "Fetch"}, "", exitUsage},
		{[]string{"decode", "--format", "xml"}, "", exitUsage},
		{[]string{"decode", "--request", "--response", "Fetch:1"}, "", exitUsage},
		{[]string{"decode"}, "\x00\x00\x00\x10abc", exitInput},                               // cut inside a frame
		{[]string{"decode"}, "\x7f\xff\xff\xff", exitInput},                                  // not frames
		{[]string{"decode", "--format", "hex"}, "zz\n", exitInput},                           // not hex
		{[]string{"decode"}, "\x00\x00\x00\x08\x00\x00\x00\x09\x00\x00\x00\x07", exitFrames}, // a frame that does not decode
		{[]string{"encode"}, "{\"header\":{\"requestApiKey\":999},\"body\":{}}\n", exitFrames},
		{[]string{"encode"}, "not json\n", exitFrames},
		{[]string{"tap", "--listen", "127.0.0.1:0"}, "", exitUsage},
		{[]string{"tap", "--listen", "256.0.0.1:1", "--upstream", "127.0.0.1:9"}, "", exitNetwork},
		{[]string{"apis"}, "", exitOK},
		{[]string{"help"}, "", exitOK},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, strings.NewReader(c.in), &out, &errOut); code != c.code {
			t.Errorf("kwire %v: exit %d, want %d (%s)", c.args, code, c.code, errOut.String())
		}
	}
	var out bytes.Buffer
	run([]string{"apis", "--json"}, nil, &out, &out)
	if !strings.Contains(out.String(), `{"apiKey":0,"name":"Produce","minVersion":0,`) || strings.Count(out.String(), "\n") < 80 {
		t.Errorf("apis --json: %.200s", out.String())
	}
}
