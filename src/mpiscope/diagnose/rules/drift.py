"""drift: the imbalance between ranks grows over the run (one rank slowly falls behind).

A profile sums the run, so a rank that starts even and ends far behind looks like a
moderate imbalance; the timeline shows it growing. A slow start or end phase (a step in the
MPI share at its edge: phase_edges.slow_edges) is left out: rank 0 writing the output at
the end while the others wait is not a rank falling behind. Per bin the imbalance is how much more
of the bin the average rank spends in MPI than the rank least in MPI (the one the others
wait for): ``mpi share avg - min``, from the report's timeline (full and summary mode).
Smoothed over a burst period (bursts are another rule) or a tenth of the run, whichever is
longer (a loaded machine's waits at single steps average out), fitted with a line over time.

Cost: the waiting the growth added: the sum over bins of the imbalance above its fitted
value at the start. Keeping the balance the run started with would save that.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, ranks_field, worth
from .phase_edges import slow_edges

RULE = "drift"
# The fitted imbalance share grows by at least this much over the run ...
MIN_GROWTH = 0.2
# ... the line explains at least this share of its variance (R^2) ...
MIN_R2 = 0.5
# ... and the last third's imbalance is at least this many times the first third's.
MIN_RATIO = 2.0
# Smoothed over at least this share of the bins.
SMOOTH_SHARE = 0.1


def smooth(x: np.ndarray, n: int) -> np.ndarray:
    if n <= 1 or len(x) < n:
        return x
    pad = n // 2
    xp = np.pad(x, (pad, n - 1 - pad), mode="edge")
    return np.convolve(xp, np.ones(n) / n, mode="valid")


def rule(prof: Profile, rep: dict) -> list[dict]:
    tl = rep.get("timeline") or {}
    if not tl.get("available"):
        return []
    width = np.asarray(tl["width"])
    full = width >= tl["bin_seconds"] * (1 - 1e-9)
    for p, *_ in slow_edges(tl):        # a slow start or end is a step, not a growth
        full[p["bins"][0]:p["bins"][1]] = False
    if full.sum() < 9:
        return []
    t = np.asarray(tl["start"])[full]
    imb = (np.asarray(tl["share"]["mpi"]) - np.asarray(tl["mpi_min"]))[full].clip(0)
    b = tl.get("bursts")
    window = max(3, int(round(b["period"] / tl["bin_seconds"])) if b else 0,
                 int(SMOOTH_SHARE * len(imb)))
    y = smooth(imb, window)
    slope, start = np.polyfit(t, y, 1)
    fit = start + slope * t
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(((y - fit) ** 2).sum()) / ss if ss > 0 else 0.0
    third = max(1, len(y) // 3)
    early, late = float(imb[:third].mean()), float(imb[-third:].mean())
    growth = float(slope * (t[-1] - t[0]))
    if growth < MIN_GROWTH or r2 < MIN_R2 or late < MIN_RATIO * early:
        return []
    base = max(float(start + slope * t[0]), 0.0)
    cost = float(((imb - base).clip(0) * width[full]).sum())
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    # who falls behind: the rank least in MPI over the last third
    lo = np.asarray(tl["min_pe"])[full][-third:]
    tlb = prof.timeline_bins
    if tlb is not None and tlb.values is not None:
        idx = np.flatnonzero(full)[-third:]
        behind = int(np.argmin(tlb.row("mpi")[:, idx].sum(axis=1)))
    else:
        u, c = np.unique(lo, return_counts=True)
        behind = int(u[np.argmax(c)])
    evidence = [ev("imbalance share at the start (fitted: avg - least MPI share per bin)",
                   100 * base, "%"),
                ev("at the end (fitted)", 100 * float(start + slope * t[-1]), "%"),
                ev("growth per second of run", 100 * float(slope), "%/s"),
                ev("fit R^2", r2, ""),
                ev("first third / last third (measured)", f"{100 * early:.0f} % / {100 * late:.0f} %"),
                ev(f"rank least in MPI in the last third: {behind}",
                   int(np.count_nonzero(lo == behind)), f"of {len(lo)} bins")]
    return [finding(RULE, f"Drift: rank {behind} falls further behind as the run goes on "
                    f"(imbalance {100 * base:.0f} % -> {100 * float(start + slope * t[-1]):.0f} % "
                    f"of the time)", cost, rep, ranks_field([behind]), evidence,
                    f"Rank {behind}'s work per step grows over the run (a growing particle or "
                    "cell count, refinement, a list that is never trimmed, memory or cache "
                    "effects): rebalance as the run goes (repartition every N steps, e.g. with "
                    "ParMETIS or Zoltan), or find what grows with MPI_Pcontrol regions and "
                    "`mpiscope report --region`; compare an early and a late profile with "
                    "`mpiscope compare` (snapshots: MPISCOPE_SNAPSHOT).")]
