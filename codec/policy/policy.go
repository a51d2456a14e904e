// Package policy checks the records of a Produce partition against a topic's
// schema-validation rule: the library feature behind kwire's proxy filter, usable
// by any Go program (and, through the flat ABI, by every binding).
//
// # Rules
//
// A Policy holds a default mode and a list of rules. A rule names a topic exactly
// (Topic) or by prefix (Prefix) and carries one of three modes:
//
//   - none: records are not checked;
//   - warn: records without a valid schema reference are reported (a filter logs
//     and counts them) but accepted;
//   - enforce: one record without a valid schema reference rejects its whole
//     partition, as a broker rejects a batch with INVALID_RECORD.
//
// An exact rule wins over prefix rules; among prefixes the longest wins; a topic no
// rule matches gets the default mode with no further constraints.
//
// # Schema references
//
// A record's schema reference is the one codec/records resolves (see
// records.ResolveSchema): the record headers "schema.id" and "schema.version"
// (decimal ASCII), else the Confluent prefix of the value (byte 0, then a 4-byte
// big-endian id). The policy adds what a validator needs on top:
//
//   - a "schema.id" or "schema.version" header whose value is not a decimal int32 is
//     a malformed reference (the record fails; it is not silently read from the
//     value prefix instead);
//   - SchemaIDs, when not empty, lists the allowed ids;
//   - RequireVersion demands a schema version (from the "schema.version" header);
//     Versions, when not empty, lists the allowed versions (and implies a version is
//     required).
//
// # Keys and values
//
// What a rule requires of a record's value is Rule.Value, of its key Rule.Key (a
// Check each): a schema reference (required by default for the value, not for the
// key; a key's reference is its Confluent prefix only), allowed ids and versions,
// JSON (ValidJSON, on the payload after the Confluent prefix when the reference is
// checked and comes from it), unique object keys, and whether a null passes
// (allowed by default: a tombstone passes a rule that requires a value schema).
// The top-level SchemaIDs, RequireVersion and Versions of a rule are the value's.
// Rule.Error (or Config.Error) picks the error of a rejected partition:
// INVALID_RECORD (the default) or POLICY_VIOLATION.
//
// # Verdicts
//
// Checker.Check walks one partition's records (any mix of magic 0, 1 and 2
// batches, compressed or not, decompression capped by Config.MaxDecompressedBytes)
// and returns a PartitionVerdict: how many records it saw, which failed and why
// (RecordVerdict, with the record's index in the partition's records), and whether
// the partition is accepted. Under enforce the policy fails closed: records that
// cannot be decoded (corrupt, truncated, over the cap, unsupported) reject the
// partition with the Kafka error a broker would give (CORRUPT_MESSAGE for damaged
// bytes, INVALID_RECORD otherwise). Under warn undecodable records are reported but
// the partition is accepted; under none nothing is decoded.
package policy

import (
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/errtext"
	"github.com/kwire/kwire/internal/proto"
)

// Mode is what a rule does with records that lack a valid schema reference.
type Mode uint8

// The three modes.
const (
	None    Mode = 0 // no check
	Warn    Mode = 1 // report, accept
	Enforce Mode = 2 // reject the partition
)

var modeNames = []string{"none", "warn", "enforce"}

// String is the mode's configuration name: "none", "warn" or "enforce".
func (m Mode) String() string { return proto.EnumString(modeNames, 0, int(m), "Mode") }

// ParseMode reads a mode name ("none", "warn", "enforce").
func ParseMode(s string) (Mode, error) {
	if i := slices.Index(modeNames, s); i >= 0 {
		return Mode(i), nil
	}
	return None, errors.New("policy: " + unknownMode(s))
}

func unknownMode(s string) string {
	return "unknown mode " + strconv.Quote(s) + " (want none, warn or enforce)"
}

