// Package abiconf runs the conformance vectors (conformance/vectors) through an
// implementation of kwire's flat ABI: the abi package itself, the wasm module under a
// runtime (wazero, wasmtime), or anything else that implements Host. It adapts the host
// to conformance's one runner (conformance.Target), which makes the three comparisons
// and prints the coverage table, so every byte goes through the ABI:
//
//   - decode: kw_decode_message(bytes) -> JSON, compared semantically with the vector's
//     json (renamed fields and superseded versions handled as the native runner does,
//     from the ABI's own catalogue);
//   - encode: kw_encode_message(json) -> bytes, compared with the vector's bytes;
//   - round trip: kw_encode_message(kw_decode_message(bytes)) -> bytes, compared with
//     the vector's bytes: what a host sees is JSON, so this also proves the JSON form
//     lossless.
package abiconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance"
)

// Host is an implementation of the ABI under test. Errors of kw_ calls are *CallError.
type Host interface {
	DecodeMessage(name string, version int16, in []byte) ([]byte, error)
	EncodeMessage(name string, version int16, json []byte) ([]byte, error)
	Catalogue() ([]byte, error)
}

// CallError is a kw_ call that returned a negative status, with kw_last_error_json.
type CallError struct {
	Status int32
	Text   string
	JSON   []byte
}

func (e *CallError) Error() string { return fmt.Sprintf("status %d: %s", e.Status, e.Text) }

// Where returns the path and offset of the error JSON ("" and -1 when absent).
func (e *CallError) Where() (path string, offset int) {
	var d struct {
		Path   string `json:"path"`
		Offset *int   `json:"offset"`
	}
	offset = -1
	if json.Unmarshal(e.JSON, &d) == nil {
		path = d.Path
		if d.Offset != nil {
			offset = *d.Offset
		}
	}
	return path, offset
}

// Catalogue is the parsed kw_api_catalogue.
type Catalogue struct {
	ABIVersion   string   `json:"abiVersion"`
	SpecReleases []string `json:"specReleases"`
	APIs         []struct {
		APIKey   int16  `json:"apiKey"`
		Name     string `json:"name"`
		Request  string `json:"request"`
		Response string `json:"response"`
	} `json:"apis"`
	Messages []CatalogueMessage `json:"messages"`
	byName   map[string]*CatalogueMessage
}

// CatalogueMessage is one message of the catalogue.
type CatalogueMessage struct {
	Name       string `json:"name"`
	APIKey     int16  `json:"apiKey"`
	Kind       string `json:"kind"`
	MinVersion int16  `json:"minVersion"`
	MaxVersion int16  `json:"maxVersion"`
	Renames    []struct {
		Path string `json:"path"`
		Old  string `json:"old"`
		New  string `json:"new"`
	} `json:"renames"`
	Superseded []struct {
		Release string `json:"release"`
		Version int16  `json:"version"`
	} `json:"superseded"`
}

// LoadCatalogue reads the catalogue through the host.
func LoadCatalogue(h Host) (*Catalogue, error) {
	b, err := h.Catalogue()
	if err != nil {
		return nil, fmt.Errorf("kw_api_catalogue: %w", err)
	}
	var c Catalogue
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("kw_api_catalogue returned bad JSON: %w", err)
	}
	c.byName = map[string]*CatalogueMessage{}
	for i := range c.Messages {
		c.byName[c.Messages[i].Name] = &c.Messages[i]
	}
	return &c, nil
}

// Lookup resolves a vector's message as the native runner does: by name, else (a
// request or response Kafka renamed) by api key and kind.
func (c *Catalogue) Lookup(name string, apiKey int16, kind string) (m *CatalogueMessage, alias bool) {
	if m := c.byName[name]; m != nil {
		return m, false
	}
	for _, a := range c.APIs {
		if a.APIKey != apiKey {
			continue
		}
		switch kind {
		case "request":
			return c.byName[a.Request], true
		case "response":
			return c.byName[a.Response], true
		}
	}
	return nil, false
}

// Target is the host as a conformance.Target, resolving messages through the ABI's
// own catalogue: conformance's runner makes the comparisons and keeps the report.
func Target(h Host, cat *Catalogue) conformance.Target {
	return &target{h: h, cat: cat, msgs: map[*CatalogueMessage]*conformance.Message{}}
}

type target struct {
	h    Host
	cat  *Catalogue
	msgs map[*CatalogueMessage]*conformance.Message
}

func (*target) Name() string { return "the ABI" }

func (t *target) Message(name string, apiKey int16, kind string) (*conformance.Message, bool) {
	cm, alias := t.cat.Lookup(name, apiKey, kind)
	if cm == nil {
		return nil, false
	}
	m := t.msgs[cm]
	if m == nil {
		m = &conformance.Message{Name: cm.Name, Kind: cm.Kind, APIKey: cm.APIKey}
		for _, r := range cm.Renames {
			m.Renames = append(m.Renames, codec.FieldRename{Path: r.Path, Old: r.Old, New: r.New})
		}
		for _, s := range cm.Superseded {
			m.Superseded = append(m.Superseded, codec.SupersededVersion{Release: s.Release, Version: s.Version})
		}
		t.msgs[cm] = m
	}
	return m, alias
}

func (t *target) Decode(m *conformance.Message, version int16, b []byte) ([]byte, error) {
	out, err := t.h.DecodeMessage(m.Name, version, b)
	if err != nil {
		return nil, fmt.Errorf("kw_decode_message failed: %w", err)
	}
	return out, nil
}

func (t *target) Encode(m *conformance.Message, version int16, js []byte) ([]byte, error) {
	out, err := t.h.EncodeMessage(m.Name, version, js)
	if err != nil {
		return nil, fmt.Errorf("kw_encode_message failed: %w", err)
	}
	return out, nil
}

// RoundTrip encodes the ABI's own JSON: what a host sees is JSON, so this also proves
// the JSON form lossless.
func (t *target) RoundTrip(m *conformance.Message, version int16, _, js []byte) ([]byte, error) {
	out, err := t.h.EncodeMessage(m.Name, version, js)
	if err != nil {
		return nil, fmt.Errorf("kw_encode_message of the ABI's own JSON failed: %w", err)
	}
	return out, nil
}

func (*target) Where(err error) (string, int) {
	var ce *CallError
	if !errors.As(err, &ce) {
		return "", -1
	}
	path, off := ce.Where()
	if path != "" && !strings.HasPrefix(path, "$") {
		path = "$." + path
	}
	return path, off
}

// Run checks every vector of every release through the host; hostName names the run
// in the coverage tables.
func Run(hostName string, h Host, rels []conformance.Release) ([]*conformance.Report, error) {
	cat, err := LoadCatalogue(h)
	if err != nil {
		return nil, err
	}
	return conformance.Run(Target(h, cat), hostName, rels), nil
}
