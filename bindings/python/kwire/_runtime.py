"""Loading kwire.wasm in wasmtime and calling its kw_ functions (capi/kwire.h).

Compiling the module is slow, so the compiled code is kept in a cache directory and later
processes only map it back in:

- ``KWIRE_CACHE_DIR`` names the directory; ``off`` (or an empty value) disables the cache;
- otherwise the user's cache directory with a ``kwire`` subfolder: ``$XDG_CACHE_HOME/kwire``
  or ``~/.cache/kwire`` (Linux and other Unixes), ``~/Library/Caches/kwire`` (macOS),
  ``%LOCALAPPDATA%\\Cache\\kwire`` (Windows).

Fast start: with an empty cache, the module is first compiled with wasmtime's baseline
compiler (Winch: about 6x less compile work than Cranelift, code about 1.3x slower), which
is cached too, and a background thread (lowest CPU priority, one core) compiles it with
Cranelift (optimizing) and caches that; any later process that finds the Cranelift entry uses it. ``python -m kwire
precompile`` (run by ``make python``) compiles with Cranelift at once. ``KWIRE_COMPILER``:
``auto`` (default, as above), ``cranelift`` (never Winch: the first process waits for
Cranelift). Where Winch is not available, Cranelift is used.

An entry is named after the SHA-256 of the module, the wasmtime version and the machine,
so a new module or a new wasmtime never loads stale code. Each entry has the SHA-256 of
its compiled code beside it, checked before wasmtime sees it: a truncated or corrupt
entry is ignored and rewritten. Files are written under a temporary name and renamed
into place. Wasmtime trusts what it deserializes: the cache directory must be writable
only by you (it is created 0700).
"""

import ctypes
import hashlib
import json
import os
import platform
import struct
import sys
import tempfile
import threading
from importlib import resources
from importlib.metadata import PackageNotFoundError, version as _dist_version
from typing import Any, Dict, Optional, Tuple, Union

import wasmtime

try:  # wasmtime's C API as wasmtime-py exposes it: used for a cheaper call path
    from wasmtime import _ffi as _wffi

    _FAST_CALLS = all(hasattr(_wffi, n) for n in ("wasmtime_func_call_unchecked", "wasmtime_val_raw_t", "wasm_trap_t"))
except ImportError:  # pragma: no cover - another wasmtime-py layout
    _FAST_CALLS = False

from . import _abi
from ._errors import ERR_ARG, ERR_INTERNAL, ERR_TOO_LARGE, KwireError, error_for

ABI_MAJOR = _abi.KW_ABI_MAJOR
# The oldest minor version the binding loads: the exports a later minor added are optional.
ABI_MINOR = 0

# The exports every module of ABI_MAJOR.ABI_MINOR has (the generated table's).
_EXPORTS = tuple(n for n in _abi.EXPORTS if _abi.SINCE[n] <= ABI_MINOR)

# The ABI 1.1 session calls (kwire.session needs every one of them).
_SESSION_EXPORTS = tuple(n for n in _abi.EXPORTS if n.startswith("kw_session_"))

# Exports a newer module adds (ABI minor versions only add): used when present.
_OPTIONAL_EXPORTS = tuple(n for n in _abi.EXPORTS if _abi.SINCE[n] > ABI_MINOR)

BytesLike = Union[bytes, bytearray, memoryview]

# The scratch buffer of an instance: out slot (0), out_len slot (4), two header-version
# slots (8, 12), the 32-byte kw_peek_header (16..48).
_SCRATCH = 48
_OUT_SLOTS = struct.Struct("<Ii")
_PEEK = struct.Struct("<8i")
# KW_MAX_ALLOC: the largest buffer the module hands out or accepts.
MAX_ALLOC = _abi.KW_MAX_ALLOC
# Input buffers above this size are released after the call instead of kept for reuse.
# The module's linear memory never shrinks, so releasing a large input gives nothing back
# to the system; kept, the next large input reuses it, where a released one leaves the
# module's heap to find room for a new one (measured with a 48 MB Fetch response: the
# linear memory settles at 242 MB kept, 392 MB released).
_KEEP_INPUT = MAX_ALLOC


