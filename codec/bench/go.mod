module github.com/kwire/kwire/codec/bench

go 1.26.0

require github.com/kwire/kwire v0.0.0

require github.com/twmb/franz-go/pkg/kmsg v1.15.1

replace github.com/kwire/kwire => ../..
