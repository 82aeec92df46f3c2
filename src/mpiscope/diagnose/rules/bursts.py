"""periodic-bursts: at regular intervals some ranks work while the others wait in MPI.

Seed 002 (TOMCAT) "noticed the blips on certain time steps": output and coefficient reads
on rank 0 at fixed intervals, every other rank waiting. The report's timeline finds the
bursts (report/timeline.py ``bursts``: regular rises of the MPI share per bin); this rule
says who works in them (the ranks least in MPI there), who waits and in which kind of
call, and what spreading the work would gain.

Cost: the MPI time per rank (avg over ranks) in the burst bins above the MPI share between
bursts. If the bursts' work were spread evenly over the P ranks, each would do 1/P of it
and none would wait: the run would shorten by the waiting the others do now, which is
that excess ((P - 1) / P of the bursts' duration when one rank works).

Full mode with the ranks' run-queue wait recorded: the cost beyond the largest run-queue
wait of a rank in excess of the least of any rank must reach the bar too. Another process
taking a rank's CPU in time slices stretches that rank's compute or its MPI time in bursts
(it "works" while its partners wait, or it "waits" while they work); that is cpu-starved's
(a busy loop pinned to one rank's core: 8-27 % "bursts" before this).
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from .. import cpu
from ..common import MIN_COST_PCT, ev, finding, ranks_field, runtime, worth

RULE = "periodic-bursts"
# Full mode: a rank works in the bursts (causes them) when its MPI share in the burst bins is
# below this share of the largest rank's; it waits when above WAITS.
WORKS = 0.5
WAITS = 0.5
# Calls per rank of the waited-in function per period below this: a wait at every call.
MIN_CALLS_PER_PERIOD = 1.5


def top_function(rep: dict, kind: str | None) -> str | None:
    """The function of a kind with the most time (the call the ranks most likely wait in)."""
    rows = [r for r in rep["functions"] if r["kind"] == kind]
    return max(rows, key=lambda r: r["time"])["name"] if rows else None


def calls_per_period(rep: dict, func: str | None, period: float, nranks: int) -> float | None:
    """How many times per burst period a rank calls ``func`` (averaged over the run)."""
    rows = [r for r in rep["functions"] if r["name"] == func]
    run = runtime(rep)
    if not rows or run <= 0:
        return None
    return rows[0]["calls"] / max(nranks, 1) * period / run


def rank_shares(prof: Profile, bins: np.ndarray) -> np.ndarray | None:
    """Full mode: each rank's MPI share of the given bins (None in summary mode)."""
    tl = prof.timeline_bins
    if tl is None or tl.values is None or not bins.any():
        return None
    width = np.minimum(tl.starts + tl.bin_seconds, tl.end_seconds) - tl.starts
    return tl.row("mpi")[:, bins].sum(axis=1) / max(float(width[bins].sum()), 1e-300)


def rule(prof: Profile, rep: dict) -> list[dict]:
    tl = rep.get("timeline") or {}
    b = tl.get("bursts") if tl.get("available") else None
    if not b:
        return []
    nb = len(tl["width"])
    bins = np.zeros(nb, bool)
    bins[np.asarray(b["bins"], np.int64)] = True
    width = np.asarray(tl["width"])
    mpi = np.asarray(tl["share"]["mpi"])
    cost = float(((mpi[bins] - b["mpi_share_out"]).clip(0) * width[bins]).sum())
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    kinds = {k: float((np.asarray(tl["share"][k])[bins] * width[bins]).sum()) for k in tl["kinds"]}
    kind = max(kinds, key=kinds.get) if kinds else None
    func = top_function(rep, kind)
    P = prof.nranks
    per_period = calls_per_period(rep, func, b["period"], P)
    if per_period is not None and per_period < MIN_CALLS_PER_PERIOD:
        return []
    shares = rank_shares(prof, bins)
    if shares is not None:
        workers = np.flatnonzero(shares < WORKS * shares.max())
        waiters = np.flatnonzero(shares >= WAITS)
        excess = cpu.wait_beyond_least(prof)
        if excess is not None and not worth(cost - float(excess.max()), rep, MIN_COST_PCT):
            return []           # a rank's CPU was taken in slices: cpu-starved's
    else:   # summary mode: the rank least in MPI in most burst bins; the others wait
        lo = np.asarray(tl["min_pe"])[bins]
        u, c = np.unique(lo, return_counts=True)
        workers = u[c == c.max()][:1]
        waiters = np.setdiff1d(np.arange(P), workers) if P <= 16 else None
    nwait = len(waiters) if waiters is not None else P - len(workers)
    who = (f"rank {int(workers[0])}" if len(workers) == 1 else f"{len(workers)} ranks") \
        if len(workers) else "no single rank"
    evidence = [ev("period", b["period"], "s"), ev("bursts", b["count"], ""),
                ev("duration of a burst", b["duration"], "s"), ev("first burst at", b["first"], "s"),
                ev("MPI share per rank in the bursts", 100 * b["mpi_share_in"], "%"),
                ev("MPI share per rank between them", 100 * b["mpi_share_out"], "%")]
    if len(workers):
        evidence.append(ev(f"working in the bursts (least in MPI): {_ranks_text(workers)}",
                           100 * (float(shares[workers].mean()) if shares is not None else
                                  float(np.asarray(tl["mpi_min"])[bins].mean())),
                           "% of the time in MPI"))
    if kind:
        evidence.append(ev(f"waiting ranks are in {kind} calls ({func or 'no function'} has the "
                           f"most {kind} time)", 100 * kinds[kind] / max(sum(kinds.values()), 1e-300),
                           "% of the bursts' MPI time"))
    evidence.append(ev("ranks waiting", nwait, ""))
    wait_in = func or f"{kind} calls" if kind else "MPI"
    title = (f"Periodic bursts: every {b['period']:.3g} s {who} works {b['duration']:.3g} s "
             f"while {nwait} rank(s) wait in {wait_in}")
    if kind == "io":
        fix = ("The bursts are I/O that every rank waits for: write less often, or with "
               "collective MPI-IO (MPI_File_write_at_all, aggregators spread over the nodes), "
               "or overlap it with computing (nonblocking MPI_File_iwrite_all, a dedicated "
               "I/O rank); see io-serial and io-aggregators.")
    else:
        fix = (f"Output, input or bookkeeping on {who} at fixed steps keeps the others waiting "
               f"in {wait_in}: distribute that work (each rank writes or reads its own part "
               "with MPI-IO, or reduces locally and gathers only the results, as TOMCAT on "
               "HECToR's GBSTAT rework did), or take it off the critical path (nonblocking "
               "collectives, a dedicated I/O rank). Narrow it down with MPI_Pcontrol "
               "regions around the suspect steps and `mpiscope report --region`.")
    return [finding(RULE, title, cost, rep, ranks_field(workers) if len(workers) else
                    ranks_field(np.arange(P)), evidence, fix)]


def _ranks_text(ranks: np.ndarray) -> str:
    r = [int(x) for x in ranks]
    return ", ".join(map(str, r[:8])) + (f" ... ({len(r)} ranks)" if len(r) > 8 else "")
