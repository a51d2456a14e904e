// Command fetchspec fetches the kafka-clients jars named in codec/spec.lock with Maven,
// checks each jar's sha256 against the lock, and extracts its message descriptors
// (common/message/*.json) into <out>/<release>/.
package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kwire/kwire/internal/speclock"
)

func main() {
	lock := flag.String("lock", "codec/spec.lock", "spec lock file")
	out := flag.String("out", "build/spec", "output folder")
	flag.Parse()
	if err := run(*lock, *out); err != nil {
		fmt.Fprintln(os.Stderr, "fetchspec:", err)
		os.Exit(1)
	}
}

func run(lockPath, out string) error {
	rels, err := speclock.Read(lockPath)
	if err != nil {
		return err
	}
	jarDir := filepath.Join(filepath.Dir(out), "jars")
	if err := os.MkdirAll(jarDir, 0o755); err != nil {
		return err
	}
	absJar, _ := filepath.Abs(jarDir)
	for _, rel := range rels {
		parts := strings.Split(rel.Coord, ":")
		if len(parts) != 3 {
			return fmt.Errorf("bad coordinate %q", rel.Coord)
		}
		jar := filepath.Join(jarDir, parts[1]+"-"+parts[2]+".jar")
		if _, err := os.Stat(jar); err != nil {
			cmd := exec.Command("mvn", "-q", "-B", "dependency:copy", "-Dartifact="+rel.Coord, "-DoutputDirectory="+absJar, "-Dmdep.overWriteIfNewer=true")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			cmd.Dir = os.TempDir() // no pom.xml needed for dependency:copy
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("maven could not fetch %s: %v", rel.Coord, err)
			}
		}
		sum, err := fileSHA256(jar)
		if err != nil {
			return err
		}
		if sum != rel.SHA256 {
			return fmt.Errorf("%s: sha256 %s does not match the lock (%s)", jar, sum, rel.SHA256)
		}
		n, err := extract(jar, filepath.Join(out, rel.Name))
		if err != nil {
			return err
		}
		fmt.Printf("fetchspec: %s: %d descriptors, jar sha256 verified\n", rel.Name, n)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func extract(jar, dir string) (int, error) {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	if err := os.RemoveAll(dir); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "common/message/") || !strings.HasSuffix(f.Name, ".json") || strings.Contains(f.Name[len("common/message/"):], "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return n, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return n, err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Name)), b, 0o644); err != nil {
			return n, err
		}
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("%s holds no common/message/*.json", jar)
	}
	return n, nil
}
