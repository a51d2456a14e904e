package kerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/speclock"
)

const (
	specLock = "../spec.lock"
	dumpDir  = "../../conformance/vectors/errors"
)

// dumpEntry is one error of a dump written by conformance/reference/errors.
type dumpEntry struct {
	Code      int16  `json:"code"`
	Name      string `json:"name"`
	Retriable bool   `json:"retriable"`
}

type dump struct {
	Source string      `json:"source"`
	Errors []dumpEntry `json:"errors"`
}

// pinnedReleases returns the Kafka releases listed in codec/spec.lock, in file order.
func pinnedReleases(t *testing.T) []string {
	t.Helper()
	rels, err := speclock.Read(specLock)
	if err != nil {
		t.Fatalf("read spec lock: %v", err)
	}
	var releases []string
	for _, r := range rels {
		releases = append(releases, r.Name)
	}
	if len(releases) == 0 {
		t.Fatalf("%s lists no release", specLock)
	}
	return releases
}

// compareReleases orders release strings such as "3.9.2" and "4.4.0" numerically.
func compareReleases(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return strings.Compare(a, b)
}

// loadDump reads and checks the committed dump of one release.
func loadDump(t *testing.T, release string) dump {
	t.Helper()
	path := filepath.Join(dumpDir, "kafka-clients-"+release+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read dump (rebuild it with `make errors-dump`): %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d dump
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if want := "kafka-clients " + release; d.Source != want {
		t.Fatalf("%s: source is %q, want %q", path, d.Source, want)
	}
	if len(d.Errors) == 0 {
		t.Fatalf("%s: no errors", path)
	}
	for i, e := range d.Errors {
		if e.Name == "" {
			t.Fatalf("%s: code %d has no name", path, e.Code)
		}
		if i > 0 && e.Code <= d.Errors[i-1].Code {
			t.Fatalf("%s: code %d follows %d: not in strictly ascending order", path, e.Code, d.Errors[i-1].Code)
		}
	}
	return d
}

// kafkaTable merges the dumps of every pinned release: for each code, the entry of the
// newest release that defines it. It also returns the codes the newest release defines.
func kafkaTable(t *testing.T) (merged map[Code]dumpEntry, newest map[Code]bool) {
	t.Helper()
	releases := slices.Clone(pinnedReleases(t))
	slices.SortFunc(releases, compareReleases)
	merged = map[Code]dumpEntry{}
	for _, r := range releases {
		newest = map[Code]bool{}
		for _, e := range loadDump(t, r).Errors {
			merged[Code(e.Code)] = e
			newest[Code(e.Code)] = true
		}
	}
	return merged, newest
}

// TestMatchesKafka checks the Go table against Kafka's own Errors enum, as dumped for
// every release pinned in codec/spec.lock.
func TestMatchesKafka(t *testing.T) {
	kafka, _ := kafkaTable(t)
	for code, k := range kafka {
		if !code.Known() {
			t.Errorf("code %d (%s) is missing from the Go table", code, k.Name)
			continue
		}
		if got := code.String(); got != k.Name {
			t.Errorf("code %d: String() = %q, Kafka says %q", code, got, k.Name)
		}
		if got := code.Retriable(); got != k.Retriable {
			t.Errorf("code %d (%s): Retriable() = %v, Kafka says %v", code, k.Name, got, k.Retriable)
		}
	}
	for _, c := range All() {
		if _, ok := kafka[c]; !ok {
			t.Errorf("code %d (%s) is in the Go table but in no Kafka dump", c, c)
		}
	}
	if len(All()) != len(kafka) {
		t.Errorf("Go table has %d codes, the dumps %d", len(All()), len(kafka))
	}
}

// goName is the Go constant name for a Kafka enum name.
func goName(kafkaName string) string {
	var b strings.Builder
	for _, w := range strings.Split(kafkaName, "_") {
		if w == "ID" {
			b.WriteString(w)
			continue
		}
		b.WriteString(w[:1])
		b.WriteString(strings.ToLower(w[1:]))
	}
	return b.String()
}

// constValue evaluates the integer literal (optionally negated) a constant is set to.
func constValue(e ast.Expr) (int64, error) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = true, u.X
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, fmt.Errorf("not an integer literal")
	}
	v, err := strconv.ParseInt(lit.Value, 0, 64)
	if neg {
		v = -v
	}
	return v, err
}

