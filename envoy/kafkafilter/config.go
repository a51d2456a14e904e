// Package kafkafilter is kwire's Kafka network filter, independent of any proxy:
// it follows both directions of one Kafka connection (client requests downstream,
// broker responses upstream) through byte chunks cut anywhere, and decides what to
// forward. The proxy-wasm module in envoy/ drives it from Envoy's callbacks; tests
// drive it directly.
//
// What it does, per the plugin configuration (Config):
//
//   - counts requests and responses per api key, unknown and undecodable frames,
//     and times responses (histograms in milliseconds per api key);
//   - denies api keys: a denied request never reaches the broker and the client
//     gets that api's error response, in order (see Conn for how);
//   - rewrites broker addresses from a node id -> host:port map wherever a response
//     carries them (Metadata, FindCoordinator, DescribeCluster, and the node
//     endpoints of Produce, Fetch, ShareFetch and ShareAcknowledge), so clients reach
//     brokers only through the proxy;
//   - applies a codec/policy schema policy to Produce requests: rejected partitions
//     are answered with the rule's error (INVALID_RECORD by default, or
//     POLICY_VIOLATION; CORRUPT_MESSAGE for damaged bytes) and never reach the
//     broker; accepted partitions of the same request go through; the response
//     order is kept; under enforce a Produce the filter cannot read is refused
//     (the connection is closed), never passed.
package kafkafilter

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/codec/rules"
	"github.com/kwire/kwire/codec/tenant"
)

// Config is the plugin configuration (JSON). Every field is optional.
//
//	{
//	  "stat_prefix": "kafka.kwire",
//	  "api_keys": {"deny": [19, 20]},
//	  "deny_error_code": 31,
//	  "brokers": {"1": "127.0.0.1:19092"},
//	  "schema": {"default": "none", "rules": [{"topic": "orders", "policy": "enforce", "schema_ids": [1]}]},
//	  "rules": [{"api": "CreateTopics", "field": "topics[].replicationFactor", "min": 3}],
//	  "rule_error_code": 44,
//	  "max_produce_version": 12,
//	  "max_frame_bytes": 104857600,
//	  "metrics_flush_ms": 1000,
//	  "tick_ms": 0
//	}
type Config struct {
	// StatPrefix starts every metric name; default "kafka.kwire".
	StatPrefix string `json:"stat_prefix,omitempty"`
	// APIKeys lists the api keys allowed (only these) or denied (all but these).
	APIKeys APIKeys `json:"api_keys,omitempty"`
	// DenyErrorCode is the Kafka error code a denied request is answered with;
	// default CLUSTER_AUTHORIZATION_FAILED (31).
	DenyErrorCode *int16 `json:"deny_error_code,omitempty"`
	// Brokers maps a broker's node id to the host:port clients must use instead of
	// the address the broker advertises. Node ids missing from the map are left as
	// the broker wrote them (and counted).
	Brokers map[string]string `json:"brokers,omitempty"`
	// Schema is the schema-validation policy applied to Produce requests.
	Schema *policy.Config `json:"schema,omitempty"`
	// Rules are request rules on any field of any api (codec/rules: "api", "field",
	// and predicates), checked against Kafka's descriptors when the configuration
	// loads. A request that breaks one is not forwarded: it is answered in its api's
	// own shape with RuleErrorCode and the rule's message (per topic for CreateTopics,
	// per partition for Produce, at the top level where the response has an error
	// code), or, where the response has no field for the error, its connection is
	// closed. Requests of apis no rule names stream through as before.
	Rules []byte `json:"rules,omitempty"` // the JSON text of the rule array
	// RuleErrorCode is the Kafka error code of a refusal by Rules; default
	// POLICY_VIOLATION (44), what a broker's create-topic policy answers.
	RuleErrorCode *int16 `json:"rule_error_code,omitempty"`
	// VerifyCRC makes the filter verify batch checksums before checking records.
	// Off by default: the broker verifies them on the very bytes the filter checked
	// and answers a damaged batch with CORRUPT_MESSAGE, so nothing unchecked lands,
	// and checksums are most of the policy's cost inside a WebAssembly VM. The
	// schema's own skip_crc is then ignored.
	VerifyCRC bool `json:"verify_crc,omitempty"`
	// FetchEndpoints says what the filter does, when Brokers is set, with the node
	// endpoints of Fetch responses (v16+; KIP-951 clients use them on a leader change):
	//   - "in_place" (default): rewrite them at the same size as the response streams
	//     through: the response is never held; endpoints whose proxy address is longer
	//     than the broker's are removed (clients then refresh metadata, through the
	//     filter);
	//   - "hold": hold each response whole and rewrite its endpoints exactly (store and
	//     forward: costs the time a response takes to arrive, and copies it);
	//   - "forward": leave Fetch responses untouched. A client may then reach a new
	//     leader at the address the broker advertises, around the proxy.
	FetchEndpoints string `json:"fetch_endpoints,omitempty"`
	// MaxProduceVersion caps the Produce version the broker advertises in ApiVersions
	// responses. When a schema policy is active it defaults to 12: from version 13
	// Produce names topics by id only, and a filter that has not seen the topic's id in
	// a Metadata response on its VM cannot tell which rule applies (such partitions get
	// UNKNOWN_TOPIC_ID, retriable, and are not forwarded). -1 turns the cap off.
	MaxProduceVersion *int16 `json:"max_produce_version,omitempty"`
	// MaxFrameBytes bounds a frame in either direction (default 100 MiB, Kafka's
	// socket.request.max.bytes); a larger frame closes the connection.
	MaxFrameBytes int `json:"max_frame_bytes,omitempty"`
	// Tenant makes the listener a virtual cluster (codec/tenant): every topic name,
	// group id and transactional id gets Tenant.Prefix on the way to the broker and
	// loses it on the way back, other tenants' entities are left out of lists, and
	// the apis a tenant may not use are answered with deny_error_code (and left out of
	// ApiVersions responses).
	Tenant *TenantConfig `json:"tenant,omitempty"`
	// MetricsFlushMs is how long the filter's counters add up in the filter before
	// their counts go to the host's counters (default 1000): a count reaches the host
	// on the first response after that time, on the next tick (the filter asks for one
	// every MetricsFlushMs), or when a connection closes. Each update of a host
	// counter is a call out of the VM, and a Produce request touches four counters. 0
	// sends every count at once. Histograms (response durations) and the
	// connections.active gauge are always recorded at once.
	MetricsFlushMs *int `json:"metrics_flush_ms,omitempty"`
	// TickMs, when positive, asks the host for a tick every TickMs milliseconds
	// (or every MetricsFlushMs when that is shorter); a tick logs a one-line summary
	// at debug level when TickMs has passed since the last one.
	TickMs int `json:"tick_ms,omitempty"`
}

