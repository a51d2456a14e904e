// Many instances of kwire-envoy.wasm in one Node process (host.mjs), as
// TestV8ManyInstances runs it:
//
//   node many.mjs MODULE.wasm CONFIG REQUEST RESPONSE INSTANCES OPS
//
// Each instance opens one stream and delivers the request downstream and the
// response upstream OPS times in 64 KiB reads; four instances are alive at a time,
// the others are dropped for the collector. Meanwhile the process keeps about 64 MiB
// of ArrayBuffers churning, so that the engine's external-memory accounting asks for
// garbage collections often, as a proxy's socket buffers do. It exits 0 after
// printing {"instances", "ops", "callbacks"}; any crash of the process fails the test.
import { readFileSync } from 'node:fs';
import { newVM, DOWNSTREAM, UPSTREAM } from './host.mjs';

const [modulePath, config, reqPath, respPath, instances, ops] = process.argv.slice(2);
const wasmModule = new WebAssembly.Module(readFileSync(modulePath));
const READ = 64 << 10;
const reads = (path) => {
  const b = new Uint8Array(readFileSync(path));
  const out = [];
  for (let off = 0; off < b.length; off += READ) out.push(b.subarray(off, off + READ));
  return out;
};
const req = reads(reqPath), resp = reads(respPath);

const live = [];
let junk = [];
let callbacks = 0;
for (let i = 0; i < Number(instances); i++) {
  const vm = newVM(wasmModule, config);
  const s = vm.newStream();
  for (let j = 0; j < Number(ops); j++) {
    for (const r of req) { s.deliver(DOWNSTREAM, r); junk.push(new ArrayBuffer(1 << 20)); }
    for (const r of resp) { s.deliver(UPSTREAM, r); junk.push(new ArrayBuffer(1 << 20)); }
    if (junk.length >= 64) junk = [];
  }
  if (s.closed) throw new Error(`instance ${i}: the module closed the connection`);
  callbacks += vm.stats.callbacks;
  live.push(vm);
  if (live.length > 4) live.shift();
}
console.log(JSON.stringify({ instances: Number(instances), ops: Number(ops), callbacks }));
