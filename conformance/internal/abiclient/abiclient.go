// Package abiclient calls the kw_ functions of kwire's WebAssembly module
// (build/kwire.wasm, capi/kwire.h) through any WebAssembly runtime. A runtime provides a
// Machine (call an export, read and write linear memory); the Client does the rest: the
// scratch out-slots, the reused input buffer, kw_alloc and kw_free, error texts, and one
// method per kw_ function. The wazero and wasmtime conformance hosts are small adapters
// over it.
package abiclient

import (
	"encoding/binary"
	"fmt"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/abi/abiconf"
	"github.com/kwire/kwire/internal/abitable"
)

// Machine is what a WebAssembly runtime provides to the Client: one instantiated module,
// its _initialize already run.
type Machine interface {
	// Call calls the export name with i32 arguments and returns its i32 result. A trap,
	// or an export the module lacks, is an error.
	Call(name string, args ...uint32) (int32, error)
	// Read copies the n bytes at p out of linear memory; false when they are outside it.
	Read(p, n uint32) ([]byte, bool)
	// Write copies b into linear memory at p; false when it does not fit.
	Write(p uint32, b []byte) bool
	// Size is the size of linear memory in bytes.
	Size() uint32
}

// Exports lists the kw_ functions every build of the module exports, from the ABI
// table (internal/abitable) that also writes the shims and kwire.h.
func Exports() []string { return abitable.ExportNames() }

// scratchSize is the scratch buffer: out slot (0), length slot (4), a kw_peek_header
// (8..40).
const scratchSize = 40

// Client calls the kw_ functions of one instance. Not safe for concurrent use.
type Client struct {
	m       Machine
	scratch uint32
	in      uint32 // input buffer, grown with kw_alloc as needed
	inCap   uint32
}

// New makes a Client over m and allocates its scratch buffer.
func New(m Machine) (*Client, error) {
	c := &Client{m: m}
	if c.scratch = c.Alloc(scratchSize); c.scratch == 0 {
		return nil, fmt.Errorf("kw_alloc(%d) failed: %s", scratchSize, c.LastError())
	}
	return c, nil
}

// ABI returns c itself: a host's instance type embeds the Client and hands it over
// through this method.
func (c *Client) ABI() *Client { return c }

// Call calls a kw_ function with raw i32 arguments and returns its i32 result. A trap
// is returned as an error.
func (c *Client) Call(name string, args ...uint32) (int32, error) { return c.m.Call(name, args...) }

// MustCall is Call, with a trap turned into a panic.
func (c *Client) MustCall(name string, args ...uint32) int32 {
	r, err := c.m.Call(name, args...)
	if err != nil {
		panic(fmt.Sprintf("%s trapped: %v", name, err))
	}
	return r
}

// MemorySize is the size of linear memory in bytes.
func (c *Client) MemorySize() uint32 { return c.m.Size() }

// Read copies n bytes at p out of linear memory.
func (c *Client) Read(p, n uint32) ([]byte, bool) { return c.m.Read(p, n) }

// Write copies b into linear memory at p.
func (c *Client) Write(p uint32, b []byte) bool { return c.m.Write(p, b) }

// U32 reads the little-endian uint32 at p; outside memory it panics.
func (c *Client) U32(p uint32) uint32 {
	b, ok := c.m.Read(p, 4)
	if !ok {
		panic(fmt.Sprintf("read outside memory at %d", p))
	}
	return binary.LittleEndian.Uint32(b)
}

// Scratch is the address of the 40-byte scratch buffer (out slots at 0 and 4, a
// kw_peek_header at 8).
func (c *Client) Scratch() uint32 { return c.scratch }

// Version is kw_abi_version.
func (c *Client) Version() int32 { return c.MustCall("kw_abi_version") }

// Alloc is kw_alloc.
func (c *Client) Alloc(n int32) uint32 { return uint32(c.MustCall("kw_alloc", uint32(n))) }

// Free is kw_free.
func (c *Client) Free(p uint32) int32 { return c.MustCall("kw_free", p) }

