// Command envoy is kwire's proxy-wasm network filter: the Kafka filter of package
// kafkafilter behind a small guest-side implementation of the proxy-wasm ABI 0.2.1,
// built for GOOS=wasip1 as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/kwire-envoy.wasm ./envoy
//
// It exports proxy_abi_version_0_2_1, proxy_on_memory_allocate and the context,
// configuration, connection, data, close, done, log, delete and tick callbacks, and
// imports from "env" only host functions the proxy-wasm 0.2.1 specification
// defines, with its signatures (see proxywasm_wasip1.go). Go's wasip1 runtime also
// imports a few wasi_snapshot_preview1 functions (clock, random, fd_write, args and
// environment, poll_oneoff, proc_exit, sched_yield); examples/envoy/README.md lists
// them.
package main

func main() {}
