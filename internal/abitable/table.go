// Package abitable is the one declaration of kwire's flat ABI: every kw_ export with its
// parameters and result, the status codes, the limits and flags, and the offsets of the
// record table. The generator (internal/abitable/gen, run by `make generate`) writes from
// it the //go:wasmexport shims of wasm/, the cgo //export shims of capi/, the constants
// and prototypes of capi/kwire.h, the bindings' constants and the export lists that the
// hosts and bindings check. capi/kwire.h keeps the documentation; its #define lines and
// its prototypes are rewritten from this table, and a #define or a prototype the table
// lacks is an error.
package abitable

// Kind is what a parameter is at the boundary.
type Kind int

const (
	// Bytes is an input (const uint8_t *p, int32_t p_len), read during the call only.
	Bytes Kind = iota
	// Name is a message name (const char *p, int32_t p_len).
	Name
	// Text is an input (const uint8_t *p, int32_t p_len) the call takes as a Go string.
	Text
	// I32 is an int32_t passed by value.
	I32
	// Out is the pair (uint8_t **out, int32_t *out_len) receiving a library-owned buffer.
	Out
	// OutI32 is an int32_t * that receives one value; it must not be NULL.
	OutI32
	// OptI32 is an int32_t * that receives one value when it is not NULL.
	OptI32
	// Peek is a kw_peek_header * filled in place.
	Peek
	// LastError is the pair (const uint8_t **out, int32_t *out_len) receiving the
	// library's last-error text, which the caller never frees.
	LastError
	// Ptr is a void * naming a buffer (kw_free).
	Ptr
)

// Param is one parameter of an export, as kwire.h names it.
type Param struct {
	Name string // "in" (for a pair, the pointer's name; the length is Name+"_len")
	Kind Kind
	What string // how an error names it ("frame", "json", "out_handle")
	// Len is the length's name when it is not Name+"_len" (kw_session_new's config_len).
	Len string
}

// Result is what an export returns.
type Result int

const (
	// Status is an int32_t status (KW_OK or a KW_ERR_* code).
	Status Result = iota
	// Value is a plain int32_t (kw_abi_version).
	Value
	// Pointer is a uint8_t * (kw_alloc).
	Pointer
)

// Export is one kw_ function.
type Export struct {
	Name   string // "kw_decode_message"
	Params []Param
	Result Result
	// Call is the Go function the shim calls. "abi.X" is package abi's; a lower-case
	// name is a function of the transport (wasm/ or capi/) with the same meaning in
	// both. A Status export with Call is a standard shim: out-params are checked and
	// cleared first, then the inputs in order; then Call(dst, inputs and values in
	// order) returns the output buffer (when there is an Out), one int32 per OutI32 or
	// OptI32, a value to Put into a Peek, and an error. Without Call the shim hands its
	// parameters to the transport's function named by Impl.
	Call string
	Impl string
	// Since is the ABI minor version that added the export.
	Since int
}

// The ABI version: kw_abi_version returns Major<<16 | Minor.
const (
	Major = 1
	Minor = 5
)

func in(name, what string) Param     { return Param{Name: name, Kind: Bytes, What: what} }
func i32(name string) Param          { return Param{Name: name, Kind: I32} }
func out() Param                     { return Param{Name: "out", Kind: Out} }
func outI32(name string) Param       { return Param{Name: name, Kind: OutI32, What: name} }
func optI32(name, what string) Param { return Param{Name: name, Kind: OptI32, What: what} }

