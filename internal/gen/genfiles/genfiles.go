// Package genfiles holds what a code generator writes and writes it, or, for a check,
// compares it with the files on disk.
package genfiles

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"sort"
)

// Files maps a file's path (below the root given to Sync) to its content.
type Files map[string][]byte

// AddGo adds Go source, gofmt'ed. Source that does not parse is written to
// kwire-gen-broken.go in the temporary folder, to be read beside the error.
func (fs Files) AddGo(path, src string) error {
	b, err := format.Source([]byte(src))
	if err != nil {
		os.WriteFile(filepath.Join(os.TempDir(), "kwire-gen-broken.go"), []byte(src), 0o644)
		return fmt.Errorf("%s: gofmt: %v", path, err)
	}
	fs[path] = b
	return nil
}

// Sync writes every file below root, making its folder, in the order of the paths.
// With check it writes nothing and returns the paths, in order, whose file is missing
// or differs.
func (fs Files) Sync(root string, check bool) (diffs []string, err error) {
	paths := make([]string, 0, len(fs))
	for p := range fs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(root, p)
		if check {
			cur, err := os.ReadFile(full)
			if err != nil || !bytes.Equal(cur, fs[p]) {
				diffs = append(diffs, p)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, fs[p], 0o644); err != nil {
			return nil, err
		}
	}
	return diffs, nil
}
