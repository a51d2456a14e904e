// Command fuzzrate runs every Go fuzz target of the repository, one after another, and
// reports how many inputs per second each one executes.
//
// It finds the targets itself: every `func FuzzXxx(*testing.F)` in a tracked _test.go
// file of any module of the repository (the root module and the nested ones, each
// found by its go.mod). So `make fuzz` and `make fuzz-rate`, which both run this
// command, cannot miss a target: a new one is run the moment it is committed.
//
// Each target runs as
//
//	go test ./pkg -run '^$' -fuzz '^Name$' -fuzztime T -parallel P -fuzzminimizetime M
//
// from its module's folder. Its rate is the last progress line's total executions
// divided by that line's elapsed time (the whole run, baseline coverage included), not
// the fuzzer's instantaneous rate.
//
// M is a number of executions (2000x), not a time. When the minimization of a new input
// uses up a time limit, the coordinator's own deadline for the worker's answer passes
// first: it kills the worker, drops the executions the worker made and starts another.
// An input of a few KiB never finishes minimizing in seconds, so with a time limit
// (records.mk used 5 s) a target whose inputs are that large spent nearly all its time
// minimizing and restarting workers: FuzzUpstream ran 1 input a second, FuzzFrames of
// cmd/kwire 6, FuzzBatchNone 14.
//
// With -check (the default), a target fails when its rate is below its floor: 1000
// executions per second, or the number given by a comment on the line directly above
// the function, with the reason beside it:
//
//	// fuzz-rate: 200 (each input runs both engines over every version)
//	func FuzzBothEngines(f *testing.F) {
//
// A fuzz-rate comment anywhere else, one without a reason, a target that does not
// fuzz (no progress line: a build constraint left it out, or its baseline did not
// finish in time) and a target that finds a failure are errors too; a bare "context
// deadline exceeded" when the time is up, with no input written, is not (Go 1.26's
// coordinator races its own deadline, golang/go#75804). The command exits
// non-zero after the last target if any target failed.
//
// Usage: go run ./internal/fuzzrate [-time 20s] [-parallel 1] [-check=false] [-only regexp] [-list] [-v]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// defaultFloor is the rate, in executions per second, below which a target without a
// fuzz-rate comment fails.
const defaultFloor = 1000

// target is one fuzz function.
type target struct {
	Module string // the module's folder, relative to the repository root ("." for the root)
	Pkg    string // the package's folder, relative to the module ("." for the module's own)
	Name   string // FuzzXxx
	File   string // the file, relative to the repository root
	Line   int
	Floor  int    // executions per second
	Reason string // why the floor is below defaultFloor; empty for the default
}

// ID is the target as -only matches it and as the report names it: the package's
// folder relative to the repository root, then the function.
func (t target) ID() string {
	return filepath.ToSlash(filepath.Join(t.Module, t.Pkg)) + "/" + t.Name
}