def wasm_path() -> str:
    """The kwire.wasm this package loads: $KWIRE_WASM, else the one shipped inside it."""
    env = os.environ.get("KWIRE_WASM")
    if env:
        return env
    res = resources.files("kwire").joinpath("kwire.wasm")
    path = str(res)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} is missing: the package was built without kwire.wasm "
            "(build it with `make wasm` and reinstall, or set KWIRE_WASM)"
        )
    return path


def cache_dir() -> Optional[str]:
    """Where compiled modules are kept, or None when caching is off (KWIRE_CACHE_DIR=off)."""
    env = os.environ.get("KWIRE_CACHE_DIR")
    if env is not None:
        if env == "" or env.lower() == "off":
            return None
        return env
    return os.path.join(_user_cache_dir(), "kwire")


def _user_cache_dir() -> str:
    """The platform's per-user cache directory."""
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "Cache")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches")
    xdg = os.environ.get("XDG_CACHE_HOME")
    # The XDG spec: a relative path is invalid and ignored.
    if xdg and os.path.isabs(xdg):
        return xdg
    return os.path.join(home, ".cache")


def _wasmtime_version() -> str:
    try:
        return _dist_version("wasmtime")
    except PackageNotFoundError:  # pragma: no cover - wasmtime imported but not installed?
        return "unknown"


# wasmtime's C API value of WASMTIME_STRATEGY_WINCH (the Python API names only auto and
# cranelift).
_STRATEGY_WINCH = 2


def _winch_engine() -> Optional[wasmtime.Engine]:
    """An engine that compiles with Winch, or None where that cannot be configured."""
    try:
        from wasmtime import _ffi as wffi

        c = wasmtime.Config()
        wffi.wasmtime_config_strategy_set(c.ptr(), _STRATEGY_WINCH)
        return wasmtime.Engine(c)
    except Exception:  # an older or newer wasmtime-py without this entry point
        return None


class _Compiled:
    """A compiled module with its engine and a linker that provides WASI.

    ``compiler`` is "cranelift" or "winch" (see the module docstring); ``upgrade`` is the
    background thread compiling the Cranelift entry after a Winch start, else None."""

    def __init__(self, path: str, compiler: Optional[str] = None) -> None:
        self.path = path
        self.from_cache = False
        self.compiler = "cranelift"
        self.upgrade: Optional[threading.Thread] = None
        with open(path, "rb") as f:
            wasm = f.read()
        self.sha256 = hashlib.sha256(wasm).hexdigest()
        mode = compiler or os.environ.get("KWIRE_COMPILER", "auto")
        if mode not in ("auto", "cranelift"):
            raise ValueError(f"KWIRE_COMPILER must be auto or cranelift, not {mode!r}")
        self.engine, self.module = self._load(wasm, mode)
        self.linker = wasmtime.Linker(self.engine)
        self.linker.define_wasi()

    def _cache_file(self, compiler: str = "cranelift") -> Optional[str]:
        d = cache_dir()
        if d is None:
            return None
        tag = f"{self.sha256}-wasmtime{_wasmtime_version()}-{platform.machine()}-{sys.platform}"
        if compiler != "cranelift":
            tag += "-" + compiler
        return os.path.join(d, f"kwire-{tag}.cwasm")

    def _load(self, wasm: bytes, mode: str) -> Tuple[wasmtime.Engine, wasmtime.Module]:
        engine = wasmtime.Engine()
        cf = self._cache_file()
        if cf is not None:
            m = _read_cache(engine, cf)
            if m is not None:
                self.from_cache = True
                return engine, m
            if mode == "auto":
                fast = self._load_winch(wasm)
                if fast is not None:
                    self.upgrade = threading.Thread(target=_upgrade, args=(wasm, cf, self._cache_file("winch")), name="kwire-compile", daemon=True)
                    self.upgrade.start()
                    return fast
        m = wasmtime.Module(engine, wasm)
        if cf is not None:
            _write_cache(cf, m.serialize())
            _drop_winch_entry(cf, self._cache_file("winch"))
        return engine, m

    def _load_winch(self, wasm: bytes) -> Optional[Tuple[wasmtime.Engine, wasmtime.Module]]:
        engine = _winch_engine()
        wf = self._cache_file("winch")
        if engine is None or wf is None:
            return None
        m = _read_cache(engine, wf)
        if m is not None:
            self.from_cache = True
        else:
            try:
                m = wasmtime.Module(engine, wasm)
            except wasmtime.WasmtimeError:  # a wasmtime built without Winch, or a target it lacks
                return None
            # Cached at once (about 0.1 s): a short-lived process rarely lives to see its
            # background compile finish, and the next one should not compile again.
            _write_cache(wf, m.serialize())
        self.compiler = "winch"
        return engine, m


