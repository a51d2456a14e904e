package abi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Package fmt brings reflection, internal/fmtsort and its formatting tables into every
// program that reaches it: a few hundred kilobytes of a WebAssembly module. The
// WebAssembly builds keep it out of kwire's own code; TestWasmLinksNoFmt builds them
// as the Makefile does, with the linker's -dumpdep, and fails on an edge into fmt's code.
//
// -dumpdep prints, for every symbol the linker keeps, the first edge that reached it.
// Without compressors (kwire_nocompress) no fmt code may be reached at all: that covers
// every package of kwire.wasm except the compressors' glue. The full kwire.wasm links
// github.com/klauspost/compress and github.com/pierrec/lz4, which use fmt themselves
// (zstd.NewWriter, zstd.WithEncoderLevel, gzip.NewWriterLevel, lz4's package
// initialisation), so there fmt may be reached only from those libraries, the standard
// library packages they bring (log, math/big, ...) and codec/records' compressor glue,
// where their option functions are inlined.

// fmtEdges builds pkg for GOOS=wasip1 with tags and returns the -dumpdep edges into
// fmt's code (not from fmt itself) whose caller allowed rejects (nil: every one).
func fmtEdges(t *testing.T, pkg, tags string, allowed func(caller string) bool) []string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"build", "-buildmode=c-shared", "-trimpath", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "m.wasm")}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String()))
	}
	var bad []string
	n := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		caller, target, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		n++
		caller, _, _ = strings.Cut(caller, " <")
		if !strings.HasPrefix(target, "fmt.") || dataSymbol(target) ||
			strings.HasPrefix(caller, "fmt.") || strings.HasPrefix(caller, "type:*fmt.") || strings.HasPrefix(caller, "type:fmt.") {
			continue
		}
		if allowed == nil || !allowed(caller) {
			bad = append(bad, line)
		}
	}
	// The check can fail only if the linker printed its graph.
	if n < 1000 || !strings.Contains(stderr.String(), "go:main.inittasks -> ") {
		t.Fatalf("go %s printed %d dependency edges; want the linker's -dumpdep graph\n%s", strings.Join(args, " "), n, tail(stderr.String()))
	}
	return bad
}

// dataSymbol tells whether a symbol is per-function metadata rather than code: the
// linker deduplicates identical metadata under any one of its names, so a kept
// "fmt.(*pp).badVerb.stkobj" may well belong to a function outside fmt.
func dataSymbol(sym string) bool {
	for _, s := range []string{".arginfo0", ".arginfo1", ".argliveinfo", ".stkobj", ".opendefer", ".wrapinfo"} {
		if strings.HasSuffix(sym, s) {
			return true
		}
	}
	return strings.Contains(sym, "..stmp_")
}

// fromCompressors accepts the callers through which the compression libraries reach fmt.
func fromCompressors(caller string) bool {
	for _, p := range []string{"github.com/klauspost/compress/", "github.com/pierrec/lz4/", "github.com/kwire/kwire/codec/records."} {
		if strings.HasPrefix(caller, p) {
			return true
		}
	}
	// A standard library package (log, math/big, encoding/hex, ...): only those
	// libraries bring the ones that use fmt, as the kwire_nocompress build shows.
	first, _, _ := strings.Cut(caller, "/")
	return !strings.Contains(first, ".") && !strings.HasPrefix(caller, "main.") && !strings.HasPrefix(caller, "_")
}

func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}

func TestWasmLinksNoFmt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping three GOOS=wasip1 builds of the wasm modules")
	}
	for _, c := range []struct {
		name, pkg, tags string
		allowed         func(string) bool
	}{
		{"kwire.wasm without compressors", "./wasm", "kwire_nocompress", nil},
		{"kwire-envoy.wasm", "./envoy", "kwire_nocompress", nil},
		{"kwire.wasm", "./wasm", "", fromCompressors},
	} {
		t.Run(c.name, func(t *testing.T) {
			if bad := fmtEdges(t, c.pkg, c.tags, c.allowed); len(bad) > 0 {
				t.Errorf("%s (GOOS=wasip1, tags %q) reaches package fmt; first edges into it:\n%s",
					c.pkg, c.tags, strings.Join(bad, "\n"))
			}
		})
	}
}
