// A proxy-wasm host on V8 (Node's WebAssembly), for one measurement: kwire-envoy.wasm's
// data callbacks alone, without sockets, as BenchmarkModuleCallbacks times them on
// wazero. Envoy runs Wasm filters on V8 by default, so this is the module's cost in the
// runtime most deployments use.
//
//   node callbacks.mjs MODULE.wasm WORKLOADS.json
//
// WORKLOADS.json lists {name, config, request, response, ops}: the plugin configuration
// and the paths of one request frame and one response frame (written by the Go test
// TestModuleCallbacksV8). Each op delivers the request downstream and the response
// upstream in 64 KiB reads, as the Go benchmark does. It prints one JSON line per
// workload: {"name", "nsPerOp", "callbacks", "bytesCopiedIn"}.
//
// The host follows the harness (host.go) where the module needs it: buffers copied
// out through proxy_on_memory_allocate, set_buffer_bytes with Envoy's copyFrom rules
// (start 0 drains size bytes and prepends), a paused downstream buffer kept and
// delivered again with the next bytes.
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const [modulePath, workloadsPath] = process.argv.slice(2);
const workloads = JSON.parse(readFileSync(workloadsPath, 'utf8'));
const wasmModule = new WebAssembly.Module(readFileSync(modulePath));

const OK = 0, NOT_FOUND = 1, BAD_ARGUMENT = 2;
const DOWNSTREAM = 2, UPSTREAM = 3, PLUGIN_CONFIG = 7;
const CONTINUE = 0;
const READ = 64 << 10;

// Node's WASI objects are kept alive to the end: finalizing one while others run
// trips an assertion in Node 20.
const keep = [];

function newPlugin(config) {
  let exports, mem;
  const buffers = { [PLUGIN_CONFIG]: new TextEncoder().encode(config) };
  let active = -1; // the data buffer of the running callback
  const state = { copiedIn: 0, callbacks: 0, closed: false, metrics: [] };
  // Views of the module's memory, made again only when it grows (growth detaches the
  // old buffer): a host that made them per call would time itself.
  let memBuf = null, dv, u8;
  const refresh = () => { memBuf = mem.buffer; dv = new DataView(memBuf); u8 = new Uint8Array(memBuf); };
  const view = () => { if (mem.buffer !== memBuf) refresh(); return dv; };
  const bytes = () => { if (mem.buffer !== memBuf) refresh(); return u8; };
  const bufferOf = (id) => {
    if (id === DOWNSTREAM || id === UPSTREAM) return id === active ? buffers[id] : undefined;
    return buffers[id];
  };
  const env = {
    proxy_log: () => OK,
    proxy_get_buffer_bytes(id, start, max, retPtr, retSize) {
      const data = bufferOf(id);
      if (data === undefined) return NOT_FOUND;
      start >>>= 0; max >>>= 0;
      if (start > data.length) return BAD_ARGUMENT;
      const part = data.subarray(start, Math.min(start + max, data.length));
      if (id === DOWNSTREAM || id === UPSTREAM) state.copiedIn += part.length;
      const ptr = part.length === 0 ? 0 : exports.proxy_on_memory_allocate(part.length) >>> 0;
      if (part.length > 0) bytes().set(part, ptr);
      view().setUint32(retPtr, ptr, true);
      view().setUint32(retSize, part.length, true);
      return OK;
    },
    proxy_set_buffer_bytes(id, start, size, dataPtr, dataSize) {
      const data = bufferOf(id);
      if (data === undefined || id === PLUGIN_CONFIG) return data === undefined ? NOT_FOUND : BAD_ARGUMENT;
      start >>>= 0; size >>>= 0;
      const val = bytes().slice(dataPtr, dataPtr + dataSize);
      let next;
      if (start === 0) {
        const rest = data.subarray(Math.min(size, data.length));
        next = new Uint8Array(val.length + rest.length);
        next.set(val); next.set(rest, val.length);
      } else if (start >= data.length) {
        next = new Uint8Array(data.length + val.length);
        next.set(data); next.set(val, data.length);
      } else {
        return BAD_ARGUMENT;
      }
      buffers[id] = next;
      return OK;
    },
    proxy_define_metric(kind, namePtr, nameLen, retId) {
      state.metrics.push(0n);
      view().setUint32(retId, state.metrics.length, true);
      return OK;
    },
    proxy_increment_metric(id, delta) {
      if (id < 1 || id > state.metrics.length) return NOT_FOUND;
      state.metrics[id - 1] += delta;
      return OK;
    },
    proxy_record_metric(id, value) {
      if (id < 1 || id > state.metrics.length) return NOT_FOUND;
      state.metrics[id - 1] = value;
      return OK;
    },
    proxy_get_current_time_nanoseconds(ret) {
      view().setBigUint64(ret, process.hrtime.bigint(), true);
      return OK;
    },
    proxy_set_tick_period_milliseconds: () => OK,
    proxy_close_stream() { state.closed = true; return OK; },
  };
  const wasi = new WASI({ version: 'preview1', args: [], env: {} });
  keep.push(wasi);
  const instance = new WebAssembly.Instance(wasmModule, { env, wasi_snapshot_preview1: wasi.wasiImport });
  exports = instance.exports;
  mem = exports.memory;
  wasi.initialize(instance);
  const root = 1, stream = 2;
  exports.proxy_on_context_create(root, 0);
  if (exports.proxy_on_vm_start(root, 0) === 0) throw new Error('proxy_on_vm_start failed');
  if (exports.proxy_on_configure(root, buffers[PLUGIN_CONFIG].length) === 0) throw new Error('proxy_on_configure refused ' + config);
  exports.proxy_on_context_create(stream, root);
  exports.proxy_on_new_connection(stream);

  // deliver hands data to a direction's callback and returns what goes on.
  const held = { [DOWNSTREAM]: null, [UPSTREAM]: null };
  function deliver(id, data) {
    let buf = data;
    if (held[id]) {
      buf = new Uint8Array(held[id].length + data.length);
      buf.set(held[id]); buf.set(data, held[id].length);
    }
    buffers[id] = buf;
    active = id;
    const r = (id === DOWNSTREAM ? exports.proxy_on_downstream_data : exports.proxy_on_upstream_data)(stream, buf.length, 0);
    active = -1;
    state.callbacks++;
    if (r === CONTINUE) {
      held[id] = null;
      return buffers[id];
    }
    held[id] = buffers[id];
    return null;
  }
  return { state, deliver };
}

for (const w of workloads) {
  const reads = (path) => {
    const b = new Uint8Array(readFileSync(path));
    const out = [];
    for (let off = 0; off < b.length; off += READ) out.push(b.subarray(off, off + READ));
    return out;
  };
  const req = reads(w.request), resp = reads(w.response);
  const p = newPlugin(w.config);
  const op = () => {
    for (const r of req) p.deliver(DOWNSTREAM, r);
    for (const r of resp) p.deliver(UPSTREAM, r);
  };
  for (let i = 0; i < Math.min(200, w.ops); i++) op(); // warm up: V8 tiers the code up
  if (p.state.closed) throw new Error(w.name + ': the module closed the connection');
  const calls0 = p.state.callbacks, copied0 = p.state.copiedIn;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < w.ops; i++) op();
  const ns = Number(process.hrtime.bigint() - t0);
  console.log(JSON.stringify({
    name: w.name, nsPerOp: ns / w.ops,
    callbacks: (p.state.callbacks - calls0) / w.ops, bytesCopiedIn: (p.state.copiedIn - copied0) / w.ops,
  }));
}
process.exit(0);
