module github.com/kwire/kwire/cmd/kwire

go 1.26.0

require (
	github.com/kwire/kwire v0.1.0
	github.com/kwire/kwire/conformance/hosts/proxywasm v0.1.0
	github.com/tetratelabs/wazero v1.12.0
)

require (
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
)

require (
	github.com/google/gopacket v1.1.19
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	golang.org/x/net v0.0.0-20190620200207-3b0461eec859 // indirect
	golang.org/x/sys v0.44.0 // indirect
)
