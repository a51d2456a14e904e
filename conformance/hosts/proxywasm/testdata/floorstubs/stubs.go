//go:build wasip1

// Package floorstubs holds the proxy-wasm callbacks the floor modules (floor,
// floorio) answer alike: each returns at once.
package floorstubs

//go:wasmexport proxy_abi_version_0_2_1
func abiVersion() {}

//go:wasmexport proxy_on_context_create
func onContextCreate(ctx, parent int32) {}

//go:wasmexport proxy_on_vm_start
func onVMStart(ctx, size int32) int32 { return 1 }

//go:wasmexport proxy_on_new_connection
func onNewConnection(ctx int32) int32 { return 0 }

//go:wasmexport proxy_on_downstream_connection_close
func onDownstreamClose(ctx, peer int32) {}

//go:wasmexport proxy_on_upstream_connection_close
func onUpstreamClose(ctx, peer int32) {}

//go:wasmexport proxy_on_done
func onDone(ctx int32) int32 { return 1 }

//go:wasmexport proxy_on_log
func onLog(ctx int32) {}

//go:wasmexport proxy_on_delete
func onDelete(ctx int32) {}

//go:wasmexport proxy_on_tick
func onTick(ctx int32) {}
