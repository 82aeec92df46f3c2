"""root-hotspot: one rank receives (or sends) nearly all of a function's bytes (seed 002).

TOMCAT gathered every field to rank 0, which computed the zonal means alone.
Cost = the average per-rank time in the function that funnels the bytes
(every rank waits for the root in it) - an upper bound of what distributing
the work saves.
"""

from __future__ import annotations

import numpy as np

from ... import format as fmt
from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, ranks_field, worth
from ..sites import site_evidence

RULE = "root-hotspot"
# Share of all bytes a function receives (or sends) that one rank must hold.
ROOT_SHARE = 0.75
# Bytes through the root below which the funnel cannot cost much (1 MiB at 1 GB/s is 1 ms).
ROOT_MIN_BYTES = 1 << 20


def hotspots(prof: Profile) -> list[tuple[str, str, int, float, float]]:
    """(function, "received"|"sent", rank, share, bytes) where one rank holds >= ROOT_SHARE."""
    out = []
    if prof.nranks < 2:
        return out
    names = prof.functions
    if prof.is_summary:
        s = prof.summary
        for direction, metric in (("received", "bytes_recv"), ("sent", "bytes_sent")):
            recs = s[(s["func"] != fmt.SUMMARY_RANK_LEVEL)
                     & (s["metric"] == fmt.FUNC_METRICS.index(metric))]
            for r in recs:
                if r["sum"] > 0 and r["max"] / r["sum"] >= ROOT_SHARE and r["max"] >= ROOT_MIN_BYTES:
                    out.append((names[int(r["func"])], direction, int(r["max_rank"]),
                                float(r["max"] / r["sum"]), float(r["max"])))
        return out
    f = prof.funcs
    for fid in np.unique(f["func"]).tolist():
        mine = f[f["func"] == fid]
        if names[fid].endswith(":sync"):
            continue
        for direction, field in (("received", "bytes_recv"), ("sent", "bytes_sent")):
            b = np.bincount(mine["rank"], weights=mine[field].astype(np.float64),
                            minlength=prof.nranks)
            total = b.sum()
            r = int(np.argmax(b))
            if total > 0 and b[r] / total >= ROOT_SHARE and b[r] >= ROOT_MIN_BYTES:
                out.append((names[fid], direction, r, float(b[r] / total), float(b[r])))
    return out


def rule(prof: Profile, rep: dict) -> list[dict]:
    rows = {r["name"]: r for r in rep["functions"]}
    out = []
    for name, direction, rank, share, nbytes in hotspots(prof):
        row = rows.get(name)
        if row is None or row["kind"] == "io":
            continue  # I/O through one rank is io-serial's finding
        cost = row["time_per_rank"]["avg"]
        if not worth(cost, rep, MIN_COST_PCT):
            continue
        evidence = [ev(f"bytes rank {rank} {direction} in {name}", int(nbytes), "B"),
                    ev(f"its share of all bytes {direction} in {name}", 100.0 * share, "%"),
                    ev(f"{name} time per rank (avg)", cost, "s"), ev("calls", row["calls"], "")]
        evidence += site_evidence(rep, name)
        comp = next(r for r in rep["summary"] if r["metric"] == "compute")
        if comp["max_pe"] == rank and comp["imbalance_pct"] > 0:
            evidence.append(ev(f"rank {rank} is also maxPE of compute time, imbalance",
                               comp["imbalance_pct"], "%"))
        fix = ("Do the work where the data is: reduce locally and gather only the results, "
               "e.g. gather row sums with MPI_Gatherv (derived datatypes placing each band) "
               "instead of every field to rank %d (TOMCAT on HECToR)." % rank
               if direction == "received" else
               "Rank %d sends nearly everything: let each rank read or compute its own part "
               "instead of distributing it from one rank, or use a tree/collective that "
               "spreads the sending." % rank)
        out.append(finding(RULE, f"Root hot spot: rank {rank} {direction} {100 * share:.0f}% "
                           f"of the bytes of {name}", cost, rep, ranks_field([rank]),
                           evidence, fix, bound="upper",
                           method=f"the time per rank in {name} (every rank waits for the root "
                                  "in it)"))
    return out