// TenantConfig is a listener's tenant.
type TenantConfig struct {
	Prefix string `json:"prefix"`
}

// APIKeys is an allow list or a deny list of api keys (not both).
type APIKeys struct {
	Allow []int16 `json:"allow,omitempty"`
	Deny  []int16 `json:"deny,omitempty"`
}

// settings is a validated Config.
type settings struct {
	prefix       string
	denied       map[int16]bool
	allowList    bool // denied holds the complement: keys not allowed are denied
	allowed      map[int16]bool
	deniedLow    [256]bool // isDenied for the keys below 256, looked up once per request
	denyCode     int16
	brokers      map[int32]hostPort
	pol          *policy.Policy
	maxProduceV  int16 // -1: no cap
	rules        *rules.Set
	tenant       *tenant.Tenant
	ruleCode     int16
	maxFrame     int
	tickMs       int
	flushMs      int // MetricsFlushMs
	learnTopicID bool
	// fetchEndpoints is FetchEndpoints
	fetchEndpoints int
	stats          policyStats // per-topic policy counters (policystats.go)
	// heldLow: the filter holds requests of the keys below 256 (denied, or under
	// rules), looked up once per request; produceMode is how a Produce under rules is
	// held (modeHold, modeRules or modeRulesHead), decided once from the rules.
	heldLow     [256]bool
	produceMode int
}

// FetchEndpoints values.
const (
	endpointsInPlace = iota
	endpointsHold
	endpointsForward
)

type hostPort struct {
	host string
	port int32
}

