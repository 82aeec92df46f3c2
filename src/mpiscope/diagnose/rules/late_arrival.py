"""late-arrival: time in a collective that is really waiting for late ranks (seed 004).

With MPISCOPE_SYNC data a timed barrier precedes each collective: its time
(X:sync) is waiting for the last rank, the collective's own time is the
operation. Cost = avg - min over ranks of the sync time: the last rank to
arrive waits least, and what the others wait beyond it is lateness that even
arrival would save (waiting every rank shares is not).
Without sync data, a collective whose time varies much across ranks is a
suspect: cost = avg - min of its time per rank (the fastest rank shows what
the operation itself needs), and the fix is to rerun with --sync. An upper
bound ("up to"): part of the spread can be the operation's own (a root that
does more, a rank on a slower link), which even arrival does not save; --sync
tells. Measured (perf/truth, tests/programs/diag_steps: the odd rank 40 ms,
the even 20 ms per step before an allreduce; evening it out saves 25 %): at
load 2 the rule claims 22-23 %; at load 11-20 the other processes' turns
stretch both ranks' compute and collectives alike (allreduce 1.11 vs 1.14 s
per rank, compute 2.063 vs 2.069 s: 3 % imbalance) and the profile holds no
spread to price, so the rule is silent while evening out gained 8-21 %; the
diagnosis's limits then say every time is stretched by other work.
"""

from __future__ import annotations

import numpy as np

from ... import format as fmt
from ...profile import Profile
from .. import rerun
from ..common import MIN_COST_PCT, ev, finding, ranks_field, worth
from ..sites import site_evidence

RULE = "late-arrival"
# Without sync data: CrayPat imbalance of the collective's time per rank above which the
# spread is suspicious (an operation costs every rank about the same).
SPREAD_IMB_PCT = 20.0
# Late ranks: sync time within this share of the range above the minimum (they never wait).
LATE_SHARE = 0.25


def rule(prof: Profile, rep: dict) -> list[dict]:
    rows = {r["name"]: r for r in rep["functions"]}
    if prof.flags & fmt.FLAG_SYNC:
        return _with_sync(prof, rep, rows)
    return _without_sync(prof, rep, rows)


def _with_sync(prof: Profile, rep: dict, rows: dict) -> list[dict]:
    pairs = [(rows[n[:-5]], r) for n, r in rows.items()
             if n.endswith(":sync") and n[:-5] in rows]
    sync = next(r for r in rep["summary"] if r["metric"] == "sync")
    if not pairs or sync["min"] is None:
        return []
    # The part of the barrier time that differs between ranks is lateness: the last rank to
    # arrive waits least (minPE), the others wait for it. Waiting that every rank shares (a
    # slow machine, the barrier's own latency) is not.
    cost = sync["avg"] - sync["min"]
    body_avg = sum(b["time_per_rank"]["avg"] for b, _ in pairs)
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    coll, worst = max(pairs, key=lambda p: p[1]["time"])
    if prof.is_summary:
        ranks = ranks_field([sync["min_pe"]])
    else:
        t = prof.rank_metric("sync")
        ranks = ranks_field(np.flatnonzero(t <= t.min() + LATE_SHARE * (t.max() - t.min())))
    evidence = [ev("sync barrier time before collectives, avg per rank", sync["avg"], "s"),
                ev(f"least sync time: rank {sync['min_pe']} (the last to arrive)", sync["min"], "s"),
                ev(f"most sync time: rank {sync['max_pe']}", sync["max"], "s"),
                ev("time in the collectives themselves, avg per rank", body_avg, "s"),
                ev(f"{coll['name']}: sync time / own time",
                   worst["time"] / coll["time"] if coll["time"] else float("inf"), "x")]
    evidence += site_evidence(rep, coll["name"])
    return [finding(RULE, f"Late arrival at collectives: ranks wait for the last one before "
                    f"{coll['name']} (not a slow collective)", cost, rep, ranks, evidence,
                    "Find what delays the late ranks before the collective (in POP on the "
                    "Cray XT the halo update): pre-post the receives (MPI_Irecv before the computation "
                    "that precedes the sends) and balance their work; the collective itself "
                    "is not the problem.",
                    method="sync time avg - min over ranks: the waiting beyond the last rank's, "
                           "which even arrival saves")]


def _without_sync(prof: Profile, rep: dict, rows: dict) -> list[dict]:
    out = []
    for r in rows.values():
        s = r["time_per_rank"]
        if r["kind"] != "coll" or s["min"] is None or s["imbalance_pct"] < SPREAD_IMB_PCT:
            continue
        cost = s["avg"] - s["min"]
        if not worth(cost, rep, MIN_COST_PCT):
            continue
        evidence = [ev(f"{r['name']} time per rank: min (minPE {s['min_pe']})", s["min"], "s"),
                    ev("avg", s["avg"], "s"), ev(f"max (maxPE {s['max_pe']})", s["max"], "s"),
                    ev("imbalance", s["imbalance_pct"], "%"), ev("calls", r["calls"], "")]
        evidence += site_evidence(rep, r["name"])
        ch = rerun.change("measure", run_options=["--sync"])
        out.append(finding(RULE, f"{r['name']} time varies across ranks: late arrival or a "
                           "slow collective (rerun with --sync to tell)", cost, rep,
                           ranks_field([s["max_pe"]]), evidence,
                           "Rerun with timing barriers: mpiscope run --sync times a barrier "
                           "before each collective, separating ranks arriving late from the "
                           "collective's own cost (Worley's timing barriers in POP on the Cray XT).",
                           rerun.command(prof, rep, ch), change=ch, bound="upper",
                           settle="a run with --sync (the command below) splits this time into "
                                  "waiting for late ranks and the collective's own",
                           method="the collective's time per rank, avg - min (the fastest rank "
                                  "shows what the operation itself needs)"))
    return out
