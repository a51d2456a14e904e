// Package speclock reads codec/spec.lock: the Kafka releases whose message descriptors
// the generator uses, with the Maven coordinate and sha256 of each kafka-clients jar.
package speclock

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Release is one line of the lock file.
type Release struct {
	Name   string // "4.4.0"
	Coord  string // "org.apache.kafka:kafka-clients:4.4.0"
	SHA256 string // of the jar, hex
}

// Read parses the lock file at path: one release per line, "#" comments, blank lines.
func Read(path string) ([]Release, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs []Release
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Fields(line)
		if len(p) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		rs = append(rs, Release{p[0], p[1], p[2]})
	}
	return rs, sc.Err()
}
