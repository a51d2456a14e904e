// Command gen writes kwire's message code from Apache Kafka's JSON message descriptors.
//
// It reads the descriptors of every release named in codec/spec.lock (extracted into
// build/spec/<release>/ by `make spec`), merges them oldest to newest, and writes one Go
// file per message into codec/, a registry, and codectest's random fillers. With -check
// it writes nothing and fails when the committed files differ from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/kwire/kwire/internal/gen/genfiles"
	"github.com/kwire/kwire/internal/speclock"
)

func main() {
	lock := flag.String("lock", "codec/spec.lock", "spec lock file")
	spec := flag.String("spec", "build/spec", "folder holding <release>/*.json")
	out := flag.String("out", "codec", "codec package folder")
	check := flag.Bool("check", false, "compare instead of writing")
	flag.Parse()
	if err := run(*lock, *spec, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func run(lockPath, specDir, outDir string, check bool) error {
	rels, err := speclock.Read(lockPath)
	if err != nil {
		return err
	}
	var merged map[string]*Message
	var relNames []string
	for _, rel := range rels {
		raw, err := loadRelease(filepath.Join(specDir, rel.Name))
		if err != nil {
			return err
		}
		relNames = append(relNames, rel.Name)
		cur := map[string]*Message{}
		unstable := map[int]bool{}
		for name, rm := range raw {
			m, err := buildMessage(rel.Name, rm)
			if err != nil {
				return err
			}
			cur[name] = m
			if rm.Type == "request" && rm.LatestVersionUnstable && rm.APIKey != nil {
				unstable[*rm.APIKey] = true
			}
		}
		for _, m := range cur {
			if m.APIKey >= 0 && unstable[m.APIKey] {
				m.unstableLatest = true
			}
		}
		if merged == nil {
			merged = cur
			continue
		}
		for name, m := range cur {
			if old, ok := merged[name]; ok {
				if merged[name], err = mergeMessages(old, m); err != nil {
					return err
				}
			} else {
				merged[name] = m
			}
		}
	}
	var msgs []*Message
	for _, m := range merged {
		if m.Valid.empty() {
			continue
		}
		msgs = append(msgs, m)
	}
	if err := finish(msgs); err != nil {
		return err
	}
	byKey, _ := primaryByKey(msgs, relNames)
	for _, m := range msgs {
		m.currentName = supersededName(m, byKey)
	}
	files := genfiles.Files{}
	for _, m := range msgs {
		if err := files.AddGo(filepath.Join(outDir, snake(m.Name)+"_gen.go"), genMessage(m)); err != nil {
			return err
		}
	}
	if err := files.AddGo(filepath.Join(outDir, "registry_gen.go"), genRegistry(msgs, relNames)); err != nil {
		return err
	}
	root := filepath.Dir(filepath.Clean(outDir))
	schemaDir := filepath.Join(root, "internal", "transcode")
	if err := files.AddGo(filepath.Join(schemaDir, "schema_gen.go"), genSchema(msgs, relNames)); err != nil {
		return err
	}
	// Type declarations of the JSON form for the bindings, beside them.
	files[filepath.Join(root, "bindings", "js", "messages.d.ts")] = []byte(genTS(msgs, relNames))
	files[filepath.Join(root, "bindings", "python", "kwire", "messages.py")] = []byte(genPy(msgs, relNames))
	// Named api keys and error codes for every binding.
	apis := apiConsts(msgs, relNames)
	files[filepath.Join(root, "bindings", "js", "src", "constants.js")] = []byte(genConstsJS(apis, relNames))
	files[filepath.Join(root, "bindings", "js", "src", "constants.d.ts")] = []byte(genConstsDTS(apis, relNames))
	files[filepath.Join(root, "bindings", "python", "kwire", "constants.py")] = []byte(genConstsPy(apis, relNames))
	files[filepath.Join(root, "bindings", "rust", "src", "constants.rs")] = []byte(genConstsRust(apis, relNames))
	files[filepath.Join(root, "capi", "kwire_constants.h")] = []byte(genConstsC(apis, relNames))
	// Generated files that would no longer be written are stale.
	existing, _ := filepath.Glob(filepath.Join(outDir, "*_gen.go"))
	for _, dir := range []string{filepath.Join(outDir, "codectest"), filepath.Join(outDir, "transcode"), schemaDir} {
		more, _ := filepath.Glob(filepath.Join(dir, "*_gen.go"))
		existing = append(existing, more...)
	}
	var diffs []string
	for _, p := range existing {
		if _, ok := files[p]; !ok {
			if check {
				diffs = append(diffs, p+" (stale)")
			} else if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	more, err := files.Sync("", check)
	if err != nil {
		return err
	}
	diffs = append(diffs, more...)
	if len(diffs) > 0 {
		return fmt.Errorf("generated code is out of date (run make generate):\n  %s", strings.Join(diffs, "\n  "))
	}
	if check {
		fmt.Printf("gen: %d generated files match the descriptors of %s\n", len(files), strings.Join(relNames, ", "))
	} else {
		fmt.Printf("gen: wrote %d files for %d messages from %s\n", len(files), len(msgs), strings.Join(relNames, ", "))
	}
	return nil
}
