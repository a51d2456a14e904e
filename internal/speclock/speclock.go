// Package speclock reads codec/spec.lock: the Kafka releases whose message descriptors
// the generator uses, with the Maven coordinate and sha256 of each kafka-clients jar.
package speclock

import (
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
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []Release
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Fields(line)
		if len(p) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		rs = append(rs, Release{p[0], p[1], p[2]})
	}
	return rs, nil
}
