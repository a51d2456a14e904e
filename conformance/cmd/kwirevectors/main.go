// Command kwirevectors writes vectors that kwire encodes from its own random messages,
// for the reference tool's verify mode (Kafka reads what kwire wrote). For every message
// and version that a release's manifest lists, it fills n messages with
// codectest.Fill from fixed seeds, encodes each and writes one JSON Lines vector
// (source "kwire") with the message's JSON form and bytes.
//
// With -errors it also writes, for every request it wrote, kwire's error response to it
// (codec/rules.ErrorResponse, POLICY_VIOLATION with a message), for the reference tool's
// errors mode, which compares each with the one Kafka's getErrorResponse builds.
//
//	go run ./conformance/cmd/kwirevectors -manifest conformance/vectors/kafka-clients-4.4.0.manifest.json -out build/conformance/kwire-4.4.0.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"

	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/codec/rules"
	"github.com/kwire/kwire/conformance"
)

type line struct {
	conformance.Vector
	// Renames are kwire's declared field renames (it writes the newer names), so the
	// reader can compare a release that uses the older ones.
	Renames []rename `json:"renames,omitempty"`
	// Superseded is set when kwire declares this version of the release superseded: it
	// implements a newer release's definition of a version this release marks unstable.
	Superseded bool `json:"superseded,omitempty"`
}

type rename struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// errorLine is a request and kwire's error response to it.
type errorLine struct {
	ID       string `json:"id"`
	Name     string `json:"name"` // the request's message name
	APIKey   int16  `json:"apiKey"`
	Version  int16  `json:"version"`
	Request  []byte `json:"request"`
	Code     int16  `json:"code"`
	Message  string `json:"message"`
	Response []byte `json:"response"`
	Place    string `json:"place"`
	// Superseded as in line: the request and response are a newer release's definition.
	Superseded bool `json:"superseded,omitempty"`
}

// errorMessage is the message of the error responses: a policy refusal's.
const errorMessage = "refused by the policy of rule 1"

func seed(parts ...any) int64 {
	h := fnv.New64a()
	fmt.Fprint(h, parts...)
	return int64(h.Sum64())
}

func main() {
	manifest := flag.String("manifest", "", "manifest of the release (conformance/vectors/kafka-clients-<release>.manifest.json)")
	out := flag.String("out", "", "output JSON Lines file")
	n := flag.Int("n", 8, "random messages per (message, version)")
	base := flag.Int64("seed", 1, "base seed")
	errorsOut := flag.String("errors", "", "also write kwire's error response to every request to this JSON Lines file")
	flag.Parse()
	if *manifest == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*manifest, *out, *errorsOut, *n, *base); err != nil {
		fmt.Fprintln(os.Stderr, "kwirevectors:", err)
		os.Exit(1)
	}
}

func run(manifestPath, outPath, errorsPath string, n int, base int64) error {
	m, err := conformance.ReadManifest(manifestPath)
	if err != nil {
		return err
	}
	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var ef *os.File
	var ew *bufio.Writer
	if errorsPath != "" {
		if ef, err = os.Create(errorsPath); err != nil {
			return err
		}
		ew = bufio.NewWriterSize(ef, 1<<16)
	}
	count, failed, errCount := 0, 0, 0
	for _, mm := range m.Messages {
		if mm.MinVersion < 0 {
			continue
		}
		for v := mm.MinVersion; v <= mm.MaxVersion; v++ {
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("kwire/%s/%s/v%d/random-%d", m.Release, mm.Name, v, i)
				msg, _ := conformance.Lookup(mm.Name, mm.APIKey, mm.Kind)
				if msg == nil {
					fmt.Fprintf(os.Stderr, "%s: kwire has no such message\n", id)
					failed++
					break
				}
				codectest.Fill(msg, rand.New(rand.NewSource(seed(base, mm.Name, v, i))), v)
				b, err := msg.Encode(nil, v)
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s: kwire cannot encode its own random message: %v\n", id, err)
					failed++
					continue
				}
				if b == nil {
					b = []byte{} // an empty body is "", not null
				}
				js, err := msg.AppendJSON(nil, v)
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s: kwire cannot write JSON: %v\n", id, err)
					failed++
					continue
				}
				ln := line{Vector: conformance.Vector{ID: id, Name: mm.Name, APIKey: mm.APIKey, Kind: mm.Kind, Version: v,
					Source: "kwire", JSON: js, Bytes: b}}
				info := msg.Info()
				for _, r := range info.Renames {
					ln.Renames = append(ln.Renames, rename{r.Path, r.Old, r.New})
				}
				for _, s := range info.Superseded {
					if s.Release == m.Release && s.Version == v {
						ln.Superseded = true
					}
				}
				enc, err := json.Marshal(ln)
				if err != nil {
					return fmt.Errorf("%s: %w", id, err)
				}
				w.Write(enc)
				w.WriteByte('\n')
				count++
				if ew != nil && mm.Kind == "request" {
					resp, place, err := rules.ErrorResponse(mm.APIKey, v, b, rules.PolicyViolation, errorMessage)
					if err != nil {
						// a version with no response (none today): nothing to compare
						fmt.Fprintf(os.Stderr, "%s: no error response: %v\n", id, err)
						continue
					}
					enc, err := json.Marshal(errorLine{ID: id, Name: mm.Name, APIKey: mm.APIKey, Version: v, Request: b,
						Code: rules.PolicyViolation, Message: errorMessage, Response: resp, Place: place.String(),
						Superseded: ln.Superseded})
					if err != nil {
						return fmt.Errorf("%s: %w", id, err)
					}
					ew.Write(enc)
					ew.WriteByte('\n')
					errCount++
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kwirevectors: %d vectors for kafka-clients %s -> %s\n", count, m.Release, outPath)
	if ew != nil {
		if err := ew.Flush(); err != nil {
			return err
		}
		if err := ef.Close(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kwirevectors: %d error responses -> %s\n", errCount, errorsPath)
	}
	if failed > 0 {
		return fmt.Errorf("%d messages could not be written", failed)
	}
	return nil
}
