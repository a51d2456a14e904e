module github.com/kwire/kwire/conformance/hosts/proxywasm

go 1.26.0

replace github.com/kwire/kwire => ../../..

require (
	github.com/kwire/kwire v0.1.0
	github.com/tetratelabs/wazero v1.12.0
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kadm v1.20.0
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
)

require (
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	golang.org/x/sys v0.44.0 // indirect
)