// TestConstantsAndDocs parses codes.go and checks that each exported constant is named
// after its Kafka name, holds the code of that name, and carries a doc comment that
// agrees with the table; codes Kafka's newest pinned release no longer has must say so.
func TestConstantsAndDocs(t *testing.T) {
	_, newest := kafkaTable(t)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "codes.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Code]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Names) != 1 || len(vs.Values) != 1 {
				t.Fatalf("%s: want one name and one value per constant", fset.Position(vs.Pos()))
			}
			name := vs.Names[0].Name
			v, err := constValue(vs.Values[0])
			if err != nil {
				t.Fatalf("%s: %s: %v", fset.Position(vs.Pos()), name, err)
			}
			c := Code(v)
			if int64(c) != v {
				t.Fatalf("%s: %d does not fit in int16", name, v)
			}
			if prev, dup := seen[c]; dup {
				t.Errorf("%s and %s both have code %d", prev, name, c)
			}
			seen[c] = name
			if !c.Known() {
				t.Errorf("%s = %d is not in the table", name, c)
				continue
			}
			if want := goName(c.String()); name != want {
				t.Errorf("constant for %s (%d) is %s, want %s", c, c, name, want)
			}
			retriable := ""
			if c.Retriable() {
				retriable = ", retriable"
			}
			wantDoc := fmt.Sprintf("%s is Kafka's %s (code %d%s): %s.", name, c, c, retriable, c.Message())
			doc := strings.Join(strings.Fields(vs.Doc.Text()), " ")
			if !strings.HasPrefix(doc, wantDoc) {
				t.Errorf("%s: doc comment is\n\t%q\nwant it to start with\n\t%q", name, doc, wantDoc)
			}
			if removed := !newest[c]; removed != strings.Contains(doc, "Removed in") {
				t.Errorf("%s: dropped by Kafka's newest pinned release = %v, but its doc says otherwise: %q", name, removed, doc)
			}
		}
	}
	for _, c := range All() {
		if _, ok := seen[c]; !ok {
			t.Errorf("code %d (%s) has no exported constant in codes.go", c, c)
		}
	}
}

func TestTableOrder(t *testing.T) {
	for i, e := range table {
		if want := minCode + Code(i); e.code != want {
			t.Fatalf("table[%d] holds code %d, want %d: the table must list codes in order without gaps", i, e.code, want)
		}
		if e.message == "" || strings.HasSuffix(e.message, ".") {
			t.Errorf("code %d: message %q must be non-empty and not end with a period", e.code, e.message)
		}
	}
}

func TestCodeMethods(t *testing.T) {
	tests := []struct {
		code      Code
		known     bool
		name      string
		retriable bool
		message   string
	}{
		{UnknownServerError, true, "UNKNOWN_SERVER_ERROR", false, "the broker hit an unexpected error while handling the request"},
		{None, true, "NONE", false, "no error"},
		{OffsetOutOfRange, true, "OFFSET_OUT_OF_RANGE", false, "the offset lies outside the partition's log"},
		{UnknownTopicOrPartition, true, "UNKNOWN_TOPIC_OR_PARTITION", true, "this broker does not host the topic or partition"},
		{NotLeaderOrFollower, true, "NOT_LEADER_OR_FOLLOWER", true, "this broker is not the partition's leader, or not a replica of it"},
		{InvalidTopicException, true, "INVALID_TOPIC_EXCEPTION", false, "the topic name is invalid, or the topic cannot be used this way"},
		{UnknownMemberID, true, "UNKNOWN_MEMBER_ID", false, "the coordinator does not know this member id"},
		{KafkaStorageError, true, "KAFKA_STORAGE_ERROR", true, "the broker could not access a log directory"},
		{ControllerIDNotRegistered, true, "CONTROLLER_ID_NOT_REGISTERED", false, "the controller id is not registered"},
		{Code(12345), false, "UNKNOWN_CODE(12345)", false, "unknown error code"},
		{Code(-2), false, "UNKNOWN_CODE(-2)", false, "unknown error code"},
		{ControllerIDNotRegistered + 1, false, "UNKNOWN_CODE(137)", false, "unknown error code"},
		{Code(-32768), false, "UNKNOWN_CODE(-32768)", false, "unknown error code"},
		{Code(32767), false, "UNKNOWN_CODE(32767)", false, "unknown error code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.code.Known(); got != tt.known {
				t.Errorf("Known() = %v, want %v", got, tt.known)
			}
			if got := tt.code.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
			if got := fmt.Sprint(tt.code); got != tt.name {
				t.Errorf("fmt.Sprint = %q, want %q", got, tt.name)
			}
			if got := tt.code.Retriable(); got != tt.retriable {
				t.Errorf("Retriable() = %v, want %v", got, tt.retriable)
			}
			if got := tt.code.Message(); got != tt.message {
				t.Errorf("Message() = %q, want %q", got, tt.message)
			}
		})
	}
}

