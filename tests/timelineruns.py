"""Runs of tests/programs/phases.c shared by the timeline tests (runtime, report, diagnose),
and profiles with planted timelines written without MPI (exact inputs).

Each distinct run is made once per test process (``functools.lru_cache``) into one
temporary directory: the runs are the cost, and one run serves several assertions.
Open MPI runs 4 oversubscribed ranks, MPICH 2 (it busy-polls). The phases are planted
with sleeps, so a loaded machine stretches them but cannot blur them.
"""

from __future__ import annotations

import atexit
import functools
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

import mpitest
from mpiscope import format as fmt
from mpiscope import read, testing
from mpiscope.diagnose import diagnose
from mpiscope.profile import Profile
from mpiscope.report import build_report
from profile_expect import program_path, run_killable

_DIR = Path(tempfile.mkdtemp(prefix="mpiscope-timeline-"))
atexit.register(shutil.rmtree, _DIR, True)

NRANKS = {"openmpi": 4, "mpich": 2}
BIND_CORE = {"openmpi": ("--bind-to", "core"), "mpich": ("-bind-to", "core")}

# Every 4th step rank 0 works 150 ms more while the others wait in MPI_Allreduce (5 bursts),
# after a 400 ms start where rank 0 alone works while the others wait in MPI_Bcast. About
# 1.95 s: the bins double four times from their initial width (the merging is exercised
# too). Steps of 40 ms and bursts of 150 ms: a loaded machine wakes a sleeping rank tens of
# ms late, which must stay short of a burst (the others' waits at ordinary steps).
BURSTS = ("20", "40", "bursts", "4", "150", "start", "400")
# The others sleep 1.2 ms less each step than the last rank: they wait 0 % of a 40 ms step
# at the start, 87 % at the end, linearly in time (a growing lag would stretch the steps and
# make the waiting share concave).
DRIFT = ("30", "40", "drift", "1.2")
# The same steps with the last rank 10 ms late at every one: an imbalance that does not change
# in time (real codes' steps are rarely balanced). It puts the collective share's median near
# 10 %, so a loaded machine's late wake-ups (tens of ms at some steps: the jitter rule rightly
# sees them on a balanced program) stay within the 5 x median that jitter needs; the jitter
# rule's own test plants its bins (test_timeline_rules.py).
STEADY = ("30", "40", "lag", "10")
# STEADY, then rank 0 writes its "output" for 400 ms while the other waits in MPI_Bcast: a
# slow end, and no drift (the end is a step, not a growth: drift read it as one until the
# end phase was left out of its fit).
SLOW_END = STEADY + ("end", "400")
# Balanced 50 ms steps; at about one in six of the 48, pseudo-randomly placed and no period,
# one rank sleeps 60 ms more: the other's time in that step's MPI_Allreduce jumps from ~0 to
# 60 ms. The jumps take about 17 % of the run: the median stretch stays a quiet one (~0.1 %
# here, 32 % at the 95th percentile). With 150 ms jumps they took half the run, the median
# was a jump in some runs and no jitter was found (CI: 3 runs of 3).
JITTER = ("48", "50", "jitter", "60")


@functools.lru_cache(maxsize=None)
def run(impl: str, args: tuple[str, ...], mode: str = "full",
        env: tuple[tuple[str, str], ...] = (), n: int | None = None, bind: bool = False,
        attempt: int = 0) -> tuple[Profile, str]:
    """(profile, the job's stdout) of ``phases ARGS`` profiled by ``mpiscope run`` on n ranks
    (default NRANKS[impl]); ``bind``: a core per rank (n <= cores); ``attempt`` > 0: a fresh
    run of the same command."""
    n = n or NRANKS[impl]
    out = _DIR / f"{impl}-{n}-{mode}-{'_'.join(args)}-{len(env)}-{int(bind)}-{attempt}"
    out.mkdir(parents=True)
    launch = ([{"openmpi": "mpirun.openmpi", "mpich": "mpirun.mpich"}[impl],
               *BIND_CORE[impl], "-n", str(n)] if bind else mpitest.launcher(impl, n))
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(out), "--mpi", impl, "--mode", mode, "--",
                               *launch, program_path(impl, "phases"), *args)
    rc, stdout, stderr = run_killable(cmd, out, mpitest.mpi_env(dict(env)), 300)
    assert rc == 0, f"{cmd} exited {rc}\n{stderr[-3000:]}"
    assert f"total={n * int(args[0])}" in stdout, stdout
    files = sorted(out.glob("*.mpiscope"))
    assert len(files) == 1, (files, stderr[-2000:])
    return read(files[0]), stdout


