"""jitter: the time in collectives varies from one stretch of the run to the next far more
than its median (seed 004's allreduce jitter tests: OS noise, other jobs, interference).

From the report's timeline: the share of the time per rank spent in collectives per
stretch of the run, over the bins of the run's phases other than a slow start or end and
outside periodic bursts (other rules). A stretch is as many bins as a rank's mean time
between two collective calls (at least one bin): steady code whose steps outlast a bin
has bins with and without its collective, but spends about the same share in every
stretch; noise makes a few stretches cost many times the median.

Cost: the collective time per rank above the median share, summed over those stretches:
what the run would save if every stretch cost what the median one does.
"""

from __future__ import annotations

import numpy as np

from ... import format as fmt
from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, program_command, ranks_field, worth
from .bursts import top_function

RULE = "jitter"
# The 95th percentile of the per-stretch collective share is at least this many times its
# median, and at least MIN_RISE above it ...
RATIO = 5.0
MIN_RISE = 0.05
# ... over at least this many stretches.
MIN_BINS = 16


def window_bins(prof: Profile, rep: dict, tl: dict) -> int:
    """Bins per stretch: at least the mean time between two collective calls of a rank.
    A steady code whose steps outlast a bin has bins with and without its collective;
    over a stretch that holds one call each, it costs the same in every stretch."""
    calls = sum(r["calls"] for r in rep["functions"] if r["kind"] == "coll")
    per_rank = calls / max(prof.nranks, 1)
    if per_rank <= 0:
        return 1
    interval = tl["end_seconds"] / per_rank
    return max(1, int(np.ceil(interval / tl["bin_seconds"] * (1 - 1e-9))))


def rule(prof: Profile, rep: dict) -> list[dict]:
    tl = rep.get("timeline") or {}
    if not tl.get("available") or "coll" not in tl["kinds"]:
        return []
    width = np.asarray(tl["width"])
    use = width >= tl["bin_seconds"] * (1 - 1e-9)
    for p in tl["phases"]:
        if p["label"] in ("start", "end"):
            use[p["bins"][0]:p["bins"][1]] = False
    b = tl.get("bursts")
    if b:
        use[np.asarray(b["bins"], np.int64)] = False
    if use.sum() < MIN_BINS:
        return []
    k = window_bins(prof, rep, tl)
    idx = np.flatnonzero(use)
    if len(idx) // k < MIN_BINS:
        return []
    idx = idx[:len(idx) // k * k].reshape(-1, k)           # windows of k bins in use
    w = width[idx].sum(axis=1)
    c = (np.asarray(tl["share"]["coll"])[idx] * width[idx]).sum(axis=1) / w
    med, p95 = float(np.median(c)), float(np.percentile(c, 95))
    if p95 < RATIO * med or p95 - med < MIN_RISE:
        return []
    cost = float(((c - med).clip(0) * w).sum())
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    func = top_function(rep, "coll")
    high = c > med + (p95 - med) / 2
    starts = np.asarray(tl["start"])[idx[:, 0]][high]
    synced = bool(prof.flags & fmt.FLAG_SYNC)
    evidence = [ev(f"collective share per stretch of {k} bin(s): median", 100 * med, "%"),
                ev("95th percentile", 100 * p95, "%"), ev("max", 100 * float(c.max()), "%"),
                ev(f"stretches of {k} bin(s) far above the median", int(high.sum()), f"of {len(c)}"),
                ev("first of them at", float(starts[0]) if len(starts) else 0.0, "s"),
                ev(f"collective with the most time: {func}", 0 if func is None else
                   next(r["time_per_rank"]["avg"] for r in rep["functions"] if r["name"] == func),
                   "s per rank")]
    lo = np.asarray(tl["min_pe"])[idx[high]].ravel()
    late = np.unique(lo)
    if not synced:
        evidence.append(ev("includes waiting for late ranks (no --sync data)", "yes"))
    fix = ("The same collectives take far longer in some stretches of the run than in "
           "others: OS noise, daemons or other jobs on the nodes (POP on the Cray XT). Keep a "
           "core per node for the OS (core specialization, e.g. Slurm --core-spec), bind "
           "ranks to cores, do not oversubscribe, and check the nodes for other jobs; fewer, "
           "larger collectives suffer less from it.")
    if not synced:
        fix += (" Rerun with --sync: a timed barrier before each collective separates late "
                "arrival (noise in the computation) from the collective's own jitter.")
    return [finding(RULE, f"Jitter: time in collectives varies per stretch of the run "
                    f"(95th percentile {p95 / med if med > 0 else float('inf'):.3g}x the median)",
                    cost, rep, ranks_field(late) if len(late) <= 16 else ranks_field([]),
                    evidence, fix, None if synced else program_command(prof, "mpiscope run --sync"))]
