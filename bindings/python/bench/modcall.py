"""A bare host for kwire.wasm, for the benchmarks only: one wasmtime instance of the
module and kw_decode_response_frame_records called through wasmtime-py's public API
(capi/kwire.h's ABI: kw_alloc, the call, kw_free), so that the module's time can be
measured apart from the binding's Python side, and the module can be run under a
profiling engine (wasmtime's perfmap or jitdump) that the binding does not offer.

The compiled code is the binding's own when it is at hand (kwire's compiled-code cache,
Cranelift), so the call timed here runs the same machine code as kwire.Kwire's; a
profiling engine compiles the module itself.
"""

import ctypes
import os
import struct
from typing import Callable, Optional, Tuple

import wasmtime

import kwire

_SLOTS = struct.Struct("<Ii")


def default_flags(version: int) -> int:
    """The records flags decode_fetch passes to a module of that ABI version."""
    minor = version & 0xFFFF
    return (kwire.RECORDS_INPUT_SPANS if minor >= 2 else 0) | (kwire.RECORDS_COLUMNS if minor >= 4 else 0)


def layout_of(flags: int) -> str:
    """What table decode_fetch gets with those flags."""
    if flags & kwire.RECORDS_COLUMNS:
        return "a layout-4 table (columns)" + (", uncompressed records left in the frame" if flags & kwire.RECORDS_INPUT_SPANS else "")
    return "a layout-3 table, uncompressed records left in the frame" if flags & kwire.RECORDS_INPUT_SPANS else "layout 2"


def wasm_file() -> str:
    """The kwire.wasm the installed binding loads ($KWIRE_WASM, else the package's)."""
    env = os.environ.get("KWIRE_WASM")
    if env:
        return env
    return os.path.join(os.path.dirname(kwire.__file__), "kwire.wasm")


def load(profiler: Optional[str] = None, wasm: Optional[str] = None) -> Tuple[wasmtime.Engine, wasmtime.Module, str]:
    """An engine and the compiled module, and a phrase saying where the code came from.

    Without profiler and wasm: the binding's compiled module when it is Cranelift's
    (kwire._runtime, not public: if it moved, the module is compiled here, the same way).
    With profiler ("perfmap", "jitdump"): a new engine with that profiler compiles
    wasm (default: the binding's kwire.wasm)."""
    if profiler is None and wasm is None:
        try:
            from kwire import _runtime

            c = _runtime.compiled()
            if c.compiler == "cranelift":
                return c.engine, c.module, "the binding's compiled code (Cranelift)"
        except Exception:  # noqa: BLE001 - any change of the binding's internals: compile below
            pass
    cfg = wasmtime.Config()
    if profiler is not None:
        cfg.profiler = profiler
    engine = wasmtime.Engine(cfg)
    path = wasm or wasm_file()
    how = f"compiled here with Cranelift from {os.path.basename(path)}" + (f", profiler {profiler}" if profiler else "")
    return engine, wasmtime.Module.from_file(engine, path), how


def _caller(store: wasmtime.Store, func: wasmtime.Func) -> Tuple[Callable[..., int], str]:
    """A function calling func (i32 parameters, one i32 result) with the least host work:
    wasmtime's unchecked call with prepared slots, as the binding calls (wasmtime-py's
    Func.__call__ builds the function's type on every call: tens of us here), where
    wasmtime-py exposes it; else the checked call. Also says which."""
    checked = lambda *args: func(store, *args)  # noqa: E731
    try:
        from wasmtime import _ffi as ffi

        n = len(func.type(store).params)
        slots = (ffi.wasmtime_val_raw_t * max(n, 1))()
        fref = ctypes.byref(func._func)
        ctx = store._context

        def call(*args: int) -> int:
            for i, a in enumerate(args):
                slots[i].i32 = a
            trap = ctypes.POINTER(ffi.wasm_trap_t)()
            err = ffi.wasmtime_func_call_unchecked(ctx(), fref, slots, len(slots), ctypes.byref(trap))
            if err or trap:
                raise RuntimeError("kwire.wasm: the call failed or trapped")
            return int(slots[0].i32)

        return call, "unchecked call"
    except Exception:  # noqa: BLE001 - another wasmtime-py layout
        return checked, "checked call"


