// Package hosttest is the test suite every WebAssembly host of kwire.wasm runs through
// the shared ABI client: the conformance vectors, frames and record tables against the
// abi package natively, boundary misuse and garbage, and (for hosts that run them) the
// memory and steady-state checks. A host's test file builds a Suite and calls Run.
package hosttest

import (
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/kwire/kwire/conformance"
	"github.com/kwire/kwire/conformance/internal/abiclient"
)

// VectorDir is conformance/vectors as seen from a host's folder (conformance/hosts/<host>).
const VectorDir = "../../vectors"

// WasmPath is build/kwire.wasm of the repository as seen from a host's folder, or
// $KWIRE_WASM.
func WasmPath() string {
	if p := os.Getenv("KWIRE_WASM"); p != "" {
		return p
	}
	return "../../../build/kwire.wasm"
}

// Instance is a host's instance: its type embeds the *abiclient.Client.
type Instance interface {
	ABI() *abiclient.Client
	Close() error
}

// Suite is one host under test.
type Suite struct {
	// Label names the host in the coverage tables ("wasm in wazero").
	Label string
	// New instantiates the module.
	New func(t testing.TB) (Instance, error)

	relOnce sync.Once
	rels    []conformance.Release
	relErr  error
}

// Instance returns a fresh instance, released when the test ends.
func (s *Suite) Instance(t testing.TB) *abiclient.Client {
	t.Helper()
	in, err := s.New(t)
	if err != nil {
		t.Fatalf("%s: instantiating: %v", s.Label, err)
	}
	t.Cleanup(func() { in.Close() })
	return in.ABI()
}

// Lazy is a value made once per test binary (a compiled module, say).
type Lazy[T any] struct {
	once sync.Once
	v    T
	err  error
}

// Get makes the value with make on the first call, and returns it; an error of make
// fails every test that asks.
func (l *Lazy[T]) Get(t testing.TB, make func() (T, error)) T {
	t.Helper()
	l.once.Do(func() { l.v, l.err = make() })
	if l.err != nil {
		t.Fatalf("loading %s: %v", WasmPath(), l.err)
	}
	return l.v
}

// Releases are the vectors of every release, read once.
func (s *Suite) Releases(t testing.TB) []conformance.Release {
	t.Helper()
	s.relOnce.Do(func() { s.rels, s.relErr = conformance.LoadReleases(VectorDir) })
	if s.relErr != nil {
		t.Fatalf("loading vectors: %v", s.relErr)
	}
	return s.rels
}

type check struct {
	name string
	run  func(*testing.T)
}

func runAll(t *testing.T, checks []check) {
	for _, c := range checks {
		t.Run(c.name, c.run)
	}
}

// Run runs the checks every host passes, each as a subtest.
func (s *Suite) Run(t *testing.T) {
	runAll(t, []check{
		{"Version", s.version},
		{"Vectors", s.vectors},
		{"Frames", s.frames},
		{"RecordVectors", s.recordVectors},
		{"RequestTrailingBytes", s.requestTrailingBytes},
		{"FrameRecords", s.frameRecords},
		{"RuntimeStats", s.runtimeStats},
		{"RulesCheck", s.rulesCheck},
		{"Misuse", s.misuse},
		{"Garbage", s.garbage},
	})
}

// RunMemory runs the memory checks: no growth of linear memory over 10^6 decode/free
// cycles, no allocation in the frame-records steady state, and the controls that show
// a leak would be seen.
func (s *Suite) RunMemory(t *testing.T) {
	runAll(t, []check{
		{"NoMemoryGrowth", s.noMemoryGrowth},
		{"LeakIsVisible", s.leakIsVisible},
		{"FrameRecordsSteadyState", s.frameRecordsSteadyState},
		{"SteadyStateIsVisible", s.steadyStateIsVisible},
	})
}

// memCycles is KWIRE_MEM_CYCLES, or def when it is not set.
func memCycles(t *testing.T, def int) int {
	v := os.Getenv("KWIRE_MEM_CYCLES")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1000 {
		t.Fatalf("KWIRE_MEM_CYCLES=%q", v)
	}
	return n
}
