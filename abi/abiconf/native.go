package abiconf

import (
	"github.com/kwire/kwire/abi"
)

// Native is the abi package called directly, in process: the reference the wasm and C
// runs are compared with.
type Native struct{}

func callErr(err error) error {
	if err == nil {
		return nil
	}
	e := abi.AsError(err)
	return &CallError{Status: e.Status, Text: e.Text, JSON: e.AppendJSON(nil)}
}

func (Native) DecodeMessage(name string, version int16, in []byte) ([]byte, error) {
	out, err := abi.DecodeMessage(nil, name, int32(version), in)
	return out, callErr(err)
}

func (Native) EncodeMessage(name string, version int16, json []byte) ([]byte, error) {
	out, err := abi.EncodeMessage(nil, name, int32(version), json)
	return out, callErr(err)
}

func (Native) Catalogue() ([]byte, error) {
	out, err := abi.Catalogue(nil)
	return out, callErr(err)
}

func (Native) DecodeRequestFrame(frame []byte) ([]byte, error) {
	out, err := abi.DecodeRequestFrame(nil, frame)
	return out, callErr(err)
}

func (Native) EncodeRequestFrame(json []byte) ([]byte, error) {
	out, err := abi.EncodeRequestFrame(nil, json)
	return out, callErr(err)
}

func (Native) DecodeResponseFrame(frame []byte, key, version int16) ([]byte, error) {
	out, err := abi.DecodeResponseFrame(nil, frame, int32(key), int32(version))
	return out, callErr(err)
}

func (Native) EncodeResponseFrame(json []byte, key, version int16) ([]byte, error) {
	out, err := abi.EncodeResponseFrame(nil, json, int32(key), int32(version))
	return out, callErr(err)
}

func (Native) PeekRequestHeader(frame []byte) ([8]int32, error) {
	p, err := abi.PeekRequestHeader(frame)
	if err != nil {
		return [8]int32{}, callErr(err)
	}
	return [8]int32{p.FrameSize, p.APIKey, p.APIVersion, p.CorrelationID, p.HeaderVersion, p.ClientIDOffset, p.ClientIDLength, 0}, nil
}

func (Native) RecordsDecodeJSON(b []byte, flags, maxDecompressed int32) ([]byte, error) {
	out, err := abi.RecordsDecodeJSON(nil, b, flags, maxDecompressed)
	return out, callErr(err)
}

func (Native) RecordsDecodeTable(b []byte, flags, maxDecompressed int32) ([]byte, error) {
	out, err := abi.RecordsDecodeTable(nil, b, flags, maxDecompressed)
	return out, callErr(err)
}

func (Native) RecordsEncode(json []byte, compression int32) ([]byte, error) {
	out, err := abi.RecordsEncode(nil, json, compression)
	return out, callErr(err)
}