// Exports is every kw_ function, in the order of kwire.h.
var Exports = []Export{
	{Name: "kw_abi_version", Result: Value, Impl: "abiVersion"},
	{Name: "kw_alloc", Params: []Param{i32("size")}, Result: Pointer, Impl: "alloc"},
	{Name: "kw_free", Params: []Param{{Name: "ptr", Kind: Ptr}}, Impl: "free"},
	{Name: "kw_last_error", Params: []Param{{Name: "out", Kind: LastError}}, Impl: "lastErrorText"},
	{Name: "kw_last_error_json", Params: []Param{{Name: "out", Kind: LastError}}, Impl: "lastErrorJSON"},
	{Name: "kw_api_catalogue", Params: []Param{out()}, Call: "abi.Catalogue"},
	{Name: "kw_header_versions", Params: []Param{i32("api_key"), i32("api_version"),
		optI32("request_header_version", "request_header_version"), optI32("response_header_version", "response_header_version")},
		Call: "abi.HeaderVersions"},
	{Name: "kw_decode_message", Params: []Param{{Name: "name", Kind: Name, What: "name"}, i32("version"), in("in", "input"), out()},
		Call: "abi.DecodeMessage"},
	{Name: "kw_encode_message", Params: []Param{{Name: "name", Kind: Name, What: "name"}, i32("version"), in("json", "json"), out()},
		Call: "abi.EncodeMessage"},
	{Name: "kw_decode_request_frame", Params: []Param{in("in", "frame"), out()}, Call: "abi.DecodeRequestFrame"},
	{Name: "kw_encode_request_frame", Params: []Param{in("json", "json"), out()}, Call: "abi.EncodeRequestFrame"},
	{Name: "kw_decode_response_frame", Params: []Param{in("in", "frame"), i32("api_key"), i32("api_version"), out()},
		Call: "abi.DecodeResponseFrame"},
	{Name: "kw_encode_response_frame", Params: []Param{in("json", "json"), i32("api_key"), i32("api_version"), out()},
		Call: "abi.EncodeResponseFrame"},
	{Name: "kw_peek_request_header", Params: []Param{in("in", "frame"), {Name: "out", Kind: Peek}}, Call: "abi.PeekRequestHeader"},
	{Name: "kw_records_decode_json", Params: []Param{in("in", "records"), i32("flags"), i32("max_decompressed"), out()},
		Call: "abi.RecordsDecodeJSON"},
	{Name: "kw_records_decode_table", Params: []Param{in("in", "records"), i32("flags"), i32("max_decompressed"), out()},
		Call: "abi.RecordsDecodeTable"},
	{Name: "kw_records_encode", Params: []Param{in("json", "json"), i32("compression"), out()}, Call: "abi.RecordsEncode"},
	{Name: "kw_policy_check", Params: []Param{in("policy", "policy"), {Name: "topic", Kind: Text, What: "topic"}, i32("partition"),
		in("records", "records"), out()}, Call: "abi.PolicyCheck", Since: 1},
	{Name: "kw_decode_request_frame_records", Params: []Param{in("in", "frame"), i32("flags"), i32("max_decompressed"), out()},
		Call: "abi.DecodeRequestFrameRecords", Since: 1},
	{Name: "kw_decode_response_frame_records", Params: []Param{in("in", "frame"), i32("api_key"), i32("api_version"), i32("flags"),
		i32("max_decompressed"), out()}, Call: "abi.DecodeResponseFrameRecords", Since: 1},
	{Name: "kw_encode_request_frame_records", Params: []Param{in("json", "json"), in("table", "table"), out()},
		Call: "abi.EncodeRequestFrameRecords", Since: 1},
	{Name: "kw_runtime_stats", Params: []Param{out()}, Call: "runtimeStats", Since: 2},
	{Name: "kw_decode_frame_records_inflated", Params: []Param{in("in", "frame"), i32("api_key"), i32("api_version"), i32("flags"),
		i32("max_decompressed"), in("inflated", "inflated"), out()}, Call: "abi.DecodeFrameRecordsInflated", Since: 3},
	{Name: "kw_rules_check", Params: []Param{in("rules", "rules"), in("frame", "frame"), i32("error_code"), out()},
		Call: "abi.RulesCheck", Since: 5},
	{Name: "kw_session_new", Params: []Param{{Name: "config_json", Len: "config_len", Kind: Bytes, What: "config"}, outI32("out_handle")},
		Call: "abi.SessionNew", Since: 1},
	{Name: "kw_session_free", Params: []Param{i32("session")}, Call: "abi.SessionFree", Since: 1},
	{Name: "kw_session_begin_negotiation", Params: []Param{i32("session"), out()}, Call: "abi.SessionBeginNegotiation", Since: 1},
	{Name: "kw_session_request", Params: []Param{i32("session"), i32("api_key"), i32("api_version"),
		{Name: "body_json", Len: "body_len", Kind: Bytes, What: "body"}, i32("flags"), out(), outI32("out_correlation_id")},
		Call: "abi.SessionRequest", Since: 1},
	{Name: "kw_session_feed", Params: []Param{i32("session"), in("in", "input")}, Call: "abi.SessionFeed", Since: 1},
	{Name: "kw_session_next", Params: []Param{i32("session"), out()}, Call: "abi.SessionNext", Since: 1},
	{Name: "kw_session_counters", Params: []Param{i32("session"), out()}, Call: "abi.SessionCounters", Since: 1},
	{Name: "kw_session_version_for", Params: []Param{i32("session"), i32("api_key"), outI32("out_version")},
		Call: "abi.SessionVersionFor", Since: 1},
}

