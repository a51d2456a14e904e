//go:build wasm && !kwire_rules

package abi

// RulesCheck is kw_rules_check in a WebAssembly build without the rule engine (the
// default kwire.wasm: the engine and the error responses it builds would take the
// module over its size budget). It reports StatusUnsupported and says where the
// export is: libkwire (C, Rust), kwire-envoy.wasm's "rules" key, and a module built
// with -tags kwire_rules.
func RulesCheck(dst, rulesJSON, frame []byte, errorCode int32) ([]byte, error) {
	return nil, newErr(StatusUnsupported, "kwire: kw_rules_check is not in this build of kwire.wasm (kept out for the module's size budget): "+
		"libkwire has it, and a module built with -tags kwire_rules; the Envoy filter applies rules with its \"rules\" key")
}