def _upgrade(wasm: bytes, path: str, winch_path: Optional[str]) -> None:
    """The background work after a Winch start, at the lowest CPU priority and on one
    thread, so that it takes idle time rather than the program's: compile with Cranelift,
    cache that and remove the Winch entry. Never raises: a failure only means the next
    process starts from Winch again."""
    try:
        if hasattr(os, "setpriority") and sys.platform.startswith("linux"):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # this thread only, on Linux
    except OSError:
        pass
    try:
        cfg = wasmtime.Config()
        cfg.parallel_compilation = False
        m = wasmtime.Module(wasmtime.Engine(cfg), wasm)
        _write_cache(path, m.serialize())
        _drop_winch_entry(path, winch_path)
    except Exception:
        pass


def _drop_winch_entry(path: str, winch_path: Optional[str]) -> None:
    """Removes the Winch entry once the Cranelift entry at path exists."""
    if winch_path is None or not os.path.exists(path):
        return
    for f in (winch_path, winch_path[: -len(".cwasm")] + ".sha256"):
        try:
            os.unlink(f)
        except OSError:
            pass


# A cache entry is two files: NAME.cwasm, what wasmtime's Module.serialize wrote, and
# NAME.sha256, the hex SHA-256 of the first. wasmtime maps the .cwasm file in (no copy)
# once its digest has been checked.


def _digest_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
    return h.hexdigest()


def _read_cache(engine: wasmtime.Engine, path: str) -> Optional[wasmtime.Module]:
    """The module cached at path, or None when there is none or it is not usable
    (truncated, corrupt, written by another wasmtime or for another machine)."""
    try:
        with open(path[: -len(".cwasm")] + ".sha256", "r", encoding="ascii") as f:
            want = f.read().strip()
        if _digest_file(path) != want:
            return None
        m = wasmtime.Module.deserialize_file(engine, path)
    except (OSError, ValueError, wasmtime.WasmtimeError):
        return None
    try:
        os.utime(path)  # most recently used: kept by _prune
    except OSError:
        pass
    return m