// ExportNames lists the names of Exports, in order.
func ExportNames() []string {
	names := make([]string, len(Exports))
	for i, e := range Exports {
		names[i] = e.Name
	}
	return names
}

// Const is one named constant of kwire.h.
type Const struct {
	Name  string // without KW_: "ERR_ARG"
	Value int    // its value (for a string constant, 0)
	// C is the C spelling when it is not the decimal value: "(-1)", "(512 * 1024 * 1024)".
	C string
	// Str is the value of a string constant ("KWRT").
	Str string
	// Group names the constants a binding takes together: "status", "limit",
	// "compression", "records", "table", "rec", "hdr", "source", "session".
	Group string
	// Category is a status's name in kw_last_error_json ("arg").
	Category string
}

// CValue is the constant's value as kwire.h spells it.
func (c Const) CValue() string {
	switch {
	case c.Str != "":
		return `"` + c.Str + `"`
	case c.C != "":
		return c.C
	case c.Value < 0:
		return "(" + itoa(c.Value) + ")"
	}
	return itoa(c.Value)
}

func itoa(v int) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

// Consts is every constant of kwire.h but KW_ABI_VERSION (an expression of the two
// before it), in the order of kwire.h.
var Consts = []Const{
	{Name: "ABI_MAJOR", Value: Major, Group: "version"},
	{Name: "ABI_MINOR", Value: Minor, Group: "version"},

	{Name: "OK", Value: 0, Group: "status", Category: "ok"},
	{Name: "ERR_ARG", Value: -1, Group: "status", Category: "arg"},
	{Name: "ERR_DECODE", Value: -2, Group: "status", Category: "decode"},
	{Name: "ERR_ENCODE", Value: -3, Group: "status", Category: "encode"},
	{Name: "ERR_JSON", Value: -4, Group: "status", Category: "json"},
	{Name: "ERR_UNKNOWN_API", Value: -5, Group: "status", Category: "unknown_api"},
	{Name: "ERR_VERSION", Value: -6, Group: "status", Category: "version"},
	{Name: "ERR_TOO_LARGE", Value: -7, Group: "status", Category: "too_large"},
	{Name: "ERR_NOMEM", Value: -8, Group: "status", Category: "nomem"},
	{Name: "ERR_UNSUPPORTED", Value: -9, Group: "status", Category: "unsupported"},
	{Name: "ERR_INTERNAL", Value: -10, Group: "status", Category: "internal"},

	{Name: "MAX_ALLOC", Value: 512 << 20, C: "(512 * 1024 * 1024)", Group: "limit"},

	{Name: "COMPRESSION_NONE", Value: 0, Group: "compression"},
	{Name: "COMPRESSION_GZIP", Value: 1, Group: "compression"},
	{Name: "COMPRESSION_SNAPPY", Value: 2, Group: "compression"},
	{Name: "COMPRESSION_LZ4", Value: 3, Group: "compression"},
	{Name: "COMPRESSION_ZSTD", Value: 4, Group: "compression"},

	{Name: "RECORDS_SKIP_CRC", Value: 1, Group: "records"},
	{Name: "RECORDS_INPUT_SPANS", Value: 2, Group: "records"},
	{Name: "RECORDS_COLUMNS", Value: 4, Group: "records"},
	{Name: "RECORDS_HOST_GZIP", Value: 1 << 8, Group: "records"},
	{Name: "RECORDS_HOST_SNAPPY", Value: 1 << 9, Group: "records"},
	{Name: "RECORDS_HOST_LZ4", Value: 1 << 10, Group: "records"},
	{Name: "RECORDS_HOST_ZSTD", Value: 1 << 11, Group: "records"},

	{Name: "TABLE_MAGIC", Str: "KWRT", Group: "table"},
	{Name: "TABLE_LAYOUT", Value: 4, Group: "table"},
	{Name: "TABLE_RECORD_COUNT", Value: 8, Group: "table"},
	{Name: "TABLE_RECORD_STRIDE", Value: 12, Group: "table"},
	{Name: "TABLE_RECORDS_OFFSET", Value: 16, Group: "table"},
	{Name: "TABLE_HEADER_COUNT", Value: 20, Group: "table"},
	{Name: "TABLE_HEADER_STRIDE", Value: 24, Group: "table"},
	{Name: "TABLE_HEADERS_OFFSET", Value: 28, Group: "table"},
	{Name: "TABLE_SKIPPED_BYTES", Value: 32, Group: "table"},
	{Name: "TABLE_TOTAL_SIZE", Value: 36, Group: "table"},
	{Name: "TABLE_JSON_OFFSET", Value: 40, Group: "table"},
	{Name: "TABLE_JSON_LENGTH", Value: 44, Group: "table"},
	{Name: "TABLE_HEADER_SIZE_1", Value: 40, Group: "table"},
	{Name: "TABLE_HEADER_SIZE_2", Value: 48, Group: "table"},
	{Name: "TABLE_BATCH_COUNT", Value: 48, Group: "table"},
	{Name: "TABLE_BATCH_STRIDE", Value: 52, Group: "table"},
	{Name: "TABLE_BATCHES_OFFSET", Value: 56, Group: "table"},
	{Name: "TABLE_COL_OFFSETS", Value: 60, Group: "table"},
	{Name: "TABLE_COL_TIMESTAMPS", Value: 64, Group: "table"},
	{Name: "TABLE_COL_KEYS", Value: 68, Group: "table"},
	{Name: "TABLE_COL_VALUES", Value: 72, Group: "table"},
	{Name: "TABLE_COL_HEADER_INDEX", Value: 76, Group: "table"},
	{Name: "TABLE_COL_BATCH_INDEX", Value: 80, Group: "table"},
	{Name: "TABLE_COL_SOURCES", Value: 84, Group: "table"},
	{Name: "TABLE_COL_CONTROL_TYPES", Value: 88, Group: "table"},
	{Name: "TABLE_COL_SCHEMAS", Value: 92, Group: "table"},
	{Name: "TABLE_HEADER_SIZE_4", Value: 96, Group: "table"},

	{Name: "REC_OFFSET", Value: 0, Group: "rec"},
	{Name: "REC_TIMESTAMP", Value: 8, Group: "rec"},
	{Name: "REC_PRODUCER_ID", Value: 16, Group: "rec"},
	{Name: "REC_KEY_OFFSET", Value: 24, Group: "rec"},
	{Name: "REC_KEY_LENGTH", Value: 28, Group: "rec"},
	{Name: "REC_VALUE_OFFSET", Value: 32, Group: "rec"},
	{Name: "REC_VALUE_LENGTH", Value: 36, Group: "rec"},
	{Name: "REC_FIRST_HEADER", Value: 40, Group: "rec"},
	{Name: "REC_HEADER_COUNT", Value: 44, Group: "rec"},
	{Name: "REC_SEQUENCE", Value: 48, Group: "rec"},
	{Name: "REC_LEADER_EPOCH", Value: 52, Group: "rec"},
	{Name: "REC_PRODUCER_EPOCH", Value: 56, Group: "rec"},
	{Name: "REC_MAGIC", Value: 60, Group: "rec"},
	{Name: "REC_COMPRESSION", Value: 64, Group: "rec"},
	{Name: "REC_TIMESTAMP_TYPE", Value: 68, Group: "rec"},
	{Name: "REC_FLAGS", Value: 72, Group: "rec"},
	{Name: "REC_CONTROL_TYPE", Value: 76, Group: "rec"},
	{Name: "REC_SCHEMA_SOURCE", Value: 80, Group: "rec"},
	{Name: "REC_SCHEMA_ID", Value: 84, Group: "rec"},
	{Name: "REC_SCHEMA_VERSION", Value: 88, Group: "rec"},
	{Name: "REC_SOURCE", Value: 92, Group: "rec"},
	{Name: "REC_STRIDE", Value: 96, Group: "rec"},

	{Name: "HDR_KEY_OFFSET", Value: 0, Group: "hdr"},
	{Name: "HDR_KEY_LENGTH", Value: 4, Group: "hdr"},
	{Name: "HDR_VALUE_OFFSET", Value: 8, Group: "hdr"},
	{Name: "HDR_VALUE_LENGTH", Value: 12, Group: "hdr"},
	{Name: "HDR_STRIDE", Value: 16, Group: "hdr"},

	{Name: "RB_BASE_OFFSET", Value: 0, Group: "rb"},
	{Name: "RB_PRODUCER_ID", Value: 8, Group: "rb"},
	{Name: "RB_FIRST_RECORD", Value: 16, Group: "rb"},
	{Name: "RB_RECORD_COUNT", Value: 20, Group: "rb"},
	{Name: "RB_BASE_SEQUENCE", Value: 24, Group: "rb"},
	{Name: "RB_LEADER_EPOCH", Value: 28, Group: "rb"},
	{Name: "RB_PRODUCER_EPOCH", Value: 32, Group: "rb"},
	{Name: "RB_MAGIC", Value: 36, Group: "rb"},
	{Name: "RB_COMPRESSION", Value: 40, Group: "rb"},
	{Name: "RB_TIMESTAMP_TYPE", Value: 44, Group: "rb"},
	{Name: "RB_FLAGS", Value: 48, Group: "rb"},
	{Name: "RB_SOURCE", Value: 52, Group: "rb"},
	{Name: "RB_STRIDE", Value: 56, Group: "rb"},

	{Name: "SOURCE_TABLE", Value: 0, Group: "source"},
	{Name: "SOURCE_INPUT", Value: 1, Group: "source"},

	{Name: "BATCH_LIST_MAGIC", Str: "KWCB", Group: "batch"},
	{Name: "BATCH_LIST_COUNT", Value: 4, Group: "batch"},
	{Name: "BATCH_LIST_HEADER_SIZE", Value: 8, Group: "batch"},
	{Name: "BATCH_DATA_OFFSET", Value: 0, Group: "batch"},
	{Name: "BATCH_DATA_LENGTH", Value: 4, Group: "batch"},
	{Name: "BATCH_COMPRESSION", Value: 8, Group: "batch"},
	{Name: "BATCH_RECORD_COUNT", Value: 12, Group: "batch"},
	{Name: "BATCH_STRIDE", Value: 16, Group: "batch"},

	{Name: "SESSION_NO_RESPONSE", Value: 1, Group: "session"},
}

// Group returns the constants of one group, in order.
func Group(g string) []Const {
	var cs []Const
	for _, c := range Consts {
		if c.Group == g {
			cs = append(cs, c)
		}
	}
	return cs
}
