"""Start-up time: `import kwire` plus the first call (which loads the module) in a fresh
process (3 runs each, median):

- empty cache: nothing compiled yet; kwire compiles with wasmtime's Winch (baseline
  compiler) and starts a Cranelift compile in a background thread (which a process this
  short does not wait for);
- warm (after that first run): the Winch entry the first run cached;
- warm (Cranelift, after `python -m kwire precompile`, which `make python` runs): the
  optimized code, what every later process loads.

Also the compile alone, in this process, with each compiler (CPU seconds, both cores).
Usage: startup.py"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

CODE = (
    "import time; t0 = time.perf_counter(); import kwire; t1 = time.perf_counter(); kwire.abi_version(); "
    "t2 = time.perf_counter(); import json; from kwire import _runtime; "
    "print(json.dumps([t1 - t0, t2 - t0, _runtime.compiled().compiler]))"
)


def run(cache: str, *args: str) -> list:
    env = dict(os.environ, KWIRE_CACHE_DIR=cache)
    if args:
        subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
        return []
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout)


def compile_cpu() -> str:
    import wasmtime

    from kwire import _runtime

    with open(_runtime.wasm_path(), "rb") as f:
        wasm = f.read()
    out = []
    for name, engine in (("Cranelift", wasmtime.Engine()), ("Winch", _runtime._winch_engine())):
        if engine is None:
            out.append(f"{name} not available")
            continue
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        wasmtime.Module(engine, wasm)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        out.append(f"{name} {time.perf_counter() - t0:.2f} s ({cpu:.2f} s CPU)")
    return ", ".join(out)


def main() -> int:
    cold, warm, precompiled = [], [], []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as d:
            cache = os.path.join(d, "cache")
            cold.append(run(cache))
            warm.append(run(cache))
            run(cache, "-m", "kwire", "precompile")
            precompiled.append(run(cache))
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    how = lambda xs: "/".join(sorted({x[2] for x in xs}))  # noqa: E731
    size = os.path.getsize(__import__("kwire")._runtime.wasm_path())
    print(f"kwire.wasm {size / 1e6:.1f} MB; first `import kwire` + first call, fresh process (median of 3):")
    print(f"  empty cache {med(cold, 1):.2f} s [{how(cold)}] (target <= 2 s: {'met' if med(cold, 1) <= 2 else 'NOT met'})")
    print(f"  warm cache {med(warm, 1):.2f} s [{how(warm)}], warm after precompile {med(precompiled, 1):.2f} s [{how(precompiled)}] "
          f"(target <= 0.3 s: {'met' if max(med(warm, 1), med(precompiled, 1)) <= 0.3 else 'NOT met'}); the import statement alone {med(precompiled, 0) * 1000:.0f} ms")
    print(f"  compiling kwire.wasm in this process: {compile_cpu()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