func (c *Client) lastErr(fn string) []byte {
	c.MustCall(fn, c.scratch, c.scratch+4)
	p, n := c.U32(c.scratch), c.U32(c.scratch+4)
	if n == 0 {
		return nil
	}
	b, _ := c.m.Read(p, n)
	return b
}

// LastError is kw_last_error.
func (c *Client) LastError() string { return string(c.lastErr("kw_last_error")) }

// LastErrorJSON is kw_last_error_json.
func (c *Client) LastErrorJSON() []byte { return c.lastErr("kw_last_error_json") }

// Put copies parts, one after the other, into the instance's input buffer (grown with
// kw_alloc as needed) and returns its address.
func (c *Client) Put(parts ...[]byte) (uint32, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if uint32(n) > c.inCap || c.in == 0 {
		if c.in != 0 {
			c.Free(c.in)
		}
		size := max(uint32(n), 4096)
		if c.in = c.Alloc(int32(size)); c.in == 0 {
			c.inCap = 0
			return 0, c.err(abi.StatusNoMem)
		}
		c.inCap = size
	}
	at := c.in
	for _, p := range parts {
		if !c.m.Write(at, p) {
			return 0, fmt.Errorf("write outside memory")
		}
		at += uint32(len(p))
	}
	return c.in, nil
}

func (c *Client) err(st int32) error {
	return &abiconf.CallError{Status: st, Text: c.LastError(), JSON: c.LastErrorJSON()}
}

// takeOut copies the result of a call out of the instance and frees it.
func (c *Client) takeOut(st int32) ([]byte, error) {
	if st != 0 {
		return nil, c.err(st)
	}
	p, n := c.U32(c.scratch), c.U32(c.scratch+4)
	out, ok := c.m.Read(p, n)
	if !ok {
		return nil, fmt.Errorf("output [%d,+%d) outside memory", p, n)
	}
	if st := c.Free(p); st != 0 {
		return nil, fmt.Errorf("kw_free of an output: status %d: %s", st, c.LastError())
	}
	return out, nil
}

// outCall runs fn(args..., out, out_len) and takes its output.
func (c *Client) outCall(fn string, args ...uint32) ([]byte, error) {
	return c.takeOut(c.MustCall(fn, append(args, c.scratch, c.scratch+4)...))
}

// call2 runs a kw_ function of the form f(a, a_len, extra..., b, b_len, out, out_len)
// (a name and a body, or JSON and a table), both inputs in the one input buffer.
func (c *Client) call2(fn string, a []byte, extra uint32, hasExtra bool, b []byte) ([]byte, error) {
	p, err := c.Put(a, b)
	if err != nil {
		return nil, err
	}
	al := uint32(len(a))
	args := []uint32{p, al}
	if hasExtra {
		args = append(args, extra)
	}
	return c.outCall(fn, append(args, p+al, uint32(len(b)))...)
}

// call1 runs a kw_ function of the form f(in, in_len, extra..., out, out_len).
func (c *Client) call1(fn string, b []byte, extra ...uint32) ([]byte, error) {
	p, err := c.Put(b)
	if err != nil {
		return nil, err
	}
	return c.outCall(fn, append([]uint32{p, uint32(len(b))}, extra...)...)
}

func i16(v int16) uint32 { return uint32(int32(v)) }

// DecodeMessage is kw_decode_message.
func (c *Client) DecodeMessage(name string, version int16, b []byte) ([]byte, error) {
	return c.call2("kw_decode_message", []byte(name), i16(version), true, b)
}

// EncodeMessage is kw_encode_message.
func (c *Client) EncodeMessage(name string, version int16, json []byte) ([]byte, error) {
	return c.call2("kw_encode_message", []byte(name), i16(version), true, json)
}

// EncodeRequestFrameRecords is kw_encode_request_frame_records.
func (c *Client) EncodeRequestFrameRecords(json, table []byte) ([]byte, error) {
	return c.call2("kw_encode_request_frame_records", json, 0, false, table)
}

