// A proxy-wasm host on V8 (Node's WebAssembly), for measurements: Envoy runs Wasm
// filters on V8 by default, and the harness (host.go) runs them on wazero. It
// provides what kwire-envoy.wasm imports, with the harness's semantics where the
// module depends on them:
//   - proxy_get_buffer_bytes copies out through proxy_on_memory_allocate;
//   - proxy_set_buffer_bytes follows Envoy's Buffer::copyFrom (start 0 drains size
//     bytes and prepends the data; start >= length appends);
//   - a downstream buffer the callback pauses is kept and delivered again, with the
//     bytes that arrive next, on the next callback.
//
// The module's WASI imports come from the JavaScript binding's own layer
// (bindings/js/src/wasi.js), not from node:wasi. In Node 20 and 22 node:wasi's functions
// are V8 fast API calls, and its poll_oneoff allocates through an allocator that reports
// to V8 (AdjustAmountOfExternalAllocatedMemory); when the process holds much external
// memory (ArrayBuffers, the memories of several instances) that report starts a garbage
// collection inside the fast call, which V8 does not support: Node 20 then aborts in
// WASI::~WASI ("current_uvwasi_memory_ == 0", node_wasi.cc) or in the deoptimizer, or
// segfaults; Node 22 segfaults; Node 24 was not seen to crash. The module's Go runtime
// calls poll_oneoff after its garbage collections (fetch_endpoints "hold" makes them
// often), so a process with several instances crashed now and then, keeping the WASI
// objects alive or not. Like wazero's in the harness, this poll_oneoff does not sleep.
import { wasiImports } from '../../../../bindings/js/src/wasi.js';

const OK = 0, NOT_FOUND = 1, BAD_ARGUMENT = 2;
export const DOWNSTREAM = 2, UPSTREAM = 3;
const PLUGIN_CONFIG = 7;
const CONTINUE = 0;

// newVM instantiates the module with one plugin (root context) configured with
// config, and returns a way to open streams (connections) on it.
export function newVM(wasmModule, config) {
  let exports, mem;
  const buffers = { [PLUGIN_CONFIG]: new TextEncoder().encode(config) };
  let active = -1; // the data buffer of the running callback
  const stats = { copiedIn: 0, callbacks: 0, vmNanos: 0n, metrics: [] };
  let closeRequested = false;
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
      if (id === DOWNSTREAM || id === UPSTREAM) stats.copiedIn += part.length;
      const ptr = part.length === 0 ? 0 : exports.proxy_on_memory_allocate(part.length) >>> 0;
      if (part.length > 0) bytes().set(part, ptr);
      view().setUint32(retPtr, ptr, true);
      view().setUint32(retSize, part.length, true);
      return OK;
    },
    proxy_set_buffer_bytes(id, start, size, dataPtr, dataSize) {
      const data = bufferOf(id);
      if (data === undefined) return NOT_FOUND;
      if (id === PLUGIN_CONFIG) return BAD_ARGUMENT;
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
      stats.metrics.push(0n);
      view().setUint32(retId, stats.metrics.length, true);
      return OK;
    },
    proxy_increment_metric(id, delta) {
      if (id < 1 || id > stats.metrics.length) return NOT_FOUND;
      stats.metrics[id - 1] += delta;
      return OK;
    },
    proxy_record_metric(id, value) {
      if (id < 1 || id > stats.metrics.length) return NOT_FOUND;
      stats.metrics[id - 1] = value;
      return OK;
    },
    proxy_get_current_time_nanoseconds(ret) {
      view().setBigUint64(ret, process.hrtime.bigint(), true);
      return OK;
    },
    proxy_set_tick_period_milliseconds: () => OK,
    proxy_close_stream() { closeRequested = true; return OK; },
    proxy_set_effective_context: () => OK, // this host has no ticks, where the module uses it
  };
  const wasi = wasiImports(() => mem, (fd, text) => (fd === 1 ? process.stdout : process.stderr).write(text));
  const instance = new WebAssembly.Instance(wasmModule, { env, wasi_snapshot_preview1: wasi });
  exports = instance.exports;
  mem = exports.memory;
  exports._initialize();
  const root = 1;
  let nextID = 2;
  exports.proxy_on_context_create(root, 0);
  if (exports.proxy_on_vm_start(root, 0) === 0) throw new Error('proxy_on_vm_start failed');
  if (exports.proxy_on_configure(root, buffers[PLUGIN_CONFIG].length) === 0) throw new Error('proxy_on_configure refused ' + config);

  // newStream opens a connection's context; deliver hands one direction's bytes to
  // its callback and returns what goes on (null: the callback paused, nothing goes).
  function newStream() {
    const id = nextID++;
    exports.proxy_on_context_create(id, root);
    exports.proxy_on_new_connection(id);
    const held = { [DOWNSTREAM]: null, [UPSTREAM]: null };
    const s = {
      closed: false,
      deliver(dir, data) {
        let buf = data;
        if (held[dir]) {
          buf = new Uint8Array(held[dir].length + data.length);
          buf.set(held[dir]); buf.set(data, held[dir].length);
        }
        buffers[dir] = buf;
        active = dir;
        closeRequested = false;
        const t0 = process.hrtime.bigint();
        const r = (dir === DOWNSTREAM ? exports.proxy_on_downstream_data : exports.proxy_on_upstream_data)(id, buf.length, 0);
        stats.vmNanos += process.hrtime.bigint() - t0;
        active = -1;
        stats.callbacks++;
        if (closeRequested) s.closed = true;
        if (r === CONTINUE) {
          held[dir] = null;
          return buffers[dir];
        }
        held[dir] = buffers[dir];
        return null;
      },
      close() {
        exports.proxy_on_downstream_connection_close(id, 1);
        exports.proxy_on_upstream_connection_close(id, 1);
        exports.proxy_on_done(id);
        exports.proxy_on_delete(id);
      },
    };
    return s;
  }
  return { stats, newStream };
}
