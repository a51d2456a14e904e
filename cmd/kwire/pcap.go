package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/cmd/kwire/internal/capture"
	"github.com/kwire/kwire/cmd/kwire/internal/frames"
	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
)

// portList is a repeatable --port flag.
type portList []uint16

// String lists the ports.
func (p *portList) String() string { return fmt.Sprint(*p) }

// Set adds one port, or several separated by commas.
func (p *portList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 16)
		if err != nil || n == 0 {
			return fmt.Errorf("bad port %q", part)
		}
		*p = append(*p, uint16(n))
	}
	return nil
}

func cmdPcap(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("pcap", stderr)
	var ports portList
	fs.Var(&ports, "port", "a Kafka server port (repeatable; default 9092 and any port where frames parse)")
	summary := fs.Bool("summary", false, "print a table per api key instead of the frames")
	raw := fs.Bool("raw-records", false, "keep records fields as base64")
	progress := fs.String("progress", "auto", "progress on stderr: auto (when stderr is a terminal), always or never")
	noResolve := fs.Bool("no-resolve", false, "do not name the topics of frames that carry topic ids alone (from the capture's Metadata responses)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &usageError{"pcap needs at least one capture FILE (or - for standard input)"}
	}
	stdins := 0
	for _, name := range files {
		if name == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		return &usageError{"pcap reads standard input (-) once"}
	}
	switch *progress {
	case "auto", "always", "never":
	default:
		return &usageError{fmt.Sprintf("--progress wants auto, always or never, got %q", *progress)}
	}
	showProgress := *progress == "always" || (*progress == "auto" && isTerminal(stderr))
	opts := capture.Options{Ports: ports}

	out := newLineWriter(stdout)
	// The summary reads only error codes: records stay base64, not decoded.
	w := frames.NewWriter(*raw || *summary)
	if !*summary && !*noResolve {
		// Topic ids are named from the capture's responses that name them: those read
		// before a frame and, when every input can be read twice, all of them, in a
		// first pass made when a frame has an id no earlier response named.
		topics := frames.NewTopics()
		if stdins == 0 && regularFiles(files) {
			topics.Missing = func(t *frames.Topics) { learnTopics(files, opts, t, showProgress, stderr) }
		}
		w.ResolveTopics(topics)
	}
	var sum *summaryTable
	if *summary {
		sum = newSummary()
	}
	var line []byte
	failed := 0
	var outErr error
	sink := func(f *capture.Frame) {
		meta := frames.Meta{Time: f.Time, Conn: f.Conn, Latency: -1}
		var err error
		var key, version int16
		switch {
		case f.Request:
			h, _ := frames.PeekRequest(f.Data)
			key, version = h.APIKey, h.APIVersion
			line, err = w.AppendRequest(line[:0], &meta, f.Data)
		case f.Matched:
			meta.Latency = f.Latency
			key, version = f.APIKey, f.APIVersion
			line, err = w.AppendResponse(line[:0], &meta, f.Data, f.APIKey, f.APIVersion)
		default:
			line = w.AppendUnmatched(line[:0], &meta, f.Data)
			key = -1
		}
		if err != nil {
			failed++
		}
		if sum != nil {
			sum.add(f, key, version, line, err != nil)
			return
		}
		if outErr == nil {
			outErr = out.Line(line)
		}
	}
	r := capture.NewReader(opts, sink)
	for i, name := range files {
		file, err := openCapture(name, stdin)
		if err != nil {
			return err
		}
		err = readCapture(r, file, showProgress, stderr, name, i+1, len(files))
		if err != nil {
			out.Flush()
			return &inputError{fmt.Errorf("%s: %w", name, err)}
		}
		if outErr != nil {
			return outErr
		}
	}
	r.Close()
	if outErr != nil {
		return outErr
	}
	if sum != nil {
		bw := bufio.NewWriter(stdout)
		sum.write(bw, r.Stats())
		if err := bw.Flush(); err != nil {
			return &outputError{err}
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return &failedError{plural(failed, "frame") + " did not decode"}
	}
	return nil
}

// captureFile is an input of kwire pcap: a file, or standard input for "-".
type captureFile interface {
	io.ReadCloser
	Stat() (os.FileInfo, error)
}

// stdinCapture is standard input as a captureFile (its Stat says it is no regular file).
type stdinCapture struct{ io.Reader }

func (stdinCapture) Close() error               { return nil }
func (stdinCapture) Stat() (os.FileInfo, error) { return nil, errors.New("standard input") }

func openCapture(name string, stdin io.Reader) (captureFile, error) {
	if name == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		return stdinCapture{stdin}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &inputError{err}
	}
	return f, nil
}

