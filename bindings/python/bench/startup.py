"""Start-up time: `import kwire` plus the first call (which loads the module) in a fresh
process, with an empty compiled-code cache and then with the cache warm (3 runs each,
median). Usage: startup.py"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

CODE = (
    "import time; t0 = time.perf_counter(); import kwire; t1 = time.perf_counter(); kwire.abi_version(); "
    "t2 = time.perf_counter(); import json; print(json.dumps([t1 - t0, t2 - t0]))"
)


def run(cache: str) -> list:
    env = dict(os.environ, KWIRE_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout)


def main() -> int:
    cold, warm = [], []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as d:
            cold.append(run(os.path.join(d, "cache")))
            warm.append(run(os.path.join(d, "cache")))
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    print(f"first `import kwire` + first call, fresh process: empty cache {med(cold, 1):.2f} s (target <= 2 s: "
          f"{'met' if med(cold, 1) <= 2 else 'NOT met'}), warm cache {med(warm, 1):.2f} s (target <= 0.3 s: {'met' if med(warm, 1) <= 0.3 else 'NOT met'}); "
          f"the import statement alone {med(warm, 0) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
