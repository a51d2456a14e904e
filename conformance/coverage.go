package conformance

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report accumulates the results of one release's vectors run through one Target.
type Report struct {
	Target   Target
	Host     string // names the run in the table; "" for the typed codec in process
	Release  string
	Manifest *Manifest
	Vectors  int
	Failures []Failure
	// Excused are vectors that failed at a version kwire declares superseded for this
	// release (codec.MessageInfo.Superseded) and that the release itself marks unstable:
	// kwire implements the newer release's definition of that version. Not failures, but
	// listed.
	Excused []Failure
	// Renamed counts vectors whose json used a field name kwire declares renamed.
	Renamed int
	// failing vector ids per check
	failed  map[Check]map[string]bool
	perMsg  map[string]*msgStats // by "kind name"
	aliases map[string]string    // vector name -> kwire name, when looked up by api key
	idKind  map[string]string
	byName  map[string]ManifestMessage
	excused map[string]map[int16]int // message -> version -> vectors
}

type msgStats struct {
	name     string
	kind     string
	apiKey   int16
	versions map[int16]int // version -> vectors
	failed   map[string]bool
}

// NewReport starts a report for a release run through kwire's typed codec.
func NewReport(release string, m *Manifest) *Report { return NewTargetReport(Native, "", release, m) }

// NewTargetReport starts a report for a release run through t; host names the run.
func NewTargetReport(t Target, host, release string, m *Manifest) *Report {
	r := &Report{Target: t, Host: host, Release: release, Manifest: m, failed: map[Check]map[string]bool{},
		perMsg: map[string]*msgStats{}, aliases: map[string]string{}, idKind: map[string]string{},
		byName: map[string]ManifestMessage{}, excused: map[string]map[int16]int{}}
	for _, mm := range m.Messages {
		r.byName[mm.Kind+" "+mm.Name] = mm
	}
	return r
}

// Add checks one vector and records the outcome.
func (r *Report) Add(v Vector) []Failure {
	r.Vectors++
	r.idKind[v.ID] = v.Kind
	key := v.Kind + " " + v.Name
	s := r.perMsg[key]
	if s == nil {
		s = &msgStats{name: v.Name, kind: v.Kind, apiKey: v.APIKey, versions: map[int16]int{}, failed: map[string]bool{}}
		r.perMsg[key] = s
	}
	s.versions[v.Version]++
	m, alias := r.Target.Message(v.Name, v.APIKey, v.Kind)
	if alias && m != nil {
		r.aliases[v.Name] = m.Name
	}
	if m != nil && RenamedKeys(v, m.Renames) {
		r.Renamed++
	}
	fs := CheckVectorOn(r.Target, v)
	if len(fs) > 0 && m != nil && r.superseded(m, v) {
		r.Excused = append(r.Excused, fs...)
		if r.excused[v.Name] == nil {
			r.excused[v.Name] = map[int16]int{}
		}
		r.excused[v.Name][v.Version]++
		return nil
	}
	for _, f := range fs {
		if r.failed[f.Check] == nil {
			r.failed[f.Check] = map[string]bool{}
		}
		r.failed[f.Check][f.ID] = true
		s.failed[f.ID] = true
	}
	r.Failures = append(r.Failures, fs...)
	return fs
}

// superseded reports whether the target declares the vector's version superseded for
// this release and the release's own manifest marks that version unstable.
func (r *Report) superseded(m *Message, v Vector) bool {
	declared := false
	for _, s := range m.Superseded {
		if s.Release == r.Release && s.Version == v.Version {
			declared = true
		}
	}
	mm, ok := r.byName[v.Kind+" "+v.Name]
	return declared && ok && mm.UnstableVersion == v.Version
}

// FailedVectors is the number of vectors with at least one failed comparison.
func (r *Report) FailedVectors() int {
	ids := map[string]bool{}
	for _, f := range r.Failures {
		ids[f.ID] = true
	}
	return len(ids)
}

// Missing lists what the manifest says the release knows but no vector covers: every
// valid version of every message must have at least minPerVersion vectors.
func (r *Report) Missing(minPerVersion int) []string {
	var out []string
	for _, m := range r.Manifest.Messages {
		if m.MinVersion < 0 {
			continue
		}
		s := r.perMsg[m.Kind+" "+m.Name]
		for v := m.MinVersion; v <= m.MaxVersion; v++ {
			n := 0
			if s != nil {
				n = s.versions[v]
			}
			if n < minPerVersion {
				out = append(out, fmt.Sprintf("%s %s v%d: %d vectors, want >= %d", m.Kind, m.Name, v, n, minPerVersion))
			}
		}
	}
	known := map[string]bool{}
	for _, m := range r.Manifest.Messages {
		known[m.Kind+" "+m.Name] = true
	}
	for k := range r.perMsg {
		if !known[k] {
			out = append(out, "vectors for "+k+", which the manifest does not list")
		}
	}
	sort.Strings(out)
	return out
}

type kindTotals struct {
	messages, apiKeys, removed, triples, vectors, failVectors int
	perCheck                                                  map[Check]int
}

