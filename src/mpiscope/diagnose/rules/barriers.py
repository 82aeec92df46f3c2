"""excessive-barriers: MPI_Barrier calls that cost a noticeable share of the run (seed 003).

Barriers order nothing MPI does not already order; their time is waiting
for the last rank plus the barrier's own latency. Cost = the least barrier
time of any rank, an upper bound of what removing them saves: without them
the run still takes at least what each rank spends outside barriers (run time
- its barrier time), so the gain is at most the smallest barrier time. When the
same ranks are late every step they spend almost none in barriers and the
others' waiting reappears at the next blocking call (measured: 0.7 % gained
where the average claimed 25 %); when the late ranks change from step to step
every rank waits in some barriers, and removing them lets the steps overlap.
"""

from __future__ import annotations

from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, worth
from ..sites import site_evidence

RULE = "excessive-barriers"
# Barriers per rank below which they are setup/teardown, not a pattern.
MIN_CALLS_PER_RANK = 10
NAMES = ("MPI_Barrier", "MPI_Ibarrier")


def rule(prof: Profile, rep: dict) -> list[dict]:
    rows = [r for r in rep["functions"] if r["name"] in NAMES]
    n = max(prof.nranks, 1)
    calls = sum(r["calls"] for r in rows) / n
    cost = sum(r["time_per_rank"]["min"] for r in rows)
    if not rows or calls < MIN_CALLS_PER_RANK or not worth(cost, rep, MIN_COST_PCT):
        return []
    evidence = [ev("barriers per rank", calls, ""),
                ev("barrier time per rank (avg)", sum(r["time_per_rank"]["avg"] for r in rows), "s")]
    evidence += site_evidence(rep, *(r["name"] for r in rows))
    s = rows[0]["time_per_rank"]
    if s["min_pe"] is not None:
        evidence.append(ev(f"least barrier time: rank {s['min_pe']} (the last to arrive)",
                           s["min"], "s"))
    return [finding(RULE, f"Excessive barriers: {calls:,.0f} per rank", cost, rep,
                    {"count": prof.nranks, "min_pe": 0, "max_pe": prof.nranks - 1,
                     "list": None if prof.nranks > 16 else list(range(prof.nranks))},
                    evidence,
                    "Remove barriers that order nothing: point-to-point and collective calls "
                    "already synchronise what depends on them; to time phases use "
                    "MPI_Pcontrol regions, and mpiscope run --sync for collectives.",
                    bound="upper", method="the least barrier time of any rank (without "
                    "barriers each rank still spends its time outside them; the waiting for "
                    "ranks that are late every step reappears at the next blocking call)")]
