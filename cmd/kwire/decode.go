package main

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kwire/kwire/cmd/kwire/internal/frames"
	"github.com/kwire/kwire/codec"
)

// direction is what --request and --response API:VERSION say.
type direction struct {
	response     bool
	key, version int16
}

func (d *direction) parse(request bool, response string) error {
	if request && response != "" {
		return &usageError{"--request and --response exclude each other"}
	}
	if response == "" {
		return nil
	}
	key, version, err := parseAPIVersion(response)
	if err != nil {
		return err
	}
	d.response, d.key, d.version = true, key, version
	return nil
}

// parseAPIVersion reads "Fetch:16", "fetch:16" or "1:16".
func parseAPIVersion(s string) (key, version int16, err error) {
	name, ver, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, &usageError{fmt.Sprintf("--response wants API:VERSION (e.g. Fetch:16), got %q", s)}
	}
	v, err := strconv.ParseInt(ver, 10, 16)
	if err != nil {
		return 0, 0, &usageError{fmt.Sprintf("bad version %q", ver)}
	}
	if k, err := strconv.ParseInt(name, 10, 16); err == nil {
		if _, ok := codec.LookupAPI(int16(k)); !ok {
			return 0, 0, &usageError{fmt.Sprintf("unknown api key %d (see kwire apis)", k)}
		}
		return int16(k), int16(v), nil
	}
	for _, a := range codec.APIs() {
		if strings.EqualFold(a.Name, name) {
			return a.Key, int16(v), nil
		}
	}
	return 0, 0, &usageError{fmt.Sprintf("unknown api %q (see kwire apis)", name)}
}

func checkFormat(f string) error {
	switch f {
	case "raw", "hex", "base64":
		return nil
	}
	return &usageError{fmt.Sprintf("--format wants raw, hex or base64, got %q", f)}
}

// frameSource yields the frames of a decode input.
type frameSource struct {
	r      *bufio.Reader
	format string
	line   int
	buf    []byte
}

// next returns the next frame, io.EOF at the end. A raw stream whose last frame is
// cut short is an input error.
func (s *frameSource) next() ([]byte, error) {
	if s.format == "raw" {
		var size [4]byte
		if _, err := io.ReadFull(s.r, size[:]); err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, &inputError{fmt.Errorf("stream ends inside a frame's size: %w", err)}
		}
		n := int(int32(binary.BigEndian.Uint32(size[:])))
		if n < 0 || n > codec.DefaultMaxFrameSize {
			return nil, &inputError{fmt.Errorf("frame size %d is outside 0..%d: not a stream of frames", n, codec.DefaultMaxFrameSize)}
		}
		s.buf = append(s.buf[:0], size[:]...)
		s.buf = grow(s.buf, n)
		if _, err := io.ReadFull(s.r, s.buf[4:]); err != nil {
			return nil, &inputError{fmt.Errorf("stream ends inside a frame of %s: %w", plural(n, "byte"), err)}
		}
		return s.buf, nil
	}
	for {
		text, err := s.r.ReadString('\n')
		if text == "" && err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, &inputError{err}
		}
		s.line++
		text = strings.Join(strings.Fields(text), "")
		if text == "" {
			continue
		}
		var b []byte
		var derr error
		if s.format == "hex" {
			b, derr = hex.DecodeString(strings.TrimPrefix(text, "0x"))
		} else {
			b, derr = base64.StdEncoding.DecodeString(text)
			if derr != nil {
				b, derr = base64.RawStdEncoding.DecodeString(strings.TrimRight(text, "="))
			}
		}
		if derr != nil {
			return nil, &inputError{fmt.Errorf("line %d: not %s: %v", s.line, s.format, derr)}
		}
		return b, nil
	}
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// openFrames parses the arguments decode and encode share: the direction flags, the
// format, and one FILE (or - for standard input), which it opens.
// The flags are read after parsing, through their pointers.
func openFrames(fs *flag.FlagSet, args []string, what string, request *bool, response, format *string, stdin io.Reader) (direction, io.ReadCloser, error) {
	var dir direction
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return dir, nil, err
	}
	if err := dir.parse(*request, *response); err != nil {
		return dir, nil, err
	}
	if err := checkFormat(*format); err != nil {
		return dir, nil, err
	}
	if len(pos) > 1 {
		return dir, nil, &usageError{what + " reads one FILE (or - for standard input)"}
	}
	name := "-"
	if len(pos) == 1 {
		name = pos[0]
	}
	in, err := openInput(name, stdin)
	return dir, in, err
}

// hintedFrames is how many frames that fail to decode say what they look like.
const hintedFrames = 100

func cmdDecode(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("decode", stderr)
	request := fs.Bool("request", false, "the frames are requests (the default)")
	response := fs.String("response", "", "the frames are responses to API:VERSION (e.g. Fetch:16)")
	format := fs.String("format", "raw", "input: raw (size-prefixed frames back to back), hex or base64 (one frame per line)")
	raw := fs.Bool("raw-records", false, "keep records fields as base64 (the lossless form kwire encode reads back byte for byte)")
	dir, in, err := openFrames(fs, args, "decode", request, response, format, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	src := &frameSource{r: bufio.NewReaderSize(in, 1<<16), format: *format}
	out := newLineWriter(stdout)
	w := frames.NewWriter(*raw)
	// The direction of the frames is the user's word: a frame that fails says what
	// its bytes look like (a response read as a request, for one). Finding that out
	// costs a decode per api version, so only the first hintedFrames failures do.
	w.Hints = true
	meta := frames.Meta{Latency: -1}
	failed, frameNo := 0, 0
	firstHint := ""
	var line []byte
	for {
		frame, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			out.Flush()
			return err
		}
		frameNo++
		var derr error
		if dir.response {
			line, derr = w.AppendResponse(line[:0], &meta, frame, dir.key, dir.version)
		} else {
			line, derr = w.AppendRequest(line[:0], &meta, frame)
		}
		if derr != nil {
			failed++
			w.Hints = failed < hintedFrames
			if hint := frames.DirectionHint(derr); hint != "" && firstHint == "" {
				firstHint = " (frame " + strconv.Itoa(frameNo) + ": " + hint + ")"
			}
		}
		if err := out.Line(line); err != nil {
			return err
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return &failedError{plural(failed, "frame") + " did not decode" + firstHint}
	}
	return nil
}

// lineWriter writes whole lines and flushes after each, so that a reader at the other
// end of a pipe (jq, head) sees every line as soon as it is written.
type lineWriter struct {
	w   *bufio.Writer
	err error
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{w: bufio.NewWriterSize(w, 1<<16)} }

// Line writes one line (with its newline) and flushes.
func (l *lineWriter) Line(b []byte) error {
	if l.err != nil {
		return l.err
	}
	if _, err := l.w.Write(b); err != nil {
		l.err = &outputError{err}
		return l.err
	}
	if err := l.w.Flush(); err != nil {
		l.err = &outputError{err}
	}
	return l.err
}

// Flush flushes what is buffered.
func (l *lineWriter) Flush() error {
	if l.err != nil {
		return l.err
	}
	if err := l.w.Flush(); err != nil {
		l.err = &outputError{err}
	}
	return l.err
}

// outputError is a failure to write the output (a closed pipe, a full disk).
type outputError struct{ err error }

// Error says what could not be written.
func (e *outputError) Error() string { return "writing output: " + e.err.Error() }

// Unwrap returns the write error.
func (e *outputError) Unwrap() error { return e.err }

var _ = errors.New
