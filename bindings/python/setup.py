"""Build step of the kwire package: ships kwire.wasm inside it.

The module is not kept in the source tree. At build time it is copied from $KWIRE_WASM
when set, else from the repository's build/kwire.wasm (`make wasm` writes it).
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def find_wasm() -> str:
    candidates = []
    env = os.environ.get("KWIRE_WASM")
    if env:
        candidates.append(env)
    candidates.append(os.path.join(HERE, "..", "..", "build", "kwire.wasm"))
    for c in candidates:
        if os.path.isfile(c):
            return c
    raise SystemExit(
        "kwire: no kwire.wasm to ship (looked at %s); build it with `make wasm` "
        "from the repository root, or set KWIRE_WASM" % ", ".join(candidates)
    )


class BuildPyWithWasm(build_py):
    def run(self) -> None:
        super().run()
        src = find_wasm()
        dst_dir = os.path.join(self.build_lib, "kwire")
        os.makedirs(dst_dir, exist_ok=True)
        shutil.copyfile(src, os.path.join(dst_dir, "kwire.wasm"))


setup(cmdclass={"build_py": BuildPyWithWasm})
