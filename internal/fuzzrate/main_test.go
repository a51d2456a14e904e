package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseProgress(t *testing.T) {
	out := `fuzz: elapsed: 0s, gathering baseline coverage: 0/120 completed
fuzz: elapsed: 2s, gathering baseline coverage: 120/120 completed, now fuzzing with 1 workers
fuzz: elapsed: 3s, execs: 9000 (4500/sec), new interesting: 2 (total: 122)
fuzz: elapsed: 1m0s, execs: 300000 (99999/sec), new interesting: 7 (total: 127)
PASS
ok  	example.com/p	61.2s
`
	p, ok := parseProgress([]byte(out))
	if !ok {
		t.Fatal("no progress found")
	}
	// The last line's total over its elapsed time, not its instantaneous rate.
	if p.Execs != 300000 || p.Elapsed != time.Minute || p.Rate() != 5000 {
		t.Fatalf("got %d execs in %v, %.1f/s; want 300000 in 1m0s, 5000/s", p.Execs, p.Elapsed, p.Rate())
	}
	if _, ok := parseProgress([]byte("fuzz: elapsed: 20s, gathering baseline coverage: 3/900 completed\n")); ok {
		t.Fatal("a run that never left its baseline has a rate")
	}
	// Without coverage instrumentation the line ends after the rate.
	if p, ok := parseProgress([]byte("fuzz: elapsed: 0s, execs: 12 (40/sec)\n")); !ok || p.Rate() != 12 {
		t.Fatalf("short run: %+v %v, want 12 execs counted over one second", p, ok)
	}
}

func TestScanFile(t *testing.T) {
	src := `package p

import tt "testing"

// FuzzPlain has the default floor.
func FuzzPlain(f *tt.F) {}

// fuzz-rate: 200 (each input runs both engines over every version)
func FuzzSlow(f *tt.F) {}

func FuzzWrongArg(t *tt.T) {}

func Fuzzy(f *tt.F) {}

func Fuzz_under(f *tt.F) {}

func (x) FuzzMethod(f *tt.F) {}
`
	ts, errs := scanFile("p/a_test.go", []byte(src))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, x := range ts {
		got = append(got, x.Name+":"+strconv.Itoa(x.Floor))
	}
	if want := "FuzzPlain:1000 FuzzSlow:200 Fuzz_under:1000"; strings.Join(got, " ") != want {
		t.Fatalf("targets %q, want %q", strings.Join(got, " "), want)
	}
	if ts[1].Reason != "(each input runs both engines over every version)" || ts[1].Line != 9 {
		t.Fatalf("FuzzSlow: reason %q at line %d", ts[1].Reason, ts[1].Line)
	}
}

func TestScanFileBadComments(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"// fuzz-rate: 200\nfunc FuzzA(f *testing.F) {}\n", "gives no reason"},
		{"// fuzz-rate: many (slow)\nfunc FuzzA(f *testing.F) {}\n", "positive number"},
		{"// fuzz-rate: 0 (slow)\nfunc FuzzA(f *testing.F) {}\n", "positive number"},
		{"// fuzz-rate: 200 (slow)\n\nfunc FuzzA(f *testing.F) {}\n", "directly above"},
		{"// fuzz-rate: 200 (slow)\nfunc helper(f *testing.F) {}\n", "directly above"},
	} {
		_, errs := scanFile("p/a_test.go", []byte("package p\n\nimport \"testing\"\n\n"+c.src))
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%q: errors %v, want one saying %q", c.src, errs, c.want)
		}
	}
}

func TestModuleOf(t *testing.T) {
	mods := []string{".", "cmd/kwire", filepath.FromSlash("conformance/hosts/proxywasm")}
	for dir, want := range map[string]string{
		"codec/records":                      ".",
		"cmd/kwire":                          "cmd/kwire",
		"cmd/kwire/internal/frames":          "cmd/kwire",
		"cmd/kwirex":                         ".",
		"conformance/hosts/proxywasm":        "conformance/hosts/proxywasm",
		"conformance/hosts/wazero/something": ".",
	} {
		if got, ok := moduleOf(filepath.FromSlash(dir), mods); !ok || got != filepath.FromSlash(want) {
			t.Errorf("moduleOf(%s) = %q %v, want %q", dir, got, ok, want)
		}
	}
}

// TestDiscoverRepository: the command finds the repository's own targets, in every
// module, and every fuzz-rate comment in the tree is well formed and in place.
func TestDiscoverRepository(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Skip(err)
	}
	targets, errs := discover(root)
	for _, e := range errs {
		t.Error(e)
	}
	seen := map[string]bool{}
	for _, x := range targets {
		seen[x.ID()] = true
	}
	for _, id := range []string{"codec/FuzzDecodeRequestFrame", "internal/recordscan/FuzzScanRecords",
		"cmd/kwire/internal/frames/FuzzFrames", "conformance/hosts/proxywasm/FuzzModuleData"} {
		if !seen[id] {
			t.Errorf("%s not found among %d targets", id, len(targets))
		}
	}
}

func TestOnlyDeadlineRace(t *testing.T) {
	race := `fuzz: elapsed: 20s, execs: 393745 (18462/sec), new interesting: 41 (total: 48)
--- FAIL: FuzzBatchNone (20.08s)
    context deadline exceeded
FAIL
exit status 1
`
	if !onlyDeadlineRace([]byte(race), "FuzzBatchNone") {
		t.Error("the coordinator's deadline race is taken for a failure")
	}
	for name, out := range map[string]string{
		"a crash": `--- FAIL: FuzzBatchNone (3.10s)
    --- FAIL: FuzzBatchNone (0.00s)
        fuzz_test.go:12: round trip: record 0 differs

    Failing input written to testdata/fuzz/FuzzBatchNone/0123456789abcdef
    To re-run:
    go test -run=FuzzBatchNone/0123456789abcdef
FAIL
`,
		"a hang": `--- FAIL: FuzzBatchNone (20.08s)
    fuzzing process hung or terminated unexpectedly: exit status 2
    Failing input written to testdata/fuzz/FuzzBatchNone/0123456789abcdef
FAIL
`,
		"a deadline and a failure written": `--- FAIL: FuzzBatchNone (20.08s)
    context deadline exceeded
Failing input written to testdata/fuzz/FuzzBatchNone/0123456789abcdef
`,
		"another target's race": race,
	} {
		target := "FuzzBatchNone"
		if name == "another target's race" {
			target = "FuzzBatchGzip"
		}
		if onlyDeadlineRace([]byte(out), target) {
			t.Errorf("%s is taken for the deadline race", name)
		}
	}
}
