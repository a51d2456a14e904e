package kwwasmtime

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/transcode"
	"github.com/kwire/kwire/conformance/internal/abiclient/hosttest"
)

func mb(n int) float64 { return float64(n) / 1e6 }

func gzipSize(b []byte) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Len()
}

// summaryTable is the table of measures against their targets.
type summaryTable struct{ rows [][4]string }

func (s *summaryTable) add(what, now, target string, met bool) {
	m := "no"
	if met {
		m = "yes"
	}
	s.rows = append(s.rows, [4]string{what, now, target, m})
}

func (s *summaryTable) String() string {
	var b strings.Builder
	b.WriteString("\nsummary (this run)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "measure\tnow\ttarget\tmet\t\n")
	for _, r := range s.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", r[0], r[1], r[2], r[3])
	}
	tw.Flush()
	return b.String()
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuWall(cpu, wall time.Duration) string {
	return cpu.Round(time.Millisecond).String() + "; " + wall.Round(time.Millisecond).String()
}

// pythonFirstCall times a fresh Python process importing kwire and making one call with
// an empty compilation cache (the package's venv, made by `make python`): its CPU time
// (user + system, all threads) and its wall time.
func pythonFirstCall() (cpu, wall time.Duration, err error) {
	py := filepath.Join(repoRoot(), "bindings", "python", ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return 0, 0, fmt.Errorf("no venv (make python)")
	}
	cache, err := os.MkdirTemp("", "kwire-cache-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(cache)
	cmd := exec.Command(py, "-c", "import kwire; kwire.header_versions(18, 3)")
	cmd.Env = append(os.Environ(), "KWIRE_CACHE_DIR="+cache, "KWIRE_WASM="+hosttest.WasmPath(), "PYTHONPATH="+filepath.Join(repoRoot(), "bindings", "python"))
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	wall = time.Since(t0)
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall, nil
}

func repoRoot() string { return filepath.Join(filepath.Dir(hosttest.WasmPath()), "..") }

type engineRatio struct {
	what  string
	ratio float64
}

var engineRatios []engineRatio

// engineTable times the transcoder against the typed codec natively on the vectors of
// ProduceRequest, FetchResponse and MetadataResponse: decode to JSON (typed: Decode then
// AppendJSON) and encode from JSON (typed: DecodeJSON then Encode).
func engineTable(t *testing.T, dur time.Duration) string {
	var b strings.Builder
	b.WriteString("transcoder against the typed codec, native Go (same vectors, same run)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "message\top\ttyped codec\ttranscoder\tratio\t\n")
	engineRatios = nil
	for _, name := range []string{"ProduceRequest", "FetchResponse", "MetadataResponse"} {
		items, _ := work(t, map[string]bool{name: true})
		var jsons [][]byte
		for _, it := range items {
			jsons = append(jsons, it.json)
		}
		typedDec := func() error {
			var out []byte
			for _, it := range items {
				m := codec.NewMessage(it.name)
				if err := m.Decode(it.bytes, it.version); err != nil {
					return err
				}
				var err error
				if out, err = m.AppendJSON(out[:0], it.version); err != nil {
					return err
				}
			}
			return nil
		}
		transDec := func() error {
			var out []byte
			for _, it := range items {
				var err error
				if out, err = transcode.AppendJSON(out[:0], it.name, it.version, it.bytes, nil); err != nil {
					return err
				}
			}
			return nil
		}
		typedEnc := func() error {
			var out []byte
			for _, it := range items {
				m := codec.NewMessage(it.name)
				if err := m.DecodeJSON(it.json, it.version); err != nil {
					return err
				}
				var err error
				if out, err = m.Encode(out[:0], it.version); err != nil {
					return err
				}
			}
			return nil
		}
		transEnc := func() error {
			var out []byte
			for _, it := range items {
				var err error
				if out, err = transcode.AppendWire(out[:0], it.name, it.version, it.json); err != nil {
					return err
				}
			}
			return nil
		}
		for _, op := range []struct {
			name         string
			typed, trans func() error
		}{{"decode to JSON", typedDec, transDec}, {"encode from JSON", typedEnc, transEnc}} {
			// Alternate the two, best of three rounds each.
			var best [2]time.Duration
			for round := 0; round < 3; round++ {
				for i, fn := range []func() error{op.typed, op.trans} {
					d, err := measure(dur/3, fn)
					if err != nil {
						t.Fatalf("%s %s: %v", name, op.name, err)
					}
					if best[i] == 0 || d < best[i] {
						best[i] = d
					}
				}
			}
			r := float64(best[1]) / float64(best[0])
			engineRatios = append(engineRatios, engineRatio{fmt.Sprintf("transcoder vs typed codec, %s %s", name, op.name), r})
			fmt.Fprintf(tw, "%s (%d vectors)\t%s\t%v\t%v\t%.2fx\t\n", name, len(items), op.name, best[0].Round(time.Microsecond), best[1].Round(time.Microsecond), r)
		}
	}
	tw.Flush()
	return b.String()
}
