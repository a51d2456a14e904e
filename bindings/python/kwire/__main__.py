"""python -m kwire [info|precompile]

info        prints the module's path, ABI version, spec releases and cache directory
precompile  compiles kwire.wasm with Cranelift into the cache directory (a slow step
            done once), so that later processes start quickly with optimized code
"""

import sys
import time
from typing import List

from . import _runtime


def main(argv: List[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "info"
    if cmd not in ("info", "precompile"):
        print(__doc__, file=sys.stderr)
        return 2
    t = time.monotonic()
    c = _runtime.compiled(compiler="cranelift" if cmd == "precompile" else None)
    took = time.monotonic() - t
    if cmd == "precompile":
        how = "loaded from the cache" if c.from_cache else "compiled"
        where = _runtime.cache_dir() or "(cache off)"
        print(f"kwire: {c.path} {how} in {took:.1f} s; cache {where}")
        return 0
    from . import Kwire

    k = Kwire()
    v = k.abi_version()
    cat = k.api_catalogue()
    print(f"module:        {c.path}")
    print(f"sha256:        {c.sha256}")
    print(f"abi:           {v >> 16}.{v & 0xFFFF}")
    print(f"spec releases: {', '.join(cat['specReleases'])}")
    print(f"apis:          {len(cat['apis'])}, messages: {len(cat['messages'])}")
    print(f"cache:         {_runtime.cache_dir() or '(off)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