func TestErr(t *testing.T) {
	if err := None.Err(); err != nil {
		t.Fatalf("None.Err() = %v, want nil", err)
	}
	tests := []struct {
		code Code
		text string
	}{
		{UnknownTopicOrPartition, "kafka error UNKNOWN_TOPIC_OR_PARTITION (3): this broker does not host the topic or partition"},
		{UnknownServerError, "kafka error UNKNOWN_SERVER_ERROR (-1): the broker hit an unexpected error while handling the request"},
		{Code(12345), "kafka error UNKNOWN_CODE(12345) (12345): unknown error code"},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			err := tt.code.Err()
			if err == nil {
				t.Fatal("Err() = nil")
			}
			if got := err.Error(); got != tt.text {
				t.Errorf("Error() = %q, want %q", got, tt.text)
			}
			wrapped := fmt.Errorf("produce to topic %q partition %d: %w", "t", 0, err)
			if !errors.Is(wrapped, tt.code.Err()) {
				t.Errorf("errors.Is(wrapped, %s.Err()) = false", tt.code)
			}
			if !errors.Is(wrapped, &Error{code: tt.code}) {
				t.Errorf("errors.Is(wrapped, fresh *Error of the same code) = false")
			}
			for _, other := range []Code{OffsetOutOfRange, NotCoordinator, Code(12346)} {
				if errors.Is(wrapped, other.Err()) {
					t.Errorf("errors.Is(%s, %s.Err()) = true", tt.code, other)
				}
			}
			if errors.Is(wrapped, errors.New(err.Error())) {
				t.Error("errors.Is matched a non-kerr error with the same text")
			}
			var ke *Error
			if !errors.As(wrapped, &ke) {
				t.Fatal("errors.As(wrapped, *Error) = false")
			}
			if ke.Code() != tt.code {
				t.Errorf("Code() = %d, want %d", ke.Code(), tt.code)
			}
			if ke.Retriable() != tt.code.Retriable() {
				t.Errorf("Error.Retriable() = %v, want %v", ke.Retriable(), tt.code.Retriable())
			}
		})
	}
	var nilErr *Error
	if UnknownTopicOrPartition.Err().(*Error).Is(nilErr) {
		t.Error("Is(nil *Error) = true")
	}
}

func TestErrDoesNotAllocateForKnownCodes(t *testing.T) {
	var sink error
	allocs := testing.AllocsPerRun(100, func() {
		for _, c := range [...]Code{UnknownServerError, UnknownTopicOrPartition, ControllerIDNotRegistered} {
			sink = c.Err()
		}
	})
	if allocs != 0 {
		t.Errorf("Err() allocates %v times per run for known codes, want 0", allocs)
	}
	_ = sink
}

func TestAll(t *testing.T) {
	all := All()
	if len(all) != len(table) {
		t.Fatalf("len(All()) = %d, want %d", len(all), len(table))
	}
	if all[0] != UnknownServerError || !slices.Contains(all, None) {
		t.Errorf("All() starts with %d and contains None = %v", all[0], slices.Contains(all, None))
	}
	for i := 1; i < len(all); i++ {
		if all[i] <= all[i-1] {
			t.Fatalf("All()[%d] = %d follows %d: not ascending", i, all[i], all[i-1])
		}
	}
	for _, c := range all {
		if !c.Known() {
			t.Errorf("All() holds %d, which Known() rejects", c)
		}
	}
	all[0] = Code(999)
	if All()[0] != UnknownServerError {
		t.Error("All() returns a slice shared between calls")
	}
}