func main() {
	fuzztime := flag.String("time", "20s", "-fuzztime of each target")
	parallel := flag.Int("parallel", 1, "-parallel of each target (fuzzing workers); 0 leaves go test's default, GOMAXPROCS")
	minimize := flag.String("minimize", "2000x", "-fuzzminimizetime of each target (a count of executions: see the package comment)")
	check := flag.Bool("check", true, "fail a target whose rate is below its floor")
	only := flag.String("only", "", "run only the targets whose id (folder/FuzzName) matches this regexp")
	list := flag.Bool("list", false, "print the targets with their floors and exit")
	verbose := flag.Bool("v", false, "print go test's output as it runs")
	goBin := flag.String("go", "go", "the go command")
	flag.Parse()

	root, err := repoRoot()
	if err != nil {
		fatal(err)
	}
	targets, errs := discover(root)
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, "fuzzrate:", e)
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fatal(err)
		}
		var kept []target
		for _, t := range targets {
			if re.MatchString(t.ID()) {
				kept = append(kept, t)
			}
		}
		targets = kept
	}
	if len(targets) == 0 {
		fatal(fmt.Errorf("no fuzz targets found"))
	}
	if *list {
		for _, t := range targets {
			fmt.Printf("%-60s floor %5d/s  %s:%d  %s\n", t.ID(), t.Floor, t.File, t.Line, t.Reason)
		}
		return
	}
	if _, err := time.ParseDuration(*fuzztime); err != nil {
		fatal(fmt.Errorf("-time: %v", err))
	}

	start := time.Now()
	var bad []string
	for _, t := range targets {
		args := []string{"test", "./" + filepath.ToSlash(t.Pkg), "-run", "^$", "-fuzz", "^" + t.Name + "$",
			"-fuzztime", *fuzztime, "-fuzzminimizetime", *minimize}
		if *parallel > 0 {
			args = append(args, "-parallel", strconv.Itoa(*parallel))
		}
		cmd := exec.Command(*goBin, args...)
		cmd.Dir = filepath.Join(root, t.Module)
		var out bytes.Buffer
		if *verbose {
			fmt.Printf("fuzzrate: (cd %s && %s %s)\n", t.Module, *goBin, strings.Join(quote(args), " "))
			cmd.Stdout = io.MultiWriter(&out, os.Stdout)
		} else {
			cmd.Stdout = &out
		}
		cmd.Stderr = cmd.Stdout
		began := time.Now()
		runErr := cmd.Run()
		wall := time.Since(began).Round(time.Second)

		p, ok := parseProgress(out.Bytes())
		status, detail := "ok", ""
		if runErr != nil && onlyDeadlineRace(out.Bytes(), t.Name) {
			runErr, detail = nil, "(go's end-of-run deadline race, golang/go#75804: nothing found)"
		}
		switch {
		case runErr != nil:
			status, detail = "FAIL", "go test failed: "+runErr.Error()
		case !ok && bytes.Contains(out.Bytes(), []byte("gathering baseline coverage")):
			status, detail = "FAIL", "its baseline coverage (the corpus run once) did not finish in the time"
		case !ok:
			status, detail = "FAIL", "no progress line: the target did not fuzz (a build constraint left it out?)"
		case *check && p.Rate() < float64(t.Floor):
			status, detail = "SLOW", fmt.Sprintf("below its floor of %d/s", t.Floor)
		}
		rate := "-"
		if ok {
			rate = fmt.Sprintf("%.0f/s", p.Rate())
		}
		floor := fmt.Sprintf("floor %d/s", t.Floor)
		if !*check {
			floor = ""
		}
		fmt.Printf("%-4s %-58s %10s  %-14s execs %d in %s (wall %s)", status, t.ID(), rate, floor, p.Execs, p.Elapsed, wall)
		if detail != "" {
			fmt.Printf("  %s", detail)
		}
		fmt.Println()
		if status != "ok" {
			bad = append(bad, t.ID())
			if status == "FAIL" && !*verbose {
				os.Stdout.Write(tail(out.Bytes(), 40))
			}
		}
	}
	fmt.Printf("fuzzrate: %d targets, %d ok, %d failed or below their floor, %s\n",
		len(targets), len(targets)-len(bad), len(bad), time.Since(start).Round(time.Second))
	if len(bad) > 0 {
		fmt.Printf("fuzzrate: not ok: %s\n", strings.Join(bad, " "))
		os.Exit(1)
	}
}

// progress is the fuzzer's last "execs" line.
type progress struct {
	Elapsed time.Duration
	Execs   int64
}

// Rate is the executions per second over the whole run. The fuzzer rounds elapsed to
// the second; a run shorter than that counts as one second.
func (p progress) Rate() float64 {
	s := p.Elapsed.Seconds()
	if s < 1 {
		s = 1
	}
	return float64(p.Execs) / s
}

// progressLine matches the fuzzer's progress lines, e.g.
// "fuzz: elapsed: 21s, execs: 123456 (5890/sec), new interesting: 3 (total: 140)".
var progressLine = regexp.MustCompile(`(?m)^fuzz: elapsed: (\S+), execs: (\d+) \(`)

// parseProgress returns the last progress line of go test's output.
func parseProgress(out []byte) (progress, bool) {
	m := progressLine.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return progress{}, false
	}
	last := m[len(m)-1]
	d, err := time.ParseDuration(string(last[1]))
	if err != nil {
		return progress{}, false
	}
	n, err := strconv.ParseInt(string(last[2]), 10, 64)
	if err != nil {
		return progress{}, false
	}
	return progress{Elapsed: d, Execs: n}, true
}

// onlyDeadlineRace reports whether the one failure go test printed for target name is a
// bare "context deadline exceeded": Go 1.26's fuzz coordinator sometimes reports its own
// -fuzztime deadline as a failure when a worker answers late at the end of the run
// (golang/go#75804, fixed in Go 1.27). A real failure says what failed and writes the
// input ("Failing input written to ...").
func onlyDeadlineRace(out []byte, name string) bool {
	lines := strings.Split(string(out), "\n")
	var msgs []string
	for i, l := range lines {
		if !strings.HasPrefix(l, "--- FAIL: "+name+" (") {
			continue
		}
		if msgs != nil {
			return false // two failures
		}
		msgs = []string{}
		for _, m := range lines[i+1:] {
			if !strings.HasPrefix(m, "    ") {
				break
			}
			msgs = append(msgs, strings.TrimSpace(m))
		}
	}
	return len(msgs) == 1 && msgs[0] == "context deadline exceeded" &&
		!bytes.Contains(out, []byte("Failing input written to")) && !bytes.Contains(out, []byte("panic: "))
}

