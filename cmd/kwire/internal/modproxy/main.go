// Command modproxy writes a Go module proxy (the GOPROXY=file:// layout) holding the
// library, the kwire command and the repository's other modules the command requires
// (the proxy-wasm host of kwire envoy) as they are in this checkout, at one release
// version, so that `go install github.com/kwire/kwire/cmd/kwire@latest` can be tried as a user
// would try it after a release: no workspace, no replace directive, module zips and
// go.sum lines made as Go makes them.
//
//	go run ./internal/modproxy -repo ../.. -version v0.1.0 -out DIR
//
// A module's files are the repository's tracked files under its directory (as they
// are in the working tree), less those of nested modules and the workspace file. The
// command's go.sum gets the lines of the library and of those modules for the version,
// as a release commit would carry them.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const (
	libraryPath = "github.com/kwire/kwire"
	commandPath = "github.com/kwire/kwire/cmd/kwire"
	commandDir  = "cmd/kwire"
)

// required are the modules of the repository, besides the library, that the command
// requires at the release version, by directory.
var required = []string{"conformance/hosts/proxywasm"}

func main() {
	repo := flag.String("repo", "../..", "the repository's root")
	version := flag.String("version", "v0.1.0", "the release version both modules get")
	out := flag.String("out", "", "the proxy directory to write (GOPROXY=file://DIR)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "modproxy: -out is required")
		os.Exit(2)
	}
	if err := run(*repo, *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(repo, version, out string) error {
	list, err := exec.Command("git", "-C", repo, "ls-files", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	tracked := strings.Split(strings.TrimRight(string(list), "\x00"), "\x00")
	var nested []string // directories of the modules below the root
	for _, f := range tracked {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			nested = append(nested, path.Dir(f)+"/")
		}
	}
	if !slices.Contains(nested, commandDir+"/") {
		return errors.New(commandDir + "/go.mod is not tracked in " + repo)
	}
	filesOf := func(dir string) map[string][]byte {
		files := map[string][]byte{}
		for _, f := range tracked {
			rel, ok := f, dir == ""
			if !ok {
				rel, ok = strings.CutPrefix(f, dir+"/")
			}
			if !ok || path.Base(f) == "go.work" || slices.ContainsFunc(nested, func(n string) bool {
				return n != dir+"/" && strings.HasPrefix(f, n)
			}) {
				continue
			}
			st, err := os.Lstat(filepath.Join(repo, f))
			if err != nil || !st.Mode().IsRegular() {
				continue // deleted in the working tree, or a symlink (module zips hold neither)
			}
			b, err := os.ReadFile(filepath.Join(repo, f))
			if err != nil {
				continue
			}
			files[rel] = b
		}
		return files
	}

	cmd := filesOf(commandDir)
	var written []string
	for _, dir := range append([]string{""}, required...) {
		if dir != "" && !slices.Contains(nested, dir+"/") {
			return errors.New(dir + "/go.mod is not tracked in " + repo)
		}
		files := filesOf(dir)
		modPath := path.Join(libraryPath, dir)
		zipHash, err := writeModule(out, modPath, version, files)
		if err != nil {
			return err
		}
		sums := fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", modPath, version, zipHash, modPath, version, modHash(files["go.mod"]))
		cmd["go.sum"] = append(cmd["go.sum"], sums...)
		written = append(written, fmt.Sprintf("%s (%d files)", modPath, len(files)))
	}
	if _, err := writeModule(out, commandPath, version, cmd); err != nil {
		return err
	}
	written = append(written, fmt.Sprintf("%s (%d files)", commandPath, len(cmd)))
	fmt.Printf("modproxy: at %s in %s: %s\n", version, out, strings.Join(written, ", "))
	return nil
}

// writeModule writes one module version in the proxy layout and returns its zip's
// go.sum hash.
func writeModule(out, modPath, version string, files map[string][]byte) (string, error) {
	dir := filepath.Join(out, filepath.FromSlash(modPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	prefix := modPath + "@" + version + "/"
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, n := range names {
		w, err := zw.Create(prefix + n)
		if err != nil {
			return "", err
		}
		if _, err := w.Write(files[n]); err != nil {
			return "", err
		}
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	info, _ := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  files["go.mod"],
		version + ".zip":  zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	prefixed := map[string][]byte{}
	for _, n := range names {
		prefixed[prefix+n] = files[n]
	}
	return hash1(prefixed), nil
}

// hash1 is Go's "h1:" checksum of a set of files: the SHA-256 of a listing of each
// file's SHA-256 and name, in name order.
func hash1(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256(files[n]), n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// modHash is the go.sum hash of a go.mod file (the ".../go.mod" line).
func modHash(goMod []byte) string { return hash1(map[string][]byte{"go.mod": goMod}) }
