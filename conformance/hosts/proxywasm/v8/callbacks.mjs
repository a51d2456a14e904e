// kwire-envoy.wasm's data callbacks alone, without sockets, on V8 (host.mjs), as
// BenchmarkModuleCallbacks times them on wazero.
//
//   node callbacks.mjs MODULE.wasm WORKLOADS.json
//
// WORKLOADS.json lists {name, config, request, response, ops}: the plugin configuration
// and the paths of one request frame and one response frame (written by the Go test
// TestModuleCallbacksV8). Each op delivers the request downstream and the response
// upstream in 64 KiB reads, as the Go benchmark does. It prints one JSON line per
// workload: {"name", "nsPerOp", "callbacks", "bytesCopiedIn"}.
import { readFileSync } from 'node:fs';
import { newVM, DOWNSTREAM, UPSTREAM } from './host.mjs';

const [modulePath, workloadsPath] = process.argv.slice(2);
const workloads = JSON.parse(readFileSync(workloadsPath, 'utf8'));
const wasmModule = new WebAssembly.Module(readFileSync(modulePath));
const READ = 64 << 10;

for (const w of workloads) {
  const reads = (path) => {
    const b = new Uint8Array(readFileSync(path));
    const out = [];
    for (let off = 0; off < b.length; off += READ) out.push(b.subarray(off, off + READ));
    return out;
  };
  const req = reads(w.request), resp = reads(w.response);
  const vm = newVM(wasmModule, w.config);
  const s = vm.newStream();
  const op = () => {
    for (const r of req) s.deliver(DOWNSTREAM, r);
    for (const r of resp) s.deliver(UPSTREAM, r);
  };
  for (let i = 0; i < Math.min(200, w.ops); i++) op(); // warm up: V8 tiers the code up
  if (s.closed) throw new Error(w.name + ': the module closed the connection');
  const calls0 = vm.stats.callbacks, copied0 = vm.stats.copiedIn;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < w.ops; i++) op();
  const ns = Number(process.hrtime.bigint() - t0);
  console.log(JSON.stringify({
    name: w.name, nsPerOp: ns / w.ops,
    callbacks: (vm.stats.callbacks - calls0) / w.ops, bytesCopiedIn: (vm.stats.copiedIn - copied0) / w.ops,
  }));
}
process.exit(0);
