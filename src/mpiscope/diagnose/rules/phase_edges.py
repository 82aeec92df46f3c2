"""slow-start, slow-end: a start or end phase where the ranks wait in MPI much more than in
the rest of the run (initialisation or teardown serialised on a few ranks).

The report's timeline cuts the run into phases (report/timeline.py ``phases``). When the
first (last) phase lasts a real share of the run and its MPI share per rank is well above
that of the main (longest) phase, ranks wait there for others: rank 0 reading the input
while the others wait in MPI_Bcast, or gathering the results at the end (seed 002's
initialisation, seed 000's I/O steps).

The edge must be a step (the MPI share changes by MIN_EXCESS within a few bins of the
phase boundary): a drifting run cut into phases has none, and is the drift rule's.

Cost: the phase's MPI time per rank above the main phase's share of it (outside periodic
bursts, another rule's): what spreading its work over the ranks (parallel reads and writes)
could save.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, ranks_field, worth
from .bursts import top_function

RULE_START = "slow-start"
RULE_END = "slow-end"
# The phase lasts at least this share of the run ...
MIN_SHARE = 0.05
# ... and its MPI share per rank exceeds the main phase's by at least this much.
MIN_EXCESS = 0.2


def slow_edges(tl: dict) -> list[tuple[dict, str, float, float, float]]:
    """The first and last phases of the report's timeline that are a slow start or end by
    their shape (before the cost bar): (phase, rule id, MPI share above the main phase's,
    step at the edge, the main phase's share). The drift rule leaves their bins out."""
    phases = tl.get("phases") or [] if tl.get("available") else []
    if len(phases) < 2:
        return []
    main = max(phases, key=lambda p: p["seconds"])
    base = _steady_share(tl, main)
    out = []
    for p, rule_id in ((phases[0], RULE_START), (phases[-1], RULE_END)):
        if p is main or p["share_of_run"] < MIN_SHARE or _in_bursts(tl, p) > 0.5:
            continue          # a phase that is mostly one of the periodic bursts is theirs
        excess = p["mpi_share"] - base
        step = -p["step_after"] if rule_id == RULE_START else p["step_before"]
        if excess >= MIN_EXCESS and step >= MIN_EXCESS:
            out.append((p, rule_id, excess, step, base))
    return out


def rule(prof: Profile, rep: dict) -> list[dict]:
    tl = rep.get("timeline") or {}
    out = []
    for p, rule_id, excess, step, base in slow_edges(tl):
        cost = excess * p["seconds"]
        if not worth(cost, rep, MIN_COST_PCT):
            continue
        func = top_function(rep, p["top_kind"])
        worker = p["least_mpi_rank"]
        where = "start" if rule_id == RULE_START else "end"
        evidence = [ev(f"{where} phase", f"{p['start']:.3g}-{p['end']:.3g} s"),
                    ev("its share of the run", 100 * p["share_of_run"], "%"),
                    ev("MPI share per rank in it", 100 * p["mpi_share"], "%"),
                    ev("MPI share per rank in the main phase (outside periodic bursts)",
                       100 * base, "%"),
                    ev("ranks apart in MPI share (most - least)", 100 * p["spread"], "%"),
                    ev("MPI share step at the phase's edge", 100 * step, "%")]
        if p["top_kind"]:
            evidence.append(ev(f"kind of MPI call waited in: {p['top_kind']} "
                               f"({func or '?'} has the most of it)",
                               100 * p["kind_shares"][p["top_kind"]], "%"))
        if worker is not None:
            evidence.append(ev(f"rank least in MPI in most of its bins: {worker}", worker, ""))
        what = "input, setup" if where == "start" else "output, teardown"
        # the bins hold kinds, not functions: name the kind (the function is its largest)
        wait_in = f"{p['top_kind']} calls" if p["top_kind"] else "MPI"
        title = (f"Slow {where}: for {p['seconds']:.3g} s ({100 * p['share_of_run']:.0f} % of "
                 f"the run) ranks wait in {wait_in}"
                 + (f" while rank {worker} works" if worker is not None else ""))
        fix = (f"The {what} at the {where} of the run is serialised: the others wait in "
               f"{wait_in} while rank {worker if worker is not None else '?'} works. Spread it: "
               "every rank reads (writes) its own part with MPI-IO collective calls "
               "(MPI_File_read_at_all / MPI_File_write_at_all) instead of one rank reading "
               "and broadcasting (gathering and writing); overlap it with computing where it "
               "allows (TOMCAT on HECToR's coefficient reads, WRF on Blue Waters' I/O "
               "steps).")
        out.append(finding(rule_id, title, cost, rep,
                           ranks_field([worker]) if worker is not None else ranks_field([]),
                           evidence, fix))
    return out


def _steady_share(tl: dict, main: dict) -> float:
    """The main phase's MPI share per rank over its bins outside periodic bursts."""
    lo, hi = main["bins"]
    keep = np.zeros(len(tl["width"]), bool)
    keep[lo:hi] = True
    if tl.get("bursts"):
        keep[np.asarray(tl["bursts"]["bins"], np.int64)] = False
    w = np.asarray(tl["width"])[keep]
    if not keep.any() or w.sum() <= 0:
        return main["mpi_share"]
    return float((np.asarray(tl["share"]["mpi"])[keep] * w).sum() / w.sum())


def _in_bursts(tl: dict, p: dict) -> float:
    """The share of a phase's bins that are in periodic bursts."""
    b = tl.get("bursts")
    if not b:
        return 0.0
    lo, hi = p["bins"]
    inside = np.asarray(b["bins"], np.int64)
    return float(((inside >= lo) & (inside < hi)).sum()) / max(hi - lo, 1)