// regularFiles reports whether every input is a regular file, which can be read twice
// (a pipe or a terminal cannot).
func regularFiles(files []string) bool {
	for _, name := range files {
		st, err := os.Stat(name)
		if err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// learnTopics reads the whole capture for the topic names its responses give, and
// nothing else. A file that cannot be read stops it; the pass that writes the lines
// reports why.
func learnTopics(files []string, opts capture.Options, topics *frames.Topics, showProgress bool, stderr io.Writer) {
	r := capture.NewReader(opts, func(f *capture.Frame) {
		if f.Matched && frames.Learns(f.APIKey, f.APIVersion) {
			topics.Learn(f.Data, f.APIKey, f.APIVersion)
		}
	})
	defer r.Close()
	for i, name := range files {
		file, err := os.Open(name)
		if err != nil {
			return
		}
		if err := readCapture(r, file, showProgress, stderr, "topic names: "+name, i+1, len(files)); err != nil {
			return
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readCapture reads one capture file with r and closes it; with showProgress, a
// regular file's progress is drawn on stderr as file i of n, under label.
func readCapture(r *capture.Reader, file captureFile, showProgress bool, stderr io.Writer, label string, i, n int) error {
	defer file.Close()
	if showProgress {
		if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
			bar := newProgressBar(stderr, label, i, n, st.Size())
			r.OnProgress = bar.update
			defer func() {
				bar.done()
				r.OnProgress = nil
			}()
		}
	}
	return r.ReadCapture(file)
}

// progressBar draws "name [=====>    ] 42% 420/1000 MB 310 MB/s" on stderr, at most
// four times a second.
type progressBar struct {
	w           io.Writer
	label       string
	total       int64
	start, last time.Time
	drawn       bool
}

func newProgressBar(w io.Writer, name string, i, n int, total int64) *progressBar {
	label := name
	if n > 1 {
		label = fmt.Sprintf("[%d/%d] %s", i, n, name)
	}
	now := time.Now()
	return &progressBar{w: w, label: label, total: total, start: now, last: now}
}

func (p *progressBar) update(read int64) {
	now := time.Now()
	if now.Sub(p.last) < 250*time.Millisecond {
		return
	}
	p.last = now
	p.drawn = true
	frac := 0.0
	if p.total > 0 {
		frac = math.Min(1, float64(read)/float64(p.total))
	}
	const width = 30
	full := int(frac * width)
	bar := strings.Repeat("=", full) + strings.Repeat(" ", width-full)
	rate := float64(read) / 1e6 / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r%s [%s] %3.0f%% %.0f/%.0f MB %.0f MB/s ", p.label, bar, frac*100, float64(read)/1e6, float64(p.total)/1e6, rate)
}

func (p *progressBar) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// histogram counts latencies in buckets 2% wide: fixed memory, percentiles within 2%.
type histogram struct {
	counts map[int]int64
	n      int64
}

const histBase = 1.02

func (h *histogram) add(us int64) {
	if h.counts == nil {
		h.counts = map[int]int64{}
	}
	b := 0
	if us > 0 {
		b = 1 + int(math.Log(float64(us))/math.Log(histBase))
	}
	h.counts[b]++
	h.n++
}

// quantile is the upper edge of the bucket holding quantile q, in microseconds.
func (h *histogram) quantile(q float64) int64 {
	if h.n == 0 {
		return -1
	}
	keys := make([]int, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	rank := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for _, k := range keys {
		seen += h.counts[k]
		if seen >= rank {
			if k == 0 {
				return 0
			}
			return int64(math.Round(math.Pow(histBase, float64(k))))
		}
	}
	return -1
}

type apiRow struct {
	requests, responses, failed int
	bytes                       int64
	lat                         histogram
	codes                       map[int]int
}

type summaryTable struct {
	rows      map[int16]*apiRow
	first     time.Time
	last      time.Time
	unmatched int
}

func newSummary() *summaryTable { return &summaryTable{rows: map[int16]*apiRow{}} }

func (s *summaryTable) add(f *capture.Frame, key, version int16, line []byte, failed bool) {
	if s.first.IsZero() || f.Time.Before(s.first) {
		s.first = f.Time
	}
	if f.Time.After(s.last) {
		s.last = f.Time
	}
	if key < 0 {
		s.unmatched++
		return
	}
	r := s.rows[key]
	if r == nil {
		r = &apiRow{codes: map[int]int{}}
		s.rows[key] = r
	}
	r.bytes += int64(len(f.Data))
	if failed {
		r.failed++
	}
	if f.Request {
		r.requests++
		return
	}
	r.responses++
	r.lat.add(f.Latency.Microseconds())
	if !failed {
		errorCodes(line, r.codes)
	}
}

var errorCodeKey = []byte(`"errorCode":`)

// errorCodes counts the non-zero "errorCode" values of a response line.
func errorCodes(line []byte, codes map[int]int) {
	key := errorCodeKey
	for i := 0; ; {
		j := bytes.Index(line[i:], errorCodeKey)
		if j < 0 {
			return
		}
		at := i + j
		i = at + len(key)
		if at > 0 && line[at-1] == '\\' {
			continue
		}
		k := i
		for k < len(line) && (line[k] == '-' || line[k] >= '0' && line[k] <= '9') {
			k++
		}
		if c, err := strconv.Atoi(string(line[i:k])); err == nil && c != 0 {
			codes[c]++
		}
	}
}

func (s *summaryTable) write(w io.Writer, st capture.Stats) {
	keys := make([]int, 0, len(s.rows))
	for k := range s.rows {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	fmt.Fprintf(w, "%-28s %8s %8s %12s %9s %9s  %s\n", "api", "requests", "responses", "bytes", "p50 ms", "p99 ms", "error codes")
	var tr, tp int
	var tb int64
	for _, k := range keys {
		r := s.rows[int16(k)]
		name := strconv.Itoa(k)
		if a, ok := codec.LookupAPI(int16(k)); ok {
			name = a.Name + " (" + name + ")"
		}
		tr += r.requests
		tp += r.responses
		tb += r.bytes
		fmt.Fprintf(w, "%-28s %8d %9d %12d %9s %9s  %s\n", name, r.requests, r.responses, r.bytes,
			ms(r.lat.quantile(0.5)), ms(r.lat.quantile(0.99)), codeList(r.codes, r.failed))
	}
	fmt.Fprintf(w, "%-28s %8d %9d %12d\n", "total", tr, tp, tb)
	span := s.last.Sub(s.first)
	fmt.Fprintf(w, "%s, %s, %s of traffic", plural(st.Packets, "packet"), plural(st.Connections, "connection"), span.Round(time.Millisecond))
	if s.unmatched > 0 {
		fmt.Fprintf(w, ", %s without their request", plural(s.unmatched, "response"))
	}
	if st.Resyncs > 0 {
		fmt.Fprintf(w, ", %s (%s skipped)", plural(st.Resyncs, "resynchronisation"), plural(int(st.SkippedBytes), "byte"))
	}
	fmt.Fprintln(w)
}

func ms(us int64) string {
	if us < 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(us)/1000, 'f', 2, 64)
}

func codeList(codes map[int]int, failed int) string {
	keys := make([]int, 0, len(codes))
	for c := range codes {
		keys = append(keys, c)
	}
	sort.Ints(keys)
	var parts []string
	for _, c := range keys {
		parts = append(parts, fmt.Sprintf("%s(%d) x%d", kerr.Code(int16(c)).String(), c, codes[c]))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("undecodable x%d", failed))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
