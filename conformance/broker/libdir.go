package broker

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

const modulePath = "github.com/kwire/kwire"

// pomPath is the Maven project that fetches the broker's jars, relative to the root.
const pomPath = "conformance/broker/pom.xml"

// completeMarker is written into build/kafka/<version> once every jar is in lib.
const completeMarker = ".complete"

var libMu sync.Mutex

// LibDir returns the directory holding the jars of Kafka release version
// (build/kafka/<version>/lib of the repository), fetching them with Maven on first use.
// Concurrent fetches, in this process or others, are serialized with a lock file. The
// repository is found from the working directory upwards, or from KWIRE_ROOT.
func LibDir(version string) (string, error) {
	if version == "" {
		version = DefaultVersion
	}
	if strings.ContainsAny(version, "/\\ ") || version == "." || version == ".." {
		return "", fmt.Errorf("broker: invalid Kafka version %q", version)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	base := filepath.Join(root, "build", "kafka", version)
	lib := filepath.Join(base, "lib")
	marker := filepath.Join(base, completeMarker)
	if _, err := os.Stat(marker); err == nil {
		return lib, nil
	}
	libMu.Lock()
	defer libMu.Unlock()
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(root, "build", "kafka", version+".lock"))
	if err != nil {
		return "", fmt.Errorf("broker: locking the jar fetch: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(marker); err == nil {
		return lib, nil // another process fetched them while we waited
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", &UnavailableError{Reason: "the Kafka " + version + " jars are not in " + lib + " and mvn (Maven) is not on PATH to fetch them"}
	}
	if _, err := javaPath(); err != nil {
		return "", err
	}
	cmd := exec.Command(mvn, "-B", "-q", "-Dstyle.color=never", "-f", filepath.Join(root, pomPath), "-Dkafka.version="+version, "generate-resources")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &UnavailableError{Reason: fmt.Sprintf("mvn could not fetch kafka_2.13 %s: %v\n%s", version, err, tail(out, 4096))}
	}
	jars, _ := filepath.Glob(filepath.Join(lib, "*.jar"))
	if len(jars) == 0 {
		return "", fmt.Errorf("broker: mvn succeeded but %s holds no jars", lib)
	}
	list := make([]string, len(jars))
	for i, j := range jars {
		list[i] = filepath.Base(j)
	}
	if err := os.WriteFile(marker, []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	return lib, nil
}

// RepoRoot returns the root of the kwire repository: KWIRE_ROOT when set, else the first
// directory from the working directory upwards whose go.mod declares module
// github.com/kwire/kwire (nested modules such as conn/bench are passed over).
func RepoRoot() (string, error) {
	if r := os.Getenv("KWIRE_ROOT"); r != "" {
		return filepath.Abs(r)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("broker: no go.mod of module " + modulePath + " above the working directory (set KWIRE_ROOT)")
		}
		dir = parent
	}
}

func isRoot(gomod string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "module" {
			return f[1] == modulePath
		}
	}
	return false
}
