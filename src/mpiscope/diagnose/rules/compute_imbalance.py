"""compute-imbalance: some ranks compute longer than the others, who wait (seed 000, CM1).

Cost = max(useful) - avg(useful): the time every rank would save per run if
the work were spread evenly (the load-balance loss of POP, in seconds).

A rank's compute time also holds the time another process had its CPU. Where the runtime
recorded each rank's run-queue wait, the rule fires only if the imbalance outlasts the
differences in that wait: max(compute - (wait - least wait of any rank)) - avg(compute) must
reach the bar too. A wait every rank had stretches them all alike (a loaded node: the 3:1
cost program waited 2.7 s of its 4.3 s on both ranks and is still 3:1); the wait one rank had
beyond the others may all have fallen in its compute (CI: a flat stencil whose one rank lost
its CPU to another process mid-step), and then cpu-starved says so.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from .. import cpu
from ..common import MIN_COST_PCT, ev, finding, negative_useful, profile_arg, ranks_field, stat, worth
from ..sampled import evidence as sampled_evidence, imbalance_functions, sentence
from ..sites import site_evidence

RULE = "compute-imbalance"
# POP's load balance below which imbalance is called a problem (POP marks < 80 % as poor).
LB_MAX = 0.8
# A rank is one of the slow ones when its useful time is above avg by this share of (max - avg).
SLOW_SHARE = 0.5


def slow_ranks(useful: np.ndarray) -> np.ndarray:
    """Ranks whose useful time exceeds avg by at least SLOW_SHARE of (max - avg)."""
    avg, top = float(useful.mean()), float(useful.max())
    return np.flatnonzero(useful >= avg + SLOW_SHARE * (top - avg))


def beyond_run_queue(prof: Profile) -> float | None:
    """The imbalance beyond the ranks' differences in run-queue wait: max over ranks of
    (compute - (its wait per thread - the least wait of any rank)) - avg(compute); None where
    the wait was not recorded (summary mode, an older runtime, a kernel without schedstat)."""
    excess = cpu.wait_beyond_least(prof)
    if excess is None:
        return None
    comp = prof.rank_metric("compute")
    return float((comp - excess).max() - comp.mean())


def imbalanced(prof: Profile, rep: dict) -> bool:
    """Compute load balance below LB_MAX, worth the bar, and not the scheduler's doing."""
    comp = stat(rep, "compute")
    top, avg = float(comp["max"]), float(comp["avg"])
    if top <= 0 or avg / top >= LB_MAX or not worth(top - avg, rep, MIN_COST_PCT):
        return False
    sure = beyond_run_queue(prof)
    return sure is None or worth(sure, rep, MIN_COST_PCT)


def rule(prof: Profile, rep: dict) -> list[dict]:
    if negative_useful(prof, rep):
        return []  # threads rule explains why useful time is unknown
    if not imbalanced(prof, rep):
        return []
    comp = stat(rep, "compute")
    top, avg = float(comp["max"]), float(comp["avg"])
    if prof.is_summary:
        ranks = ranks_field([comp["max_pe"]])
        who = f"rank {comp['max_pe']} (maxPE; a summary profile names only the slowest rank)"
    else:
        slow = slow_ranks(prof.rank_metric("compute"))
        ranks = ranks_field(slow)
        who = (f"{len(slow)} rank(s), {ranks['min_pe']}..{ranks['max_pe']}" if len(slow) > 1
               else f"rank {int(slow[0])}")
    evidence = [ev("compute time max (maxPE %d)" % comp["max_pe"], top, "s"),
                ev("compute time avg", avg, "s"),
                ev("load balance avg/max", 100.0 * avg / top, "%"),
                ev("compute imbalance (CrayPat)", comp["imbalance_pct"], "%")]
    sure = beyond_run_queue(prof)
    if sure is not None and sure < top - avg:
        evidence.append(ev("of it beyond the ranks' differences in run-queue wait", sure, "s"))
    evidence += site_evidence(rep, *(r["name"] for r in rep["functions"] if r["kind"] in ("wait", "coll")),
                              what="wait and collective")
    carriers = imbalance_functions(rep, top - avg)     # a sampled run: in which functions
    evidence += sampled_evidence(carriers)
    named = "; " + ", ".join(sentence(f) for f in carriers) if carriers else ""
    worst = _worst_region(rep)
    command = None
    if worst is not None:
        evidence.append(ev(f"lowest region load balance: {worst['name']!r}",
                           100.0 * worst["load_balance"], "%"))
        command = f"mpiscope report --region {worst['name']} {profile_arg(prof)}"
    return [finding(RULE, f"Compute load imbalance: {who} compute longer, the others wait{named}",
                    top - avg, rep, ranks, evidence,
                    "Give the slow ranks less work: split the domain by cost, not by grid "
                    "points (CM1's storm ranks in WRF on Blue Waters), or move work from the maxPE "
                    "rank; the others' wait and collective time falls with it.", command,
                    method="compute time max - avg: what every rank saves if the work is "
                           "spread evenly")]


def _worst_region(rep: dict) -> dict | None:
    regions = [r for r in (rep.get("pop") or {}).get("regions", [])
               if r.get("load_balance") is not None and (r.get("ranks") or 0) > 1]
    return min(regions, key=lambda r: r["load_balance"], default=None)
