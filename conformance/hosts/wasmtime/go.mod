module github.com/kwire/kwire/conformance/hosts/wasmtime

go 1.26

require github.com/kwire/kwire v0.0.0

require (
	github.com/bytecodealliance/wasmtime-go/v39 v39.0.1
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
)

replace github.com/kwire/kwire => ../../..

require github.com/kwire/kwire/conformance/hosts/wazero v0.0.0

require (
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/kwire/kwire/conformance/hosts/wazero => ../wazero
