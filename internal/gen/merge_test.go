package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func parseRaw(t *testing.T, s string) *rawMessage {
	t.Helper()
	var m rawMessage
	dec := json.NewDecoder(strings.NewReader(string(stripComments([]byte(s)))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func build(t *testing.T, rel, s string) *Message {
	t.Helper()
	m, err := buildMessage(rel, parseRaw(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fieldNames(s *Struct) string {
	var n []string
	for _, f := range s.Fields {
		n = append(n, f.Name+"@"+f.Versions.String())
	}
	return strings.Join(n, " ")
}

func TestMergeRestoresDroppedFieldsInPlace(t *testing.T) {
	old := build(t, "3.9", `{"apiKey": 99, "type": "request", "name": "XRequest", "validVersions": "0-5", "flexibleVersions": "4+",
	  // comments are allowed
	  "fields": [
	    {"name": "A", "type": "int32", "versions": "0+"},
	    {"name": "Gone", "type": "string", "versions": "0-1", "about": "x // not a comment"},
	    {"name": "B", "type": "int8", "versions": "2+"}]}`)
	nw := build(t, "4.4", `{"apiKey": 99, "type": "request", "name": "XRequest", "validVersions": "2-7", "flexibleVersions": "4+",
	  "fields": [
	    {"name": "A", "type": "int32", "versions": "0+"},
	    {"name": "B", "type": "int8", "versions": "2+"},
	    {"name": "C", "type": "int64", "versions": "6+"}]}`)
	m, err := mergeMessages(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	if m.Valid != (vrange{0, 7}) || m.Flexible != (vrange{4, 7}) {
		t.Fatalf("valid %s flexible %s", m.Valid, m.Flexible)
	}
	if got := fieldNames(m.Root); got != "A@0-7 Gone@0-1 B@2-7 C@6-7" {
		t.Fatalf("fields %s", got)
	}
}

func TestMergePairsRenames(t *testing.T) {
	old := build(t, "3.9", `{"apiKey": 98, "type": "request", "name": "YRequest", "validVersions": "0-3", "flexibleVersions": "none",
	  "fields": [{"name": "Old", "type": "int32", "versions": "1+"}, {"name": "Z", "type": "bool", "versions": "0+"}]}`)
	nw := build(t, "4.4", `{"apiKey": 98, "type": "request", "name": "YRequest", "validVersions": "0-4", "flexibleVersions": "none",
	  "fields": [{"name": "New", "type": "int32", "versions": "1+"}, {"name": "Z", "type": "bool", "versions": "0+"}]}`)
	m, err := mergeMessages(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldNames(m.Root); got != "New@1-4 Z@0-4" {
		t.Fatalf("fields %s", got)
	}
	collectRenames(m, m.Root, "", map[*Struct]bool{})
	if len(m.Renames) != 1 || m.Renames[0] != (Rename{Path: "", Old: "old", New: "new"}) {
		t.Fatalf("renames %+v", m.Renames)
	}
	// A field that vanishes at shared versions with no partner is an error, not a guess.
	nw2 := build(t, "4.4", `{"apiKey": 98, "type": "request", "name": "YRequest", "validVersions": "0-4", "flexibleVersions": "none",
	  "fields": [{"name": "Z", "type": "bool", "versions": "0+"}]}`)
	if _, err := mergeMessages(old, nw2); err == nil {
		t.Fatal("merge accepted a silently dropped field")
	}
}

func TestMergeSupersedesUnstable(t *testing.T) {
	old := build(t, "3.9", `{"apiKey": 97, "type": "request", "name": "ZRequest", "validVersions": "0", "flexibleVersions": "0+", "latestVersionUnstable": true, "fields": []}`)
	old.unstableLatest = true
	nw := build(t, "4.4", `{"apiKey": 97, "type": "request", "name": "ZRequest", "validVersions": "0-1", "flexibleVersions": "0+", "fields": []}`)
	m, err := mergeMessages(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Superseded) != 1 || m.Superseded[0] != (Superseded{"3.9", 0}) {
		t.Fatalf("superseded %+v", m.Superseded)
	}
}

func TestRanges(t *testing.T) {
	for in, want := range map[string]string{"0+": "0+", "3-5": "3-5", "2": "2", "none": "none", "": "none"} {
		r, err := parseRange(in)
		if err != nil || r.String() != want {
			t.Errorf("parseRange(%q) = %s, %v", in, r, err)
		}
	}
	if _, err := union(vrange{0, 1}, vrange{3, 4}); err == nil {
		t.Error("union of disjoint ranges accepted")
	}
	if c := simplify(and(ge(3), le(7)), setOf(vrange{0, 7})).String(); c != "v >= 3" {
		t.Errorf("simplify = %s", c)
	}
}