// Table is the coverage table: one row per kind and a total, with api keys,
// (message, version, kind) triples, vectors and failures per comparison.
func (r *Report) Table() string {
	kinds := []string{"request", "response", "header", "data"}
	totals := map[string]*kindTotals{}
	all := &kindTotals{perCheck: map[Check]int{}}
	keys := map[string]map[int16]bool{}
	allKeys := map[int16]bool{}
	for _, k := range kinds {
		totals[k] = &kindTotals{perCheck: map[Check]int{}}
		keys[k] = map[int16]bool{}
	}
	for _, m := range r.Manifest.Messages {
		t := totals[m.Kind]
		if t == nil {
			continue
		}
		if m.MinVersion < 0 {
			t.removed++
			continue
		}
		t.messages++
		if m.APIKey >= 0 {
			keys[m.Kind][m.APIKey] = true
			allKeys[m.APIKey] = true
		}
	}
	for _, s := range r.perMsg {
		t := totals[s.kind]
		if t == nil {
			continue
		}
		t.triples += len(s.versions)
		for _, n := range s.versions {
			t.vectors += n
		}
		t.failVectors += len(s.failed)
	}
	for c, ids := range r.failed {
		for id := range ids {
			if t := totals[r.idKind[id]]; t != nil {
				t.perCheck[c]++
			}
		}
	}
	var b strings.Builder
	if r.Host == "" {
		fmt.Fprintf(&b, "kafka-clients %s vs kwire\n", r.Release)
	} else {
		fmt.Fprintf(&b, "kafka-clients %s vs kwire through the ABI (%s)\n", r.Release, r.Host)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "kind\tmessages\tapi keys\t(api,version,kind)\tvectors\tdecode fail\tencode fail\tround-trip fail\t\n")
	for _, k := range kinds {
		t := totals[k]
		ak := "-"
		if k == "request" || k == "response" {
			ak = fmt.Sprint(len(keys[k]))
			if t.removed > 0 {
				ak += fmt.Sprintf(" (+%d removed)", t.removed)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t\n", k, t.messages, ak, t.triples, t.vectors,
			t.perCheck[CheckDecode], t.perCheck[CheckEncode], t.perCheck[CheckRoundTrip])
		all.messages += t.messages
		all.triples += t.triples
		all.vectors += t.vectors
		for _, c := range Checks {
			all.perCheck[c] += t.perCheck[c]
		}
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", all.messages, len(allKeys), all.triples, all.vectors,
		all.perCheck[CheckDecode], all.perCheck[CheckEncode], all.perCheck[CheckRoundTrip])
	tw.Flush()
	if r.Renamed > 0 {
		fmt.Fprintf(&b, "note: %d vectors use field names that a newer release renamed; compared under kwire's declared renames\n", r.Renamed)
	}
	for _, n := range slices.Sorted(maps.Keys(r.excused)) {
		for v, c := range r.excused[n] {
			fmt.Fprintf(&b, "excused: %s v%d: %d vectors differ; Kafka %s marks v%d unstable and kwire implements the newer definition (MessageInfo.Superseded)\n",
				n, v, c, r.Release, v)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(r.aliases)) {
		fmt.Fprintf(&b, "note: kwire has no message named %s; its vectors ran against %s (same api key)\n", n, r.aliases[n])
	}
	return b.String()
}

// FailureText lists up to max failures, one per line.
func (r *Report) FailureText(max int) string {
	var b strings.Builder
	for i, f := range r.Failures {
		if i == max {
			fmt.Fprintf(&b, "... and %d more\n", len(r.Failures)-max)
			break
		}
		b.WriteString(f.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// Detail is one line per message: versions covered, vectors, failing vectors.
func (r *Report) Detail() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "api\tkind\tmessage\tversions\tvectors\tfailing vectors\n")
	for _, m := range r.Manifest.Messages {
		s := r.perMsg[m.Kind+" "+m.Name]
		api := "-"
		if m.APIKey >= 0 {
			api = fmt.Sprint(m.APIKey)
		}
		if m.MinVersion < 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\tnone (removed)\t0\t0\n", api, m.Kind, m.Name)
			continue
		}
		n, covered, failing := 0, 0, 0
		if s != nil {
			for v := m.MinVersion; v <= m.MaxVersion; v++ {
				if s.versions[v] > 0 {
					covered++
				}
			}
			for _, c := range s.versions {
				n += c
			}
			failing = len(s.failed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\tv%d-%d (%d/%d)\t%d\t%d\n", api, m.Kind, m.Name, m.MinVersion, m.MaxVersion,
			covered, m.MaxVersion-m.MinVersion+1, n, failing)
	}
	tw.Flush()
	return b.String()
}

// FailureSummary groups the failing vectors by message and version, one line each.
func (r *Report) FailureSummary() string {
	type key struct {
		name    string
		kind    string
		version string
	}
	groups := map[key]map[string]bool{}
	checks := map[key]map[Check]bool{}
	var order []key
	for _, f := range r.Failures {
		parts := strings.Split(f.ID, "/")
		k := key{version: "?"}
		if len(parts) >= 3 {
			k.name, k.version = parts[len(parts)-3], parts[len(parts)-2]
		}
		k.kind = r.idKind[f.ID]
		if groups[k] == nil {
			groups[k] = map[string]bool{}
			checks[k] = map[Check]bool{}
			order = append(order, k)
		}
		groups[k][f.ID] = true
		checks[k][f.Check] = true
	}
	var b strings.Builder
	for _, k := range order {
		var cs []string
		for _, c := range Checks {
			if checks[k][c] {
				cs = append(cs, string(c))
			}
		}
		total := 0
		if s := r.perMsg[k.kind+" "+k.name]; s != nil {
			v, _ := strconv.Atoi(strings.TrimPrefix(k.version, "v"))
			total = s.versions[int16(v)]
		}
		fmt.Fprintf(&b, "%s %s %s: %d of %d vectors fail (%s)\n", r.Release, k.name, k.version, len(groups[k]), total,
			strings.Join(cs, ", "))
	}
	return b.String()
}