class ModuleCall:
    """One instance of the module, with frames copied into its memory for
    kw_decode_response_frame_records calls."""

    def __init__(self, engine: wasmtime.Engine, module: wasmtime.Module) -> None:
        self.store = wasmtime.Store(engine)
        self.store.set_wasi(wasmtime.WasiConfig())
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        inst = linker.instantiate(self.store, module)
        ex = inst.exports(self.store)
        init = ex["_initialize"]
        assert isinstance(init, wasmtime.Func)
        init(self.store)
        fns = {}
        for name in ("kw_alloc", "kw_free", "kw_decode_response_frame_records", "kw_abi_version"):
            f = ex[name]
            assert isinstance(f, wasmtime.Func)
            fns[name] = f
        self._alloc, self.call_kind = _caller(self.store, fns["kw_alloc"])
        self._free, _ = _caller(self.store, fns["kw_free"])
        self._decode, _ = _caller(self.store, fns["kw_decode_response_frame_records"])
        abi, _ = _caller(self.store, fns["kw_abi_version"])
        version = fns["kw_abi_version"](self.store)
        # The flags decode_fetch passes by default: input spans (records stored
        # uncompressed left in the frame) from ABI 1.2 on, and the records as columns (a
        # layout-4 table) from ABI 1.4 on. The calls below use them unless given others.
        self.flags = default_flags(version)
        if abi() != version:  # the fast path must agree with the checked one
            self._alloc = lambda *a: fns["kw_alloc"](self.store, *a)
            self._free = lambda *a: fns["kw_free"](self.store, *a)
            self._decode = lambda *a: fns["kw_decode_response_frame_records"](self.store, *a)
            self.call_kind = "checked call"
        mem = ex["memory"]
        assert isinstance(mem, wasmtime.Memory)
        self.mem = mem
        self.slots = self.alloc(8)

    def alloc(self, n: int) -> int:
        p = self._alloc(n)
        if p == 0:
            raise MemoryError(f"kw_alloc({n}) failed")
        return p & 0xFFFFFFFF

    def put(self, frame: bytes) -> Tuple[int, int]:
        """Copies frame into a buffer of the module, kept until the instance goes; returns
        the buffer (pointer, length) to pass to the calls below."""
        p = self.alloc(len(frame))
        self.mem.write(self.store, frame, p)
        return p, len(frame)

    def call(self, frame: Tuple[int, int], api_version: int, flags: Optional[int] = None) -> Tuple[int, int]:
        """kw_decode_response_frame_records on a frame put in the module, with flags
        (default: the binding's, self.flags); returns the output's (pointer, length) in
        the module's memory (free it with free)."""
        p, n = frame
        st = self._decode(p, n, 1, api_version, self.flags if flags is None else flags, 0, self.slots, self.slots + 4)
        if st != 0:
            raise RuntimeError(f"kw_decode_response_frame_records returned status {st}")
        base = ctypes.addressof(self.mem.data_ptr(self.store).contents)  # the memory may have moved
        ptr, size = _SLOTS.unpack(ctypes.string_at(base + self.slots, 8))
        return ptr, size

    def free(self, ptr: int) -> None:
        self._free(ptr)

    def once(self, frame: Tuple[int, int], api_version: int, flags: Optional[int] = None) -> None:
        """One call, its output freed unread: what the benchmark times."""
        ptr, _ = self.call(frame, api_version, flags)
        self._free(ptr)

    def output(self, frame: Tuple[int, int], api_version: int, flags: Optional[int] = None) -> bytes:
        """One call, its output copied out and freed."""
        ptr, size = self.call(frame, api_version, flags)
        out = bytes(self.mem.read(self.store, ptr, ptr + size))
        self._free(ptr)
        return out

    def memory_bytes(self) -> int:
        return self.mem.data_len(self.store)
