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