// ParseConfig reads the plugin configuration strictly (policy.Reader: an unknown
// or repeated key, a wrong type or trailing data is an error naming the JSON path
// and byte offset). Empty input is the default configuration. settings validates
// the values.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) == 0 {
		return &c, nil
	}
	r := policy.NewReader("kafka filter configuration", data)
	int16s := func() (out []int16) {
		r.Array(func(int) { out = append(out, int16(r.Int(math.MinInt16, math.MaxInt16))) })
		return out
	}
	r.Object(func(key string) {
		switch key {
		case "stat_prefix":
			c.StatPrefix = r.String()
		case "api_keys":
			r.Object(func(key string) {
				switch key {
				case "allow":
					c.APIKeys.Allow = int16s()
				case "deny":
					c.APIKeys.Deny = int16s()
				default:
					r.Unknown(key)
				}
			})
		case "deny_error_code":
			v := int16(r.Int(math.MinInt16, math.MaxInt16))
			c.DenyErrorCode = &v
		case "brokers":
			c.Brokers = map[string]string{}
			r.Object(func(node string) { c.Brokers[node] = r.String() })
		case "schema":
			if p := r.Policy(); p != nil {
				cfg := p.Config()
				c.Schema = &cfg
			}
		case "rules":
			raw, at := r.Raw()
			if raw != nil {
				if _, err := rules.Parse(raw); err != nil {
					var ce *rules.ConfigError
					if errors.As(err, &ce) {
						r.Fail(at+ce.Offset, strings.TrimPrefix(ce.Path, "$")+": "+ce.Msg)
					} else {
						r.Fail(at, err.Error())
					}
					return
				}
				c.Rules = append([]byte(nil), raw...)
			}
		case "rule_error_code":
			v := int16(r.Int(math.MinInt16, math.MaxInt16))
			c.RuleErrorCode = &v
		case "fetch_endpoints":
			c.FetchEndpoints = r.String()
		case "verify_crc":
			c.VerifyCRC = r.Bool()
		case "max_produce_version":
			v := int16(r.Int(math.MinInt16, math.MaxInt16))
			c.MaxProduceVersion = &v
		case "max_frame_bytes":
			c.MaxFrameBytes = int(r.Int(math.MinInt32, math.MaxInt32))
		case "tick_ms":
			c.TickMs = int(r.Int(math.MinInt32, math.MaxInt32))
		case "metrics_flush_ms":
			v := int(r.Int(math.MinInt32, math.MaxInt32))
			c.MetricsFlushMs = &v
		case "tenant":
			c.Tenant = &TenantConfig{}
			r.Object(func(key string) {
				switch key {
				case "prefix":
					c.Tenant.Prefix = r.String()
				default:
					r.Unknown(key)
				}
			})
		default:
			r.Unknown(key)
		}
	})
	if err := r.End(); err != nil {
		return nil, err
	}
	return &c, nil
}

// tickPeriod is the tick the filter asks for, in milliseconds (0: none): tick_ms's,
// or metrics_flush_ms's when counters wait in the filter and that is shorter.
func (s *settings) tickPeriod() int {
	if s.flushMs > 0 && (s.tickMs <= 0 || s.flushMs < s.tickMs) {
		return s.flushMs
	}
	return s.tickMs
}

