"""Mini-app runs shared by the explain tests (POP metrics, diagnose, compare).

Each distinct run is made once per test process (``functools.lru_cache``) into
one temporary directory, so the tests of several modules that look at the same
program with and without its problem share one profile: the runs are the cost.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

import exampleapps
from mpiscope.profile import Profile

_DIR = Path(tempfile.mkdtemp(prefix="mpiscope-explain-"))
atexit.register(shutil.rmtree, _DIR, True)

# The problem and its fix, per mini-app, as (name, args); small and quick on 2 cores.
STENCIL = ("stencil", "--grid", "512x512", "--steps", "40")
STENCIL_FLAT = STENCIL
STENCIL_HOT = STENCIL + ("--hot-rank", "1", "--hot-factor", "8")
ZONAL_GATHER = ("zonal", "--steps", "10", "--variant", "gather")
ZONAL_DISTRIBUTED = ("zonal", "--steps", "10", "--variant", "distributed")
PCG = ("pcg", "--grid", "128x128", "--maxiter", "60", "--tol", "0")
PCG_CLASSIC = PCG + ("--variant", "classic")
PCG_CG = PCG + ("--variant", "cg")


@functools.lru_cache(maxsize=None)
def run(impl: str, n: int, app: tuple[str, ...], mode: str = "full",
        sync: bool = False) -> tuple[Profile, str]:
    """Profile of mini-app ``app`` (name, args...) on n ranks; (profile, path)."""
    out = _DIR / f"{impl}-{n}-{mode}-{int(sync)}-{abs(hash(app)):x}"
    extra = ("--mode", mode) + (("--sync",) if sync else ())
    prof, _ = exampleapps.profiled(impl, n, app[0], *app[1:], outdir=out, extra=extra)
    return prof, prof.path