// MarshalText writes the mode's name (so encoding/json and other text encoders
// write "enforce", not 2).
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a mode name.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Rule is the schema rule of one topic (Topic) or of every topic starting with
// Prefix. Exactly one of Topic and Prefix is set.
//
// What a rule requires of a record's value is Value; the top-level SchemaIDs,
// RequireVersion and Versions are the value's too (the form rules had before
// Value existed), given either there or in Value, not both. Key is what it
// requires of the key.
type Rule struct {
	Topic  string `json:"topic,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	Mode   Mode   `json:"policy"`
	// SchemaIDs are the allowed schema ids of the value; empty allows any id.
	SchemaIDs []int32 `json:"schema_ids,omitempty"`
	// RequireVersion rejects records whose value has no schema version.
	RequireVersion bool `json:"require_version,omitempty"`
	// Versions are the allowed schema versions of the value; when not empty a
	// version is required.
	Versions []int32 `json:"versions,omitempty"`
	// Value is what the rule requires of record values; nil is a schema
	// reference, constrained by the top-level fields.
	Value *Check `json:"value,omitempty"`
	// Key is what the rule requires of record keys; nil is nothing.
	Key *Check `json:"key,omitempty"`
	// Error is the Kafka error a partition the rule rejects is answered with:
	// InvalidRecord or PolicyViolation; 0 is Config.Error's.
	Error ErrorCode `json:"error,omitempty"`

	name       string // Name, computed by New
	value, key part   // compiled by New
	code       int16  // the rejection error
}

// Check is what a rule requires of one side of a record, its key or its value.
//
// The schema reference of a value is the one codec/records resolves (the
// "schema.id" and "schema.version" headers, else the Confluent prefix of the
// value); the schema reference of a key is the Confluent prefix of the key only
// (byte 0 and a 4-byte big-endian id: no header names a key's schema, so a key
// has no version).
type Check struct {
	// RequireSchema requires a schema reference. Nil is true for the value (what a
	// rule has always checked) and false for the key; SchemaIDs, RequireVersion and
	// Versions imply it.
	RequireSchema *bool `json:"require_schema,omitempty"`
	// SchemaIDs are the allowed schema ids; empty allows any id.
	SchemaIDs []int32 `json:"schema_ids,omitempty"`
	// RequireVersion rejects records without a schema version (values only).
	RequireVersion bool `json:"require_version,omitempty"`
	// Versions are the allowed schema versions (values only); when not empty a
	// version is required.
	Versions []int32 `json:"versions,omitempty"`
	// JSON requires the bytes to be one JSON text (RFC 8259, valid UTF-8, nesting
	// at most MaxJSONDepth). When the schema reference is checked and comes from
	// the Confluent prefix, the JSON is the payload after the 5-byte prefix;
	// otherwise it is the whole of the bytes.
	JSON bool `json:"json,omitempty"`
	// UniqueKeys also refuses an object that repeats a key; it implies JSON.
	UniqueKeys bool `json:"unique_keys,omitempty"`
	// Null says whether a null key or value (a tombstone) passes: AllowNull (the
	// default, as a broker's own schema validation lets tombstones pass) skips
	// every other check of the side; RefuseNull fails the record.
	Null NullPolicy `json:"null,omitempty"`
}

// NullPolicy is whether a rule lets a null key or value pass.
type NullPolicy uint8

// The null policies.
const (
	AllowNull  NullPolicy = 0 // "allow"
	RefuseNull NullPolicy = 1 // "refuse"
)

var nullNames = []string{"allow", "refuse"}

// String is the policy's configuration name: "allow" or "refuse".
func (n NullPolicy) String() string { return proto.EnumString(nullNames, 0, int(n), "NullPolicy") }

// MarshalText writes the policy's name.
func (n NullPolicy) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText reads "allow" or "refuse".
func (n *NullPolicy) UnmarshalText(b []byte) error {
	i := slices.Index(nullNames, string(b))
	if i < 0 {
		return errors.New("policy: " + unknownNull(string(b)))
	}
	*n = NullPolicy(i)
	return nil
}

func unknownNull(s string) string {
	return "unknown null policy " + strconv.Quote(s) + " (want allow or refuse)"
}

// part is a compiled Check.
type part struct {
	schema, requireVersion, json, unique, refuseNull bool
	ids, versions                                    []int32
}

// checks reports whether the part checks anything.
func (p *part) checks() bool { return p.schema || p.json || p.refuseNull }

func (c *Check) clone() *Check {
	if c == nil {
		return nil
	}
	d := *c
	d.SchemaIDs = append([]int32(nil), c.SchemaIDs...)
	d.Versions = append([]int32(nil), c.Versions...)
	if c.RequireSchema != nil {
		v := *c.RequireSchema
		d.RequireSchema = &v
	}
	return &d
}

// ErrorCode is the Kafka error code a rule rejects partitions with; its text form
// (configuration JSON) is the error's name.
type ErrorCode int16

// The rejection errors a rule may name (0 is unset: the policy's, else
// InvalidRecord).
const (
	InvalidRecord   = ErrorCode(kerr.InvalidRecord)   // "INVALID_RECORD" (87)
	PolicyViolation = ErrorCode(kerr.PolicyViolation) // "POLICY_VIOLATION" (44)
)

// String is the error's name: "INVALID_RECORD" or "POLICY_VIOLATION" (kerr's
// name for any other code).
func (c ErrorCode) String() string { return kerr.Code(c).String() }

// MarshalText writes the error's name.
func (c ErrorCode) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads "INVALID_RECORD" or "POLICY_VIOLATION".
func (c *ErrorCode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "INVALID_RECORD":
		*c = InvalidRecord
	case "POLICY_VIOLATION":
		*c = PolicyViolation
	default:
		return errors.New("policy: unknown error " + strconv.Quote(string(b)) + " (want INVALID_RECORD or POLICY_VIOLATION)")
	}
	return nil
}

// rejectCode checks a configured rejection error (0: unset).
func rejectCode(c ErrorCode) error {
	if c != 0 && c != InvalidRecord && c != PolicyViolation {
		return errors.New(strconv.Itoa(int(c)) + " is not INVALID_RECORD (87) or POLICY_VIOLATION (44)")
	}
	return nil
}

// compile checks rule r (at rules[i], the path base) and builds its parts and
// rejection code.
func (r *Rule) compile(def ErrorCode, base ...string) error {
	if err := rejectCode(r.Error); err != nil {
		return invalid(err.Error(), append(base, "error")...)
	}
	r.code = int16(def)
	if r.Error != 0 {
		r.code = int16(r.Error)
	}
	val, valAt := Check{SchemaIDs: r.SchemaIDs, RequireVersion: r.RequireVersion, Versions: r.Versions}, base
	if r.Value != nil {
		if len(r.SchemaIDs) > 0 || r.RequireVersion || len(r.Versions) > 0 {
			return invalid("schema_ids, require_version and versions are the value's: give them in value or at the top level of the rule, not both", append(base, "value")...)
		}
		val, valAt = *r.Value, append(base[:len(base):len(base)], "value")
	}
	var err error
	if r.value, err = val.compile(true, valAt); err != nil {
		return err
	}
	if r.Key != nil {
		r.key, err = r.Key.compile(false, append(base[:len(base):len(base)], "key"))
	}
	return err
}

// compile checks c, a value's (value true) or a key's, at the path base.
func (c *Check) compile(value bool, base []string) (part, error) {
	if err := nonNegative(c.SchemaIDs, base, "schema_ids"); err != nil {
		return part{}, err
	}
	if err := nonNegative(c.Versions, base, "versions"); err != nil {
		return part{}, err
	}
	implied := len(c.SchemaIDs) > 0 || c.RequireVersion || len(c.Versions) > 0
	schema := value || implied
	if c.RequireSchema != nil {
		schema = *c.RequireSchema
	}
	msg, field := "", ""
	switch {
	case !value && implied && (c.RequireVersion || len(c.Versions) > 0):
		msg, field = "a key's schema reference is its Confluent prefix, which carries no version", "versions"
		if c.RequireVersion {
			field = "require_version"
		}
	case !schema && implied:
		msg, field = "is false, but schema_ids, require_version or versions need a schema reference", "require_schema"
	case c.Null > RefuseNull:
		msg, field = "unknown null policy (want allow or refuse)", "null"
	}
	if msg != "" {
		return part{}, invalid(msg, append(base[:len(base):len(base)], field)...)
	}
	return part{schema: schema, requireVersion: c.RequireVersion, json: c.JSON || c.UniqueKeys, unique: c.UniqueKeys,
		refuseNull: c.Null == RefuseNull, ids: c.SchemaIDs, versions: c.Versions}, nil
}

// nonNegative fails on the first negative entry of list (base.name[j]).
func nonNegative(list []int32, base []string, name string) error {
	for j, v := range list {
		if v < 0 {
			return invalid(strconv.Itoa(int(v))+" is negative", append(base[:len(base):len(base)], name, "["+strconv.Itoa(j)+"]")...)
		}
	}
	return nil
}

// Name describes the rule in logs and verdicts: "topic:orders", "prefix:audit.",
// or "default".
func (r *Rule) Name() string {
	if r.name != "" {
		return r.name
	}
	switch {
	case r.Topic != "":
		return "topic:" + r.Topic
	case r.Prefix != "":
		return "prefix:" + r.Prefix
	}
	return "default"
}

// Config is a policy as written in JSON:
//
//	{"default": "none",
//	 "rules": [{"topic": "orders", "policy": "enforce", "schema_ids": [1, 2], "require_version": true},
//	           {"prefix": "audit.", "policy": "warn"}],
//	 "max_decompressed_bytes": 67108864}
type Config struct {
	Default Mode   `json:"default"`
	Rules   []Rule `json:"rules,omitempty"`
	// MaxDecompressedBytes caps what one compressed batch may decompress to; 0 means
	// records.DefaultMaxDecompressedSize.
	MaxDecompressedBytes int `json:"max_decompressed_bytes,omitempty"`
	// SkipCRC skips the batch checksums (CRC32C, CRC32 for legacy messages). A proxy
	// in front of a broker may: the broker verifies them on the bytes the policy
	// checked and refuses a damaged batch with CORRUPT_MESSAGE itself.
	SkipCRC bool `json:"skip_crc,omitempty"`
	// Error is the Kafka error of a partition a rule rejects, for rules that do
	// not name their own: InvalidRecord (0 means it) or PolicyViolation.
	Error ErrorCode `json:"error,omitempty"`
}

// Policy is a validated Config, ready to match topics. It is immutable and safe
// for concurrent use; a Checker is not.
type Policy struct {
	cfg      Config
	exact    map[string]*Rule
	prefixes []*Rule // longest first
	def      Rule
	active   bool
	enforces bool
}

// New validates cfg: every rule names a topic or a prefix (not both), no topic or
// prefix appears twice, versions and ids are not negative, the cap is not negative.
// A failure is a *ConfigError naming the field.
func New(cfg Config) (*Policy, error) {
	if cfg.Default > Enforce {
		return nil, invalid("unknown mode "+strconv.Itoa(int(cfg.Default)), "default")
	}
	if cfg.MaxDecompressedBytes < 0 {
		return nil, invalid(strconv.Itoa(cfg.MaxDecompressedBytes)+" is negative", "max_decompressed_bytes")
	}
	if err := rejectCode(cfg.Error); err != nil {
		return nil, invalid(err.Error(), "error")
	}
	code := cfg.Error
	if code == 0 {
		code = InvalidRecord
	}
	p := &Policy{cfg: cfg, exact: map[string]*Rule{}, def: Rule{Mode: cfg.Default}}
	_ = p.def.compile(code) // a value schema reference, nothing to refuse
	p.cfg.Rules = append([]Rule(nil), cfg.Rules...)
	seenPrefix := map[string]bool{}
	for i := range p.cfg.Rules {
		r := &p.cfg.Rules[i]
		r.SchemaIDs = append([]int32(nil), r.SchemaIDs...) // the caller keeps its slices
		r.Versions = append([]int32(nil), r.Versions...)
		r.Value, r.Key = r.Value.clone(), r.Key.clone()
		at := "[" + strconv.Itoa(i) + "]"
		switch {
		case r.Topic != "" && r.Prefix != "":
			return nil, invalid("sets both topic "+strconv.Quote(r.Topic)+" and prefix "+strconv.Quote(r.Prefix)+"; a rule matches one way", "rules", at)
		case r.Topic == "" && r.Prefix == "":
			return nil, invalid("needs a topic or a prefix", "rules", at)
		case r.Topic != "":
			if _, dup := p.exact[r.Topic]; dup {
				return nil, invalid("topic "+strconv.Quote(r.Topic)+" has a rule already", "rules", at, "topic")
			}
			p.exact[r.Topic] = r
		default:
			if seenPrefix[r.Prefix] {
				return nil, invalid("prefix "+strconv.Quote(r.Prefix)+" has a rule already", "rules", at, "prefix")
			}
			seenPrefix[r.Prefix] = true
			p.prefixes = append(p.prefixes, r)
		}
		if r.Mode > Enforce {
			return nil, invalid("unknown mode "+strconv.Itoa(int(r.Mode)), "rules", at, "policy")
		}
		if err := r.compile(code, "rules", at); err != nil {
			return nil, err
		}
		r.name = "" // a Config taken from another Policy carries its names
		r.name = r.Name()
		if r.Mode != None {
			p.active = true
		}
		if r.Mode == Enforce {
			p.enforces = true
		}
	}
	sort.SliceStable(p.prefixes, func(i, j int) bool { return len(p.prefixes[i].Prefix) > len(p.prefixes[j].Prefix) })
	if cfg.Default != None {
		p.active = true
	}
	if cfg.Default == Enforce {
		p.enforces = true
	}
	return p, nil
}

// Config returns a copy of the policy's configuration.
func (p *Policy) Config() Config {
	c := p.cfg
	c.Rules = append([]Rule(nil), p.cfg.Rules...)
	for i := range c.Rules {
		r := &c.Rules[i]
		r.SchemaIDs = append([]int32(nil), r.SchemaIDs...)
		r.Versions = append([]int32(nil), r.Versions...)
		r.Value, r.Key = r.Value.clone(), r.Key.clone()
	}
	return c
}

// Active reports whether any topic is checked (some mode is not none).
func (p *Policy) Active() bool { return p.active }

// Enforces reports whether some topic is under enforce: a filter that cannot read
// a Produce request then rejects it, since it cannot tell which topics it holds.
func (p *Policy) Enforces() bool { return p.enforces }

// RuleFor returns the rule that applies to topic: its exact rule, else the rule of
// its longest matching prefix, else the default rule (mode only).
func (p *Policy) RuleFor(topic string) *Rule {
	if r, ok := p.exact[topic]; ok {
		return r
	}
	for _, r := range p.prefixes {
		if strings.HasPrefix(topic, r.Prefix) {
			return r
		}
	}
	return &p.def
}

// Reason says why a record failed its rule.
type Reason uint8

// Reasons a record fails.
const (
	OK                Reason = 0
	NoSchema          Reason = 1 // no schema reference in headers or value prefix
	MalformedHeader   Reason = 2 // a schema.id or schema.version header that is not a decimal int32
	IDNotAllowed      Reason = 3 // the id is not in the rule's SchemaIDs
	NoVersion         Reason = 4 // the rule requires a version and the record has none
	VersionNotAllowed Reason = 5 // the version is not in the rule's Versions
	Undecodable       Reason = 6 // the records could not be read
	InvalidJSON       Reason = 7 // the rule requires JSON and the bytes are not
	DuplicateKey      Reason = 8 // the rule requires unique object keys and an object repeats one
	NullRefused       Reason = 9 // the key or value is null and the rule refuses null
)

var reasonNames = []string{"ok", "no-schema", "malformed-header", "id-not-allowed", "no-version",
	"version-not-allowed", "undecodable", "invalid-json", "duplicate-key", "null-refused"}

// String is the reason's name in verdict JSON.
func (r Reason) String() string { return proto.EnumString(reasonNames, 0, int(r), "Reason") }

// MarshalText writes the reason's name.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// RecordVerdict is one failing record.
type RecordVerdict struct {
	// Index counts the partition's records from 0, across its batches, in wire order:
	// for the usual one batch per partition it is the batch index a Produce response
	// reports in record_errors.
	Index  int    `json:"index"`
	Offset int64  `json:"offset"`
	Reason Reason `json:"reason"`
	// Field is the side of the record that failed: "value" or "key".
	Field  string        `json:"field"`
	Schema SchemaRefJSON `json:"schema"`
	Detail string        `json:"message"`
}

// SchemaRefJSON is a records.SchemaRef as verdict JSON writes it.
type SchemaRefJSON struct {
	Source  string `json:"source"`
	ID      int32  `json:"id"`
	Version int32  `json:"version"`
}

func refJSON(r records.SchemaRef) SchemaRefJSON {
	return SchemaRefJSON{Source: r.Source.String(), ID: r.ID, Version: r.Version}
}

// PartitionVerdict is the check of one partition's records.
type PartitionVerdict struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Mode      Mode   `json:"policy"`
	Rule      string `json:"rule"`
	// Checked is false under none: nothing was decoded.
	Checked bool `json:"checked"`
	// Records counts the records read (up to the failure, for undecodable data).
	Records int `json:"records"`
	// Failed counts the records without a valid schema reference.
	Failed int `json:"failed"`
	// Accept is false only under enforce, when a record failed or the records could
	// not be read.
	Accept bool `json:"accept"`
	// ErrorCode is the Kafka error of a rejected partition: the rule's (by default
	// INVALID_RECORD, 87; or POLICY_VIOLATION, 44) when records fail it;
	// INVALID_RECORD for records that cannot be read, CORRUPT_MESSAGE (2) for
	// damaged bytes; 0 when accepted.
	ErrorCode int16 `json:"errorCode"`
	// Error is the decoding failure, if any (also set under warn, where it does not
	// reject).
	Error string `json:"error,omitempty"`
	// Failures lists the failing records in order.
	Failures []RecordVerdict `json:"failures,omitempty"`
	// Err is the decoding error itself.
	Err error `json:"-"`
}

// Message is a one-line description of a rejected partition, for a Produce
// response's error_message: the rule and the first failure.
func (v *PartitionVerdict) Message() string {
	if v.Accept {
		return ""
	}
	var b strings.Builder
	b.WriteString("rejected by schema policy ")
	b.WriteString(v.Rule)
	if v.Err != nil {
		b.WriteString(": ")
		b.WriteString(v.Error)
		return b.String()
	}
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(v.Failed))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(v.Records))
	b.WriteString(" records failed")
	if len(v.Failures) > 0 {
		b.WriteString(", first at index ")
		b.WriteString(strconv.Itoa(v.Failures[0].Index))
		b.WriteString(": ")
		b.WriteString(v.Failures[0].Detail)
	}
	return b.String()
}

// Checker checks partitions against a Policy, reusing one records decoder (and
// its decompression buffer). It is not safe for concurrent use.
type Checker struct {
	p   *Policy
	dec records.Decoder
	buf []byte // decompressed records of the fast path (scanBatch)
	// spans and hdrs receive the fast path's record and header spans
	// (recordscan.Scan).
	spans, hdrs []int32
	json        jsonValidator // the JSON checks' scratch space
}

// NewChecker returns a checker of p.
func (p *Policy) NewChecker() *Checker {
	return &Checker{p: p, dec: records.Decoder{Options: records.Options{MaxDecompressedSize: p.cfg.MaxDecompressedBytes, SkipCRC: p.cfg.SkipCRC}}}
}

// errStopWalk ends a walk early; never returned.
var errStopWalk = errors.New("stop")

// Check checks the records field of one Produce partition of topic.
func (c *Checker) Check(topic string, partition int32, recs []byte) PartitionVerdict {
	var v PartitionVerdict
	c.CheckRule(&v, c.p.RuleFor(topic), topic, partition, recs)
	return v
}

// CheckRule is Check with the topic's rule already looked up (rule must be what
// RuleFor of the checker's policy returned for topic), writing the verdict into
// *v (whatever v held is replaced). A caller checking many partitions of a topic
// looks the rule up once, and can skip the partitions of a topic whose rule's
// mode is None: their verdict is always the accepting one, with nothing checked.
func (c *Checker) CheckRule(v *PartitionVerdict, rule *Rule, topic string, partition int32, recs []byte) {
	*v = PartitionVerdict{Topic: topic, Partition: partition, Mode: rule.Mode, Rule: rule.Name(), Accept: true}
	if rule.Mode == None {
		return
	}
	v.Checked = true
	skipped, err := c.walk(v, rule, recs, topic, partition)
	if err == nil && skipped > 0 {
		// A producer never sends a partial batch; the broker would refuse it.
		err = &records.Error{BaseOffset: -1, Record: -1, Field: "records", Offset: len(recs) - skipped,
			Err: errtext.Wrap(records.ErrTruncated.Error()+": "+strconv.Itoa(skipped)+" trailing bytes are not a whole batch", records.ErrTruncated)}
	}
	if err != nil {
		v.Err = err
		v.Error = err.Error()
		if rule.Mode == Enforce {
			v.Accept = false
			v.ErrorCode = int16(kerr.InvalidRecord)
			if errors.Is(err, records.ErrCRC) || errors.Is(err, records.ErrCorrupt) || errors.Is(err, records.ErrTruncated) {
				v.ErrorCode = int16(kerr.CorruptMessage)
			}
		}
		return
	}
	if v.Failed > 0 && rule.Mode == Enforce {
		v.Accept = false
		v.ErrorCode = rule.code
	}
}

// walk checks every record of recs into v, and returns what ForEachMessage
// would: the size of a partial batch at the end, or the error that stopped it.
// Data batches (magic 2, not control) are read with the batch iterator, without
// building a Message per record; control batches and legacy message sets go
// through ForEachMessage, entry by entry.
func (c *Checker) walk(v *PartitionVerdict, rule *Rule, recs []byte, topic string, partition int32) (int, error) {
	var r records.Record
	for pos := 0; pos < len(recs); {
		size, magic, err := records.PeekEntry(recs[pos:])
		if err != nil {
			return 0, shift(err, pos)
		}
		if size == 0 {
			return len(recs) - pos, nil
		}
		entry := recs[pos : pos+size]
		if magic == 2 {
			b, _, err := records.ParseBatch(entry, c.dec.SkipCRC)
			if err != nil {
				return 0, shift(err, pos)
			}
			if !b.IsControl() {
				if n, ok := c.scanBatch(rule, &b); ok {
					v.Records += n
					pos += size
					continue
				}
				it, err := c.dec.Records(&b)
				if err != nil {
					return 0, shift(err, pos)
				}
				for it.Next(&r) {
					c.record(v, rule, r.Offset, r.Key, r.Value, r.Headers)
				}
				if err := it.Err(); err != nil {
					return 0, shift(err, pos)
				}
				pos += size
				continue
			}
		}
		_, err = c.dec.ForEachMessage(entry, topic, partition, func(m *records.Message) error {
			if m.Control {
				// A control record carries no schema reference.
				idx := v.Records
				v.Records++
				v.Failed++
				v.Failures = append(v.Failures, RecordVerdict{Index: idx, Offset: m.Offset, Reason: NoSchema, Field: "value", Schema: refJSON(m.Schema), Detail: noSchemaDetail})
				return nil
			}
			c.record(v, rule, m.Offset, m.Key, m.Value, m.Headers)
			return nil
		})
		if err != nil {
			return 0, shift(err, pos)
		}
		pos += size
	}
	return 0, nil
}

// record checks one record against rule.
func (c *Checker) record(v *PartitionVerdict, rule *Rule, offset int64, key, value []byte, headers []records.Header) {
	idx := v.Records
	v.Records++
	if reason, field, ref, detail := c.checkRecord(rule, key, value, headers); reason != OK {
		v.Failed++
		v.Failures = append(v.Failures, RecordVerdict{Index: idx, Offset: offset, Reason: reason, Field: field, Schema: refJSON(ref), Detail: detail})
	}
}

// shift moves the offset of a records error in entry (at pos in the partition's
// records) to the partition's records.
func shift(err error, pos int) error {
	var e *records.Error
	if pos > 0 && errors.As(err, &e) && !e.Decompressed {
		e.Offset += pos
	}
	return err
}

const noSchemaDetail = "no schema reference (no schema.id header, no schema-id prefix in the value)"

// checkRecord applies rule to one record, returning the failure (or OK), the
// side that failed ("value" or "key") and the schema reference of that side.
func (c *Checker) checkRecord(rule *Rule, key, value []byte, headers []records.Header) (Reason, string, records.SchemaRef, string) {
	ref := records.ResolveSchema(value, headers)
	if p := &rule.value; p.checks() {
		if value == nil {
			if p.refuseNull {
				return NullRefused, "value", ref, "value: null (a tombstone), and the rule refuses null values"
			}
		} else {
			if p.schema {
				for _, key := range [...]string{records.SchemaIDHeader, records.SchemaVersionHeader} {
					if val, ok := headerValue(headers, key); ok && !decimalInt32(val) {
						return MalformedHeader, "value", ref, "header " + key + " is " + strconv.Quote(clip(val)) + ", not a decimal int32"
					}
				}
			}
			if reason, detail := c.checkPart(p, "value", value, ref); reason != OK {
				return reason, "value", ref, detail
			}
		}
	}
	if p := &rule.key; p.checks() {
		kref := keyRef(key)
		if key == nil {
			if p.refuseNull {
				return NullRefused, "key", kref, "key: null, and the rule refuses null keys"
			}
		} else if reason, detail := c.checkPart(p, "key", key, kref); reason != OK {
			return reason, "key", kref, detail
		}
	}
	return OK, "", ref, ""
}

// keyRef is the schema reference of a key: its Confluent prefix, if any.
func keyRef(key []byte) records.SchemaRef {
	if len(key) >= 5 && key[0] == 0 {
		return records.SchemaRef{Source: records.SchemaValuePrefix, ID: int32(binary.BigEndian.Uint32(key[1:])), Version: -1}
	}
	return records.SchemaRef{ID: -1, Version: -1}
}

// checkPart applies p to the bytes b (not null) of one side of a record, whose
// schema reference is ref (headers already checked).
func (c *Checker) checkPart(p *part, field string, b []byte, ref records.SchemaRef) (Reason, string) {
	if p.schema {
		if reason, detail := checkRef(p, ref); reason != OK {
			if field == "key" {
				detail = "key: " + strings.Replace(detail, noSchemaDetail, "no schema reference (no schema-id prefix in the key)", 1)
			}
			return reason, detail
		}
		if ref.Source == records.SchemaValuePrefix {
			b = b[5:]
		}
	}
	if p.json {
		if err := c.json.check(b, p.unique); err != nil {
			je := err.(*JSONError)
			if je.Repeated {
				return DuplicateKey, field + ": " + je.Error()
			}
			return InvalidJSON, field + ": not JSON: " + je.Error()
		}
	}
	return OK, ""
}

// headerValue is the value of the last header named key (the one ResolveSchema
// reads).
func headerValue(headers []records.Header, key string) ([]byte, bool) {
	for i := len(headers) - 1; i >= 0; i-- {
		if string(headers[i].Key) == key {
			return headers[i].Value, true
		}
	}
	return nil, false
}

// checkRef applies rule to a record's schema reference.
func checkRef(rule *part, ref records.SchemaRef) (Reason, string) {
	if ref.Source == records.SchemaNone {
		return NoSchema, noSchemaDetail
	}
	if len(rule.ids) > 0 && !contains(rule.ids, ref.ID) {
		return IDNotAllowed, "schema id " + strconv.Itoa(int(ref.ID)) + " is not allowed"
	}
	if ref.Version < 0 && (rule.requireVersion || len(rule.versions) > 0) {
		return NoVersion, "no schema version (schema.version header)"
	}
	if len(rule.versions) > 0 && !contains(rule.versions, ref.Version) {
		return VersionNotAllowed, "schema version " + strconv.Itoa(int(ref.Version)) + " is not allowed"
	}
	return OK, ""
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// decimalInt32 is the header syntax records.ResolveSchema accepts.
func decimalInt32(b []byte) bool {
	if len(b) == 0 || len(b) > 11 {
		return false
	}
	s := b
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(string(b), 10, 32)
	return err == nil
}

func clip(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "..."
	}
	return string(b)
}