func (c *Config) settings() (*settings, error) {
	s := &settings{prefix: "kafka.kwire", denied: map[int16]bool{}, denyCode: int16(kerr.ClusterAuthorizationFailed),
		maxProduceV: -1, maxFrame: codec.DefaultMaxFrameSize, tickMs: c.TickMs, flushMs: 1000}
	if c.StatPrefix != "" {
		s.prefix = c.StatPrefix
	}
	if len(c.APIKeys.Allow) > 0 && len(c.APIKeys.Deny) > 0 {
		return nil, errors.New("api_keys: give allow or deny, not both")
	}
	for i, k := range c.APIKeys.Deny {
		if _, ok := codec.LookupAPI(k); !ok {
			return nil, errors.New("api_keys.deny[" + strconv.Itoa(i) + "]: " + strconv.Itoa(int(k)) + " is not a Kafka api key")
		}
		s.denied[k] = true
	}
	if len(c.APIKeys.Allow) > 0 {
		s.allowList = true
		s.allowed = map[int16]bool{}
		for i, k := range c.APIKeys.Allow {
			if _, ok := codec.LookupAPI(k); !ok {
				return nil, errors.New("api_keys.allow[" + strconv.Itoa(i) + "]: " + strconv.Itoa(int(k)) + " is not a Kafka api key")
			}
			s.allowed[k] = true
		}
	}
	s.ruleCode = rules.PolicyViolation
	if len(c.Rules) > 0 {
		set, err := rules.Parse(c.Rules)
		if err != nil {
			return nil, err
		}
		if set.Len() > 0 {
			s.rules = set
		}
	}
	if c.RuleErrorCode != nil {
		if !kerr.Code(*c.RuleErrorCode).Known() || *c.RuleErrorCode == 0 {
			return nil, errors.New("rule_error_code: " + strconv.Itoa(int(*c.RuleErrorCode)) + " is not a Kafka error code")
		}
		s.ruleCode = *c.RuleErrorCode
	}
	if c.DenyErrorCode != nil {
		if !kerr.Code(*c.DenyErrorCode).Known() || *c.DenyErrorCode == 0 {
			return nil, errors.New("deny_error_code: " + strconv.Itoa(int(*c.DenyErrorCode)) + " is not a Kafka error code")
		}
		s.denyCode = *c.DenyErrorCode
	}
	if len(c.Brokers) > 0 {
		s.brokers = map[int32]hostPort{}
		keys := make([]string, 0, len(c.Brokers))
		for k := range c.Brokers {
			keys = append(keys, k)
		}
		for i := 1; i < len(keys); i++ { // a few node ids: an insertion sort (sort.Strings would add 19 KB to the module)
			for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
				keys[j], keys[j-1] = keys[j-1], keys[j]
			}
		}
		for _, k := range keys {
			id, err := strconv.ParseInt(k, 10, 32)
			if err != nil || id < 0 {
				return nil, errors.New("brokers: key " + strconv.Quote(k) + " is not a node id")
			}
			host, port, ok := splitHostPort(c.Brokers[k])
			if !ok {
				return nil, errors.New("brokers[" + k + "]: " + strconv.Quote(c.Brokers[k]) + " is not host:port")
			}
			p, err := strconv.ParseUint(port, 10, 16)
			if err != nil || p == 0 {
				return nil, errors.New("brokers[" + k + "]: port " + strconv.Quote(port) + " is not a TCP port")
			}
			s.brokers[int32(id)] = hostPort{host, int32(p)}
		}
	}
	if c.Schema != nil {
		cfg := *c.Schema
		cfg.SkipCRC = !c.VerifyCRC
		p, err := policy.New(cfg)
		if err != nil {
			return nil, errors.New("schema: " + err.Error())
		}
		if p.Active() {
			s.pol = p
			s.maxProduceV = 12
			s.learnTopicID = true
		}
	}
	if c.MaxProduceVersion != nil {
		v := *c.MaxProduceVersion
		if v < -1 || v > 13 {
			return nil, errors.New("max_produce_version: " + strconv.Itoa(int(v)) + " is not -1 or a Produce version (0-13)")
		}
		if v >= 0 && v < 3 && s.pol != nil {
			return nil, errors.New("max_produce_version: " + strconv.Itoa(int(v)) + " carries no record headers; a schema policy needs 3 or more")
		}
		s.maxProduceV = v
	}
	switch c.FetchEndpoints {
	case "", "in_place":
		s.fetchEndpoints = endpointsInPlace
	case "hold":
		s.fetchEndpoints = endpointsHold
	case "forward":
		s.fetchEndpoints = endpointsForward
	default:
		return nil, errors.New("fetch_endpoints: " + strconv.Quote(c.FetchEndpoints) + " is not in_place, hold or forward")
	}
	if c.MaxFrameBytes < 0 {
		return nil, errors.New("max_frame_bytes: " + strconv.Itoa(int(c.MaxFrameBytes)) + " is negative")
	}
	if c.MaxFrameBytes > 0 {
		s.maxFrame = c.MaxFrameBytes
	}
	if c.Tenant != nil {
		t, err := tenant.New(c.Tenant.Prefix)
		if err != nil {
			return nil, errors.New("tenant.prefix: " + err.Error())
		}
		s.tenant = t
	}
	if c.TickMs < 0 {
		return nil, errors.New("tick_ms: " + strconv.Itoa(int(c.TickMs)) + " is negative")
	}
	if c.MetricsFlushMs != nil {
		if *c.MetricsFlushMs < 0 {
			return nil, errors.New("metrics_flush_ms: " + strconv.Itoa(*c.MetricsFlushMs) + " is negative")
		}
		s.flushMs = *c.MetricsFlushMs
	}
	for k := range s.deniedLow {
		s.deniedLow[k] = s.isDeniedSlow(int16(k))
		s.heldLow[k] = s.deniedLow[k] || s.rules != nil && s.rules.Applies(int16(k))
	}
	s.produceMode = modeHold
	if !s.isDenied(apiProduce) && s.tenant == nil && s.rules != nil && !s.rules.Reads(apiProduce, "records") {
		s.produceMode = modeRules // checked on its skeleton: the records are not copied
		if s.rules.OnlyReads(apiProduce, "transactionalId", "acks", "timeoutMs") {
			s.produceMode = modeRulesHead // decided from its head: it streams
		}
	}
	return s, nil
}

// held reports whether the filter holds requests of key: denied, or under rules.
func (s *settings) held(key int16) bool {
	if key >= 0 && int(key) < len(s.heldLow) {
		return s.heldLow[key]
	}
	return s.isDenied(key) || s.rules != nil && s.rules.Applies(key)
}

// isDenied reports whether requests of key are answered by the filter.
func (s *settings) isDenied(key int16) bool {
	if key >= 0 && int(key) < len(s.deniedLow) {
		return s.deniedLow[key]
	}
	return s.isDeniedSlow(key)
}

func (s *settings) isDeniedSlow(key int16) bool {
	if s.tenant != nil && tenant.APIAccess(key) == tenant.Refused {
		return true
	}
	if s.allowList {
		return !s.allowed[key]
	}
	return s.denied[key]
}

// splitHostPort splits "host:port" or "[v6]:port".
func splitHostPort(s string) (host, port string, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	host, port = s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") || len(host) < 3 {
			return "", "", false
		}
		host = host[1 : len(host)-1]
	} else if strings.ContainsAny(host, ":[]") {
		return "", "", false
	}
	return host, port, true
}
