//go:build js

package zstd

import "syscall/js"

// cpuNanos is the CPU time (user and system) the JavaScript host's process
// has used, from Node's process.cpuUsage; 0 where there is no such function.
func cpuNanos() int64 {
	p := js.Global().Get("process")
	if p.IsUndefined() || p.Get("cpuUsage").IsUndefined() {
		return 0
	}
	u := p.Call("cpuUsage")
	return int64(u.Get("user").Float()+u.Get("system").Float()) * 1000
}
