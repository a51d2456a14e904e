package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/transcode"
)

// apiEntry is one line of `kwire apis --json`.
type apiEntry struct {
	APIKey           int16    `json:"apiKey"`
	Name             string   `json:"name"`
	MinVersion       int16    `json:"minVersion"`
	MaxVersion       int16    `json:"maxVersion"`
	FlexibleVersions string   `json:"flexibleVersions"`
	Deprecated       string   `json:"deprecatedVersions,omitempty"`
	Listeners        []string `json:"listeners,omitempty"`
	Releases         []string `json:"releases"`
}

func versionRange(lo, hi int16) string {
	switch {
	case lo < 0:
		return "none"
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func cmdAPIs(args []string, stdout io.Writer) error {
	fs := newFlags("apis", io.Discard)
	asJSON := fs.Bool("json", false, "one JSON object per api key instead of a table")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return &usageError{"apis takes no arguments"}
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if !*asJSON {
		fmt.Fprintf(w, "kafka-clients releases: %s\n", strings.Join(transcode.SpecReleases(), ", "))
		fmt.Fprintf(w, "%4s  %-42s %-9s %-9s %s\n", "key", "name", "versions", "flexible", "deprecated")
	}
	for _, a := range codec.APIs() {
		req := a.Request
		flex := "none"
		if req.FlexibleMin >= 0 {
			flex = fmt.Sprintf("%d+", req.FlexibleMin)
		}
		dep := ""
		if req.DeprecatedMin >= 0 {
			dep = versionRange(req.DeprecatedMin, req.DeprecatedMax)
		}
		if *asJSON {
			b, _ := json.Marshal(apiEntry{APIKey: a.Key, Name: a.Name, MinVersion: req.MinVersion, MaxVersion: req.MaxVersion,
				FlexibleVersions: flex, Deprecated: dep, Listeners: req.Listeners, Releases: req.Releases})
			w.Write(b)
			w.WriteByte('\n')
			continue
		}
		fmt.Fprintf(w, "%4d  %-42s %-9s %-9s %s\n", a.Key, a.Name, versionRange(req.MinVersion, req.MaxVersion), flex, dep)
	}
	return nil
}