// RulesCheck is kw_rules_check.
func (c *Client) RulesCheck(rules, frame []byte, errorCode int32) ([]byte, error) {
	p, err := c.Put(rules, frame)
	if err != nil {
		return nil, err
	}
	rl := uint32(len(rules))
	return c.outCall("kw_rules_check", p, rl, p+rl, uint32(len(frame)), uint32(errorCode))
}

// Catalogue is kw_api_catalogue.
func (c *Client) Catalogue() ([]byte, error) { return c.outCall("kw_api_catalogue") }

// RuntimeStats is kw_runtime_stats: the module's runtime figures as JSON.
func (c *Client) RuntimeStats() ([]byte, error) { return c.outCall("kw_runtime_stats") }

// DecodeRequestFrame is kw_decode_request_frame.
func (c *Client) DecodeRequestFrame(frame []byte) ([]byte, error) {
	return c.call1("kw_decode_request_frame", frame)
}

// EncodeRequestFrame is kw_encode_request_frame.
func (c *Client) EncodeRequestFrame(json []byte) ([]byte, error) {
	return c.call1("kw_encode_request_frame", json)
}

// DecodeResponseFrame is kw_decode_response_frame.
func (c *Client) DecodeResponseFrame(frame []byte, key, version int16) ([]byte, error) {
	return c.call1("kw_decode_response_frame", frame, i16(key), i16(version))
}

// EncodeResponseFrame is kw_encode_response_frame.
func (c *Client) EncodeResponseFrame(json []byte, key, version int16) ([]byte, error) {
	return c.call1("kw_encode_response_frame", json, i16(key), i16(version))
}

// RecordsDecodeJSON is kw_records_decode_json.
func (c *Client) RecordsDecodeJSON(b []byte, flags, maxDecompressed int32) ([]byte, error) {
	return c.call1("kw_records_decode_json", b, uint32(flags), uint32(maxDecompressed))
}

// RecordsDecodeTable is kw_records_decode_table.
func (c *Client) RecordsDecodeTable(b []byte, flags, maxDecompressed int32) ([]byte, error) {
	return c.call1("kw_records_decode_table", b, uint32(flags), uint32(maxDecompressed))
}

// RecordsEncode is kw_records_encode.
func (c *Client) RecordsEncode(json []byte, compression int32) ([]byte, error) {
	return c.call1("kw_records_encode", json, uint32(compression))
}

// DecodeRequestFrameRecords is kw_decode_request_frame_records: a layout-2 record table,
// or layout 3 with abi.FlagInputSpans.
func (c *Client) DecodeRequestFrameRecords(frame []byte, flags, maxDecompressed int32) ([]byte, error) {
	return c.call1("kw_decode_request_frame_records", frame, uint32(flags), uint32(maxDecompressed))
}

// DecodeResponseFrameRecords is kw_decode_response_frame_records.
func (c *Client) DecodeResponseFrameRecords(frame []byte, key, version int16, flags, maxDecompressed int32) ([]byte, error) {
	return c.call1("kw_decode_response_frame_records", frame, i16(key), i16(version), uint32(flags), uint32(maxDecompressed))
}

// PeekRequestHeader is kw_peek_request_header; it returns the 8 int32 of kw_peek_header.
func (c *Client) PeekRequestHeader(frame []byte) ([8]int32, error) {
	var out [8]int32
	p, err := c.Put(frame)
	if err != nil {
		return out, err
	}
	if st := c.MustCall("kw_peek_request_header", p, uint32(len(frame)), c.scratch+8); st != 0 {
		return out, c.err(st)
	}
	b, _ := c.m.Read(c.scratch+8, 32)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// HeaderVersions is kw_header_versions.
func (c *Client) HeaderVersions(key, version int16) (int32, int32, error) {
	if st := c.MustCall("kw_header_versions", i16(key), i16(version), c.scratch, c.scratch+4); st != 0 {
		return 0, 0, c.err(st)
	}
	return int32(c.U32(c.scratch)), int32(c.U32(c.scratch + 4)), nil
}
