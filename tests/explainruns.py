"""Mini-app runs shared by the explain tests (POP metrics, diagnose, compare).

Each distinct run is made once per test process (``functools.lru_cache``) into
one temporary directory, so the tests of several modules that look at the same
program with and without its problem share one profile: the runs are the cost.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

import exampleapps
import mpiscope
import mpitest
from mpiscope import native
from mpiscope.profile import Profile

_DIR = Path(tempfile.mkdtemp(prefix="mpiscope-explain-"))
atexit.register(shutil.rmtree, _DIR, True)

# The problem and its fix, per mini-app, as (name, args); small and quick on 2 cores.
# Little work per step, so that on a loaded test machine the flat run's compute noise stays a
# small share of the run, and a hot rank doing 30 times the work stands out at any load.
# A rank's two arrays well inside one core's L2 (2 MiB here): at 512x512 on 2 ranks they
# filled it, and which physical pages a rank got decided its speed: a flat MPICH run's
# compute was 0.53 vs 1.06 s per rank (1000 steps, bound, no run-queue wait), load balance
# below 0.8 in 3 of 8 quiet runs (CI: 3 of 3). At 256x256 (0.5 MiB), 0.90-1.0 in 8 of 8.
STENCIL = ("stencil", "--grid", "256x256", "--steps", "400")
STENCIL_FLAT = STENCIL
HOT_FACTOR = 30
STENCIL_HOT = STENCIL + ("--hot-rank", "1", "--hot-factor", str(HOT_FACTOR))
ZONAL_GATHER = ("zonal", "--steps", "10", "--variant", "gather")
ZONAL_DISTRIBUTED = ("zonal", "--steps", "10", "--variant", "distributed")
# pcg: a tiny grid, so that the allreduces' latency is a real share of each iteration (at
# 2 ranks an 8-byte allreduce costs ~1 us here), and many iterations, so that one
# descheduling does not decide the run's shares. The allreduces take 13-16 % of the run at
# 2 Open MPI ranks (16-52 % under two busy loops; 6 runs each) and fusing the two of classic
# CG saves half of that; 300 iterations of 8x8 (3 ms) fell to a 4.5 % share in 2 of 6
# loaded runs.
PCG = ("pcg", "--grid", "4x4", "--maxiter", "3000", "--tol", "0")
PCG_CLASSIC = PCG + ("--variant", "classic")
PCG_CG = PCG + ("--variant", "cg")


def _key(app) -> str:
    return "-".join(a.strip("-").replace("/", "_") for a in app)[:120]

# Rank orders for a 4x4 grid on nodes of 4 (docs/examples.md): a scrambled one, and the
# one `mpiscope place grid -C -g 4,4 -c 2,2` writes (2x2 blocks per node).
ORDERS = {"scrambled": "1,12,7,10,14,4,5,8,0,9,2,13,11,6,3,15",
          "grid": "0,1,4,5,2,3,6,7,8,9,12,13,10,11,14,15"}


def stencil_order(kind: str) -> tuple[str, ...]:
    path = _DIR / f"{kind}.order"
    path.write_text(ORDERS[kind] + "\n")
    return ("stencil", "--grid", "512x512", "--steps", "30", "--procs", "4x4",
            "--rank-order", str(path))


def stencil_io(io: str) -> tuple[str, ...]:
    """The stencil writing 20 snapshots of 0.5 MiB through rank 0 or with MPI-IO."""
    return STENCIL + ("--io", io, "--io-every", "20", "--io-file", str(_DIR / f"{io}-{{n}}.dat"))


@functools.lru_cache(maxsize=None)
def run(impl: str, n: int, app: tuple[str, ...], mode: str = "full",
        sync: bool = False, attempt: int = 0) -> tuple[Profile, str]:
    """Profile of mini-app ``app`` (name, args...) on n ranks; (profile, path)
    (``attempt`` > 0: a fresh run of the same command)."""
    out = _DIR / f"{impl}-{n}-{mode}-{int(sync)}-{_key(app)}" / str(attempt)
    extra = ("--mode", mode) + (("--sync",) if sync else ())
    args = [a.replace("{n}", f"{impl}-{n}-{mode}") for a in app[1:]]
    # A core per rank when there are enough: unbound, the kernel now and then stacks both
    # ranks of a 2-rank run on one core, and a flat stencil was diagnosed imbalanced in 2
    # of 12 MPICH runs here (3 of 3 in one CI run); bound, in none of 12.
    launch = launcher(impl, n, *BIND_CORE[impl]) if n <= (os.cpu_count() or 1) else None
    prof, _ = exampleapps.profiled(impl, n, app[0], *args, outdir=out, extra=extra,
                                   launch=launch)
    return prof, prof.path


@functools.lru_cache(maxsize=None)
def run_program(impl: str, n: int, prog: tuple[str, ...], mode: str = "full",
                sync: bool = False, attempt: int = 0, launch: tuple[str, ...] = (),
                env: tuple[tuple[str, str], ...] = (),
                wrap: tuple[str, ...] = ()) -> tuple[Profile, str]:
    """Profile of test program tests/programs/<prog[0]>.c with arguments prog[1:]
    (``attempt`` > 0: a fresh run of the same command). ``launch``: the launcher's own
    options instead of mpitest.launcher's (e.g. binding; see :func:`launcher`); ``env``:
    (name, value) pairs added to the launcher's environment; ``wrap``: a command the
    launcher starts the program under (e.g. ``taskset -c 0``)."""
    tag = _key(launch + wrap + tuple(f"{k}={v}" for k, v in env))
    out = _DIR / f"{impl}-{n}-{mode}-{int(sync)}-{attempt}-prog-{_key(prog)}-{tag}"
    # The cache keys keyword and positional calls apart, and a failed run leaves its
    # directory: start from an empty one so that exactly this run's profile is read.
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(out), "--mpi", impl, "--mode", mode,
                               *(("--sync",) if sync else ()), "--",
                               *(launcher(impl, n, *launch) if launch else mpitest.launcher(impl, n)),
                               *wrap, str(native.program(impl, f"tests/{prog[0]}")), *prog[1:])
    mpitest.run(cmd, cwd=out, env=dict(env), timeout=exampleapps.TIMEOUT)
    (path,) = out.glob("*.mpiscope")
    return mpiscope.read(str(path)), str(path)


# The launcher's own binding options per MPI (hydra binds nothing unless asked).
BIND_CORE = {"openmpi": ("--bind-to", "core"), "mpich": ("-bind-to", "core")}
BIND_NONE = {"openmpi": ("--bind-to", "none"), "mpich": ("-bind-to", "none")}


def launcher(impl: str, n: int, *options: str) -> list[str]:
    """The launcher of ``impl`` for n ranks with exactly ``options`` (no default binding)."""
    return [{"openmpi": "mpirun.openmpi", "mpich": "mpirun.mpich"}[impl], *options, "-n", str(n)]


def first_run_where(holds, runner, impl: str, n: int, what: tuple[str, ...], tries: int = 3,
                    **kw):
    """(profile, holds(profile)) of the first of ``tries`` fresh runs whose profile satisfies
    ``holds`` (a true value); ``runner`` is :func:`run` (mini-app ``what``) or
    :func:`run_program` (test program ``what``), called with ``attempt`` and ``kw``.

    RATIONALE: on a shared 2-core machine the scheduler, not the program, decides some
    outcomes: two busy-polling MPICH ranks and the other test worker's job share the cores,
    so a descheduled rank makes one flat run look imbalanced, or stretches a run until a
    deliberate problem falls below a rule's bar. A property of the program must show in at
    least one of a few runs; each run is made once per test process (lru_cache).
    """
    for attempt in range(tries):
        prof = runner(impl, n, what, attempt=attempt, **kw)[0]
        got = holds(prof)
        if got:
            return prof, got
    raise AssertionError(f"no run of {what} out of {tries} satisfied the check ({kw})")
