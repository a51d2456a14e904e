// The few wasi_snapshot_preview1 functions kwire.wasm imports (the ones the Go runtime
// itself needs), written over plain JavaScript so the same code runs in Node and in
// browsers. The module does no I/O of its own: there are no files, no preopened
// directories, no environment; stdout and stderr go to a callback; clocks and random
// bytes come from `performance` and `crypto`.

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_INVAL = 28;

const CLOCK_REALTIME = 0;
const FILETYPE_CHARACTER_DEVICE = 2;
const EVENT_SIZE = 32;
const SUBSCRIPTION_SIZE = 48;

/** Thrown (through the module) when it calls proc_exit: the instance is finished. */
export class ProcExit extends Error {
  constructor(code) {
    super(`kwire.wasm called proc_exit(${code})`);
    this.name = 'ProcExit';
    this.code = code;
  }
}

/**
 * wasiImports returns the wasi_snapshot_preview1 import object.
 * @param {() => WebAssembly.Memory} memory the instance's memory (read at every call:
 *   the instance does not exist yet when the imports are built)
 * @param {(fd: number, text: string) => void} write receives what the module writes to
 *   stdout (fd 1) and stderr (fd 2)
 */
export function wasiImports(memory, write, env = {}) {
  const args = [utf8('kwire')];
  const environ = Object.entries(env).map(([k, v]) => utf8(`${k}=${v}`));
  const decoder = new TextDecoder();
  const dv = () => new DataView(memory().buffer);
  const bytes = () => new Uint8Array(memory().buffer);

  return {
    args_sizes_get(argcPtr, bufSizePtr) {
      const v = dv();
      v.setUint32(argcPtr, args.length, true);
      v.setUint32(bufSizePtr, args.reduce((n, a) => n + a.length, 0), true);
      return ERRNO_SUCCESS;
    },
    args_get(argvPtr, bufPtr) {
      const v = dv();
      const m = bytes();
      for (const a of args) {
        v.setUint32(argvPtr, bufPtr, true);
        argvPtr += 4;
        m.set(a, bufPtr);
        bufPtr += a.length;
      }
      return ERRNO_SUCCESS;
    },
    environ_sizes_get(countPtr, sizePtr) {
      const v = dv();
      v.setUint32(countPtr, environ.length, true);
      v.setUint32(sizePtr, environ.reduce((n, e) => n + e.length, 0), true);
      return ERRNO_SUCCESS;
    },
    environ_get(environPtr, bufPtr) {
      const v = dv();
      const m = bytes();
      for (const e of environ) {
        v.setUint32(environPtr, bufPtr, true);
        environPtr += 4;
        m.set(e, bufPtr);
        bufPtr += e.length;
      }
      return ERRNO_SUCCESS;
    },
    clock_time_get(id, _precision, outPtr) {
      let ms;
      if (id === CLOCK_REALTIME) ms = performance.timeOrigin + performance.now();
      else if (id >= 1 && id <= 3) ms = performance.now(); // monotonic, process and thread CPU time
      else return ERRNO_INVAL;
      dv().setBigUint64(outPtr, BigInt(Math.round(ms * 1e6)), true);
      return ERRNO_SUCCESS;
    },
    fd_write(fd, iovs, iovsLen, nwrittenPtr) {
      if (fd !== 1 && fd !== 2) return ERRNO_BADF;
      const v = dv();
      const m = bytes();
      let text = '';
      let n = 0;
      for (let i = 0; i < iovsLen; i++) {
        const p = v.getUint32(iovs + i * 8, true);
        const l = v.getUint32(iovs + i * 8 + 4, true);
        text += decoder.decode(m.subarray(p, p + l), { stream: true });
        n += l;
      }
      text += decoder.decode();
      v.setUint32(nwrittenPtr, n, true);
      write(fd, text);
      return ERRNO_SUCCESS;
    },
    fd_read(fd, _iovs, _iovsLen, nreadPtr) {
      if (fd !== 0) return ERRNO_BADF;
      dv().setUint32(nreadPtr, 0, true); // stdin is empty
      return ERRNO_SUCCESS;
    },
    fd_close(fd) {
      return fd <= 2 ? ERRNO_SUCCESS : ERRNO_BADF;
    },
    fd_fdstat_get(fd, ptr) {
      if (fd > 2) return ERRNO_BADF;
      const v = dv();
      v.setUint8(ptr, FILETYPE_CHARACTER_DEVICE);
      v.setUint8(ptr + 1, 0);
      v.setUint16(ptr + 2, 0, true); // flags
      v.setUint32(ptr + 4, 0, true);
      v.setBigUint64(ptr + 8, 0xffffffffffffffffn, true); // rights
      v.setBigUint64(ptr + 16, 0xffffffffffffffffn, true); // inherited rights
      return ERRNO_SUCCESS;
    },
    fd_fdstat_set_flags(fd) {
      return fd <= 2 ? ERRNO_SUCCESS : ERRNO_BADF;
    },
    // No preopened directories: the first fd the runtime probes is "bad", which ends
    // its scan.
    fd_prestat_get() {
      return ERRNO_BADF;
    },
    fd_prestat_dir_name() {
      return ERRNO_BADF;
    },
    random_get(ptr, len) {
      const m = bytes();
      for (let off = 0; off < len; off += 65536) {
        crypto.getRandomValues(m.subarray(ptr + off, ptr + Math.min(len, off + 65536)));
      }
      return ERRNO_SUCCESS;
    },
    // Every subscription fires at once: the library never sleeps inside a call, so the
    // scheduler only polls here when it has nothing to do, and it re-checks its timers.
    poll_oneoff(inPtr, outPtr, nsubs, neventsPtr) {
      const v = dv();
      for (let i = 0; i < nsubs; i++) {
        const s = inPtr + i * SUBSCRIPTION_SIZE;
        const e = outPtr + i * EVENT_SIZE;
        v.setBigUint64(e, v.getBigUint64(s, true), true); // userdata
        v.setUint16(e + 8, ERRNO_SUCCESS, true);
        v.setUint8(e + 10, v.getUint8(s + 8)); // event type = subscription tag
        for (let j = 11; j < EVENT_SIZE; j++) v.setUint8(e + j, 0);
      }
      v.setUint32(neventsPtr, nsubs, true);
      return ERRNO_SUCCESS;
    },
    sched_yield() {
      return ERRNO_SUCCESS;
    },
    proc_exit(code) {
      throw new ProcExit(code);
    },
  };
}

function utf8(s) {
  return new TextEncoder().encode(s + '\0');
}