def burst_period(stdout: str) -> float:
    """The period (s) rank 0's bursts really had, as the program measured it."""
    m = re.search(r"burst_period_ms=([\d.]+)", stdout)
    assert m, stdout
    return float(m.group(1)) / 1e3


# --- planted timelines (no MPI) ------------------------------------------------------------

P, NB, W = 4, 200, 0.01


def planted(kind: str) -> np.ndarray:
    """Collective seconds [rank, bin] of a run of P ranks and NB bins of W seconds with a
    known pattern: steady, bursts, drift, start, end, lag or jitter."""
    rng = np.random.default_rng(1)
    coll = (0.05 + 0.02 * rng.random((P, NB))) * W
    j = np.arange(NB)
    if kind == "bursts":            # every 20 bins rank 0 works 6 bins, the others wait
        on = (j % 20 >= 14) & (j > 10)
        coll[1:, on], coll[0, on] = 0.95 * W, 0.01 * W
    elif kind == "drift":           # the last rank falls behind steadily
        coll[:-1] = (0.05 + 0.6 * j / NB) * W
        coll[-1] = 0.02 * W
    elif kind == "start":           # 0.4 s: rank 0 reads, the others wait
        coll[1:, :40], coll[0, :40] = 0.95 * W, 0.0
    elif kind == "end":             # the last 0.3 s: rank 2 writes, the others wait
        coll[:, -30:], coll[2, -30:] = 0.9 * W, 0.01 * W
    elif kind == "lag":             # steps of 5 bins, one call each: the last rank is late
        on = j % 5 == 4             # at every step (a steady imbalance, no burst)
        coll[:-1, on], coll[-1, on] = 0.95 * W, 0.01 * W
    elif kind == "jitter":          # 1 bin in 10 costs 0.7 of a bin more, at random
        coll[:, rng.random(NB) < 0.1] += 0.7 * W
    return coll


def planted_profile(tmp_path, kind: str, mode: str = "full"):
    """(profile, report, diagnosis) of a profile whose collective time per bin is planted(kind)."""
    coll = planted(kind)
    values = np.stack([coll, W - coll, np.full((P, NB), 16.0)], axis=1)
    rows = ["coll", "compute", "bytes"]
    ranks = np.zeros(P, fmt.RANK)
    ranks["rank"], ranks["wall"], ranks["mpi"], ranks["threads"] = np.arange(P), NB * W, \
        coll.sum(axis=1), 1
    calls = NB // 5 if kind == "lag" else NB      # "lag": one MPI_Allreduce per step
    funcs = testing.records(fmt.FUNC, [dict(rank=r, func=0, calls=calls, time=coll[r].sum(),
                                            bytes_sent=8 * NB, bytes_recv=8 * NB)
                                       for r in range(P)])
    meta = testing.default_meta(["MPI_Allreduce"], ["coll"])
    meta["timeline"] = testing.timeline_meta(rows, NB, W)
    path = tmp_path / f"{kind}-{mode}.mpiscope"
    if mode == "summary":
        summary, hsum = testing.summarize(ranks, funcs, np.zeros(0, fmt.HIST))
        meta["timeline"]["rows"] = testing.summary_rows(rows)
        testing.write_profile(path, nranks=P, meta=meta, mode="summary", summary=summary,
                              hist=hsum, timeline=testing.summarize_timeline(values, rows))
    else:
        testing.write_profile(path, nranks=P, meta=meta, ranks=ranks, funcs=funcs,
                              timeline=values)
    prof = read(path)
    rep = build_report(prof)
    return prof, rep, diagnose(prof, rep)