// floorComment matches a fuzz-rate comment: the floor, then the reason.
var floorComment = regexp.MustCompile(`^//\s*fuzz-rate:\s*(\S*)\s*(.*)$`)

// discover lists the fuzz targets of every tracked _test.go file under root, sorted by
// id, and every misplaced or malformed fuzz-rate comment as an error.
func discover(root string) ([]target, []error) {
	files, err := gitFiles(root, "*_test.go")
	if err != nil {
		return nil, []error{err}
	}
	mods, err := gitFiles(root, "go.mod", "*/go.mod")
	if err != nil {
		return nil, []error{err}
	}
	var modDirs []string
	for _, m := range mods {
		modDirs = append(modDirs, filepath.Dir(m))
	}
	var targets []target
	var errs []error
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			if os.IsNotExist(err) { // deleted in the work tree, not yet in the index
				continue
			}
			errs = append(errs, err)
			continue
		}
		ts, es := scanFile(f, src)
		errs = append(errs, es...)
		for _, t := range ts {
			mod, ok := moduleOf(filepath.Dir(f), modDirs)
			if !ok {
				errs = append(errs, fmt.Errorf("%s:%d: %s is in no module", f, t.Line, t.Name))
				continue
			}
			t.Module = mod
			t.Pkg, _ = filepath.Rel(mod, filepath.Dir(f))
			targets = append(targets, t)
		}
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].ID() < targets[j].ID() })
	return targets, errs
}

// scanFile returns the fuzz targets of one Go test file (name is its path, for
// messages and target.File).
func scanFile(name string, src []byte) ([]target, []error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, []error{err}
	}
	// The fuzz-rate comments by line.
	floors := map[int]*ast.Comment{}
	for _, g := range file.Comments {
		for _, c := range g.List {
			if floorComment.MatchString(c.Text) {
				floors[fset.Position(c.Slash).Line] = c
			}
		}
	}
	var targets []target
	var errs []error
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !isFuzzName(fn.Name.Name) || !takesTestingF(fn) {
			continue
		}
		line := fset.Position(fn.Pos()).Line
		t := target{Name: fn.Name.Name, File: name, Line: line, Floor: defaultFloor}
		if c, ok := floors[line-1]; ok {
			delete(floors, line-1)
			m := floorComment.FindStringSubmatch(c.Text)
			n, err := strconv.Atoi(m[1])
			reason := strings.TrimSpace(m[2])
			switch {
			case err != nil || n <= 0:
				errs = append(errs, fmt.Errorf("%s:%d: fuzz-rate wants a positive number of executions per second, not %q", name, line-1, m[1]))
			case reason == "":
				errs = append(errs, fmt.Errorf("%s:%d: fuzz-rate %d of %s gives no reason", name, line-1, n, t.Name))
			default:
				t.Floor, t.Reason = n, reason
			}
		}
		targets = append(targets, t)
	}
	for line := range floors {
		errs = append(errs, fmt.Errorf("%s:%d: a fuzz-rate comment must be on the line directly above a func Fuzz", name, line))
	}
	return targets, errs
}

// isFuzzName reports whether go test takes name as a fuzz target: "Fuzz", then
// nothing or a character that is not a lower-case letter.
func isFuzzName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Fuzz")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// takesTestingF reports whether fn's one parameter is a *testing.F (under whatever
// name the file imports testing).
func takesTestingF(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

// moduleOf returns the innermost module folder holding dir.
func moduleOf(dir string, modDirs []string) (string, bool) {
	best, depth := "", -1
	for _, m := range modDirs {
		d := len(m)
		if m == "." {
			d = 0
		} else if dir != m && !strings.HasPrefix(dir, m+string(filepath.Separator)) {
			continue
		}
		if d > depth {
			best, depth = m, d
		}
	}
	return best, depth >= 0
}

func gitFiles(root string, patterns ...string) ([]string, error) {
	cmd := exec.Command("git", append([]string{"ls-files", "--"}, patterns...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			files = append(files, filepath.FromSlash(l))
		}
	}
	return files, nil
}

func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse --show-toplevel: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// tail returns the last n lines of b.
func tail(b []byte, n int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, nil)
}

func quote(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$*() ") {
			a = "'" + a + "'"
		}
		q[i] = a
	}
	return q
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "fuzzrate:", err)
	os.Exit(1)
}