def _write_atomic(path: str, data: Union[bytes, bytearray]) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".kwire-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _write_cache(path: str, payload: Union[bytes, bytearray]) -> None:
    """Writes a cache entry: each file to a temporary name, then renamed into place, the
    digest last. A directory that cannot be written means running without the cache."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        _write_atomic(path, payload)
        _write_atomic(path[: -len(".cwasm")] + ".sha256", hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n")
        _prune(os.path.dirname(path))
    except OSError:
        pass


_KEEP_CACHED = 6


def _prune(d: str) -> None:
    """Keeps the most recently used compiled modules of the cache directory (each is tens
    of MB; a new module or wasmtime version adds one)."""
    try:
        entries = [os.path.join(d, f) for f in os.listdir(d) if f.startswith("kwire-") and f.endswith(".cwasm")]
        entries.sort(key=lambda p: os.stat(p).st_mtime, reverse=True)
        for p in entries[_KEEP_CACHED:]:
            os.unlink(p)
            try:
                os.unlink(p[: -len(".cwasm")] + ".sha256")
            except OSError:
                pass
    except OSError:
        pass


_compiled: Dict[str, _Compiled] = {}
_compiled_lock = threading.Lock()


def compiled(path: Optional[str] = None, compiler: Optional[str] = None) -> _Compiled:
    """The compiled module at path (default: wasm_path()), compiled once per process.
    compiler: "auto" or "cranelift" (default: $KWIRE_COMPILER, else "auto"); it only
    matters for the first call of a process."""
    p = os.path.abspath(path or wasm_path())
    with _compiled_lock:
        c = _compiled.get(p)
        if c is None:
            c = _Compiled(p, compiler)
            _compiled[p] = c
        return c


class Instance:
    """One instance of kwire.wasm: a wasmtime store, its exports, a scratch buffer and a
    reusable input buffer. Not thread-safe by itself: the public API holds a lock.

    If a call traps (which the ABI promises never happens), the instance is replaced by a
    new one and the call raises InternalError.
    """

    def __init__(self, path: Optional[str] = None, env: Optional[Dict[str, str]] = None) -> None:
        self._env = [(str(k), str(v)) for k, v in (env or {}).items()]
        self._compiled = compiled(path)
        self._start()

    def _start(self) -> None:
        c = self._compiled
        store = wasmtime.Store(c.engine)
        wasi = wasmtime.WasiConfig()
        wasi.inherit_stderr()
        if self._env:
            wasi.env = self._env
        store.set_wasi(wasi)
        inst = c.linker.instantiate(store, c.module)
        ex = inst.exports(store)
        init = ex["_initialize"]
        assert isinstance(init, wasmtime.Func)
        init(store)
        fns: Dict[str, wasmtime.Func] = {}
        for name in _EXPORTS:
            f = ex[name]
            if not isinstance(f, wasmtime.Func):
                raise KwireError(ERR_INTERNAL, f"kwire.wasm: export {name} is not a function")
            fns[name] = f
        for name in _OPTIONAL_EXPORTS:
            try:
                f = ex[name]
            except KeyError:
                continue
            if isinstance(f, wasmtime.Func):
                fns[name] = f
        self.optional = frozenset(n for n in _OPTIONAL_EXPORTS if n in fns)
        mem = ex["memory"]
        assert isinstance(mem, wasmtime.Memory)
        self._store = store
        self._fns = fns
        self._mem = mem
        self._fast: Dict[str, Tuple[Any, Any, int, int]] = {}
        if _FAST_CALLS and os.environ.get("KWIRE_CHECKED_CALLS") != "1":
            for name, f in fns.items():
                ty = f.type(store)
                ps, rs = ty.params, ty.results
                if all(str(t) == "i32" for t in ps + rs) and len(rs) <= 1:
                    slots = (_wffi.wasmtime_val_raw_t * max(len(ps), len(rs), 1))()
                    self._fast[name] = (ctypes.byref(f._func), slots, len(ps), len(rs))
        self.abi_version: int = fns["kw_abi_version"](store)
        major, minor = self.abi_version >> 16, self.abi_version & 0xFFFF
        self.abi_minor: int = minor
        if major != ABI_MAJOR or minor < ABI_MINOR:
            raise KwireError(
                ERR_INTERNAL,
                f"kwire.wasm has ABI {major}.{minor}; this binding needs {ABI_MAJOR}.x with x >= {ABI_MINOR}",
            )
        self._in = 0
        self._in_cap = 0
        self._scratch = self._alloc(_SCRATCH)

    # ---- low level -------------------------------------------------------------------

    def _base(self) -> int:
        p = self._mem.data_ptr(self._store)
        return ctypes.cast(p, ctypes.c_void_p).value or 0

    def _call_fast(self, name: str, args: Tuple[int, ...]) -> int:
        """wasmtime_func_call_unchecked with prepared i32 slots: the checked Func.__call__
        builds the function's type and a value array on every call, which costs more than
        most kw_ calls themselves. Only i32 functions of this module go this way, with
        exactly their parameter count."""
        fref, slots, np, nr = self._fast[name]
        if len(args) != np:
            raise wasmtime.WasmtimeError(f"{name}: {len(args)} arguments for {np} parameters")
        for i, a in enumerate(args):
            slots[i].i32 = a
        trap = ctypes.POINTER(_wffi.wasm_trap_t)()
        err = _wffi.wasmtime_func_call_unchecked(self._store._context(), fref, slots, len(slots), ctypes.byref(trap))
        if err:
            raise wasmtime.WasmtimeError._from_ptr(err)
        if trap:
            raise wasmtime.Trap._from_ptr(trap)
        return int(slots[0].i32) if nr else 0

    def call(self, name: str, *args: int) -> int:
        """Calls a kw_ export and returns its i32 result; a trap replaces the instance."""
        try:
            if name in self._fast:
                return self._call_fast(name, args)
            r: int = self._fns[name](self._store, *args)
            return r
        except (wasmtime.Trap, wasmtime.WasmtimeError) as e:
            text = f"kwire.wasm trapped in {name}: {e}; the instance was replaced by a new one"
            self._start()
            raise error_for(ERR_INTERNAL, text, {"status": ERR_INTERNAL, "category": "internal", "text": text}) from e

    def _alloc(self, n: int) -> int:
        p = self.call("kw_alloc", n)
        if p == 0:
            raise self.last_error()
        return p & 0xFFFFFFFF

    def free(self, p: int) -> None:
        if p:
            self.call("kw_free", p)

    def last_error(self) -> KwireError:
        """The exception describing the last failed call (kw_last_error_json)."""
        s = self._scratch
        st = self.call("kw_last_error_json", s, s + 4)
        if st != 0:
            return error_for(ERR_INTERNAL, f"kw_last_error_json failed with status {st}")
        base = self._base()
        ptr, n = _OUT_SLOTS.unpack(ctypes.string_at(base + s, 8))
        raw = ctypes.string_at(base + ptr, n)
        try:
            d: Dict[str, Any] = json.loads(raw)
        except ValueError:
            return error_for(ERR_INTERNAL, f"kw_last_error_json returned bad JSON: {raw!r}")
        status = d.get("status")
        text = d.get("text")
        return error_for(
            status if isinstance(status, int) else ERR_INTERNAL,
            text if isinstance(text, str) else raw.decode("utf-8", "replace"),
            d,
        )

    def put(self, *parts: BytesLike) -> Tuple[int, ...]:
        """Copies the parts one after another into the input buffer and returns the offset
        of each part followed by its length: (p0, n0, p1, n1, ...)."""
        sizes = [memoryview(x).nbytes for x in parts]
        total = sum(sizes)
        if total > MAX_ALLOC:
            raise error_for(
                ERR_TOO_LARGE,
                f"kwire: an input of {total} bytes exceeds KW_MAX_ALLOC ({MAX_ALLOC})",
                {"category": "too_large"},
            )
        if total > self._in_cap or self._in == 0:
            if self._in:
                self.free(self._in)
                self._in, self._in_cap = 0, 0
            cap = max(total, 4096, min(2 * self._in_cap, 64 << 20))
            self._in = self._alloc(cap)
            self._in_cap = cap
        base = self._base() + self._in
        out = []
        at = 0
        for x, n in zip(parts, sizes):
            if n:
                if isinstance(x, bytes):
                    ctypes.memmove(base + at, x, n)
                else:
                    dst = (ctypes.c_ubyte * n).from_address(base + at)
                    memoryview(dst).cast("B")[:] = memoryview(x).cast("B")
            out.append(self._in + at)
            out.append(n)
            at += n
        return tuple(out)

    def release_input(self) -> None:
        """Frees a large input buffer after a call rather than keep it."""
        if self._in_cap > _KEEP_INPUT:
            self.free(self._in)
            self._in, self._in_cap = 0, 0

    def call_out(self, name: str, *args: int) -> bytes:
        """Calls a kw_ function whose last two parameters are (out, out_len), and returns
        the output bytes (copied out and freed in the module), or raises its error."""
        s = self._scratch
        st = self.call(name, *args, s, s + 4)
        if st != 0:
            raise self.last_error()
        base = self._base()
        ptr, n = _OUT_SLOTS.unpack(ctypes.string_at(base + s, 8))
        data = ctypes.string_at(base + ptr, n)
        self.free(ptr)
        return data

    def header_versions(self, api_key: int, api_version: int) -> Tuple[int, int]:
        s = self._scratch
        st = self.call("kw_header_versions", api_key, api_version, s + 8, s + 12)
        if st != 0:
            raise self.last_error()
        req, resp = struct.unpack("<ii", ctypes.string_at(self._base() + s + 8, 8))
        return req, resp

    def peek(self, frame: BytesLike) -> Tuple[int, ...]:
        p, n = self.put(frame)
        s = self._scratch
        st = self.call("kw_peek_request_header", p, n, s + 16)
        self.release_input()
        if st != 0:
            raise self.last_error()
        return _PEEK.unpack(ctypes.string_at(self._base() + s + 16, 32))


def check_int32(name: str, v: int) -> int:
    """Arguments that cross the ABI as i32 are checked here, not wrapped around."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if not -(1 << 31) <= v < (1 << 31):
        raise error_for(ERR_ARG, f"kwire: {name} {v} does not fit in an int32", {"category": "arg"})
    return v

