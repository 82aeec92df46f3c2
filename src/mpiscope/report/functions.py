"""Per-function tables: % of MPI time, totals, and per-rank time statistics.

Full mode reduces the FUNCS records (one per rank, function, region); summary
mode reads the runtime's own cross-rank reduction (SUMMARY records).
"""

from __future__ import annotations

import numpy as np

from .. import format as fmt
from .imbalance import sparse_rank_stats, summary_stats


def _row(name: str, kind: str, calls: int, sent: int, recv: int, time: float,
         mpi_total: float, per_rank: dict | None, call_min=None, call_max=None) -> dict:
    return {"name": name, "kind": kind,
            "pct_mpi": 100.0 * time / mpi_total if mpi_total > 0 else 0.0,
            "time": time, "calls": calls, "bytes_sent": sent, "bytes_recv": recv,
            "time_per_rank": per_rank, "call_time_min": call_min, "call_time_max": call_max}


def function_table(funcs: np.ndarray, nranks: int, names: list[str], kinds: list[str],
                   mpi_total: float, select: np.ndarray | None = None) -> list[dict]:
    """One row per function present in ``funcs`` (full mode), most time first.

    Arguments:
        funcs: fmt.FUNC records, possibly several regions per (rank, function):
            they are summed per rank.
        nranks: ranks in the job; a rank without a record of a function has 0.
        mpi_total: seconds of MPI time over all ranks (the % denominator).
        select: optional boolean mask of the records to use (e.g. one region);
            only the needed columns of the selected records are gathered.
    Returns:
        dicts (see docs/report.md, FUNCTION), most time first.
    """
    idx = None if select is None else np.flatnonzero(select)
    fid = funcs["func"] if idx is None else funcs["func"][idx]
    if len(fid) == 0:
        return []
    rows = []
    # One comparison pass per function present (a program uses few), no sort.
    for f in np.flatnonzero(np.bincount(fid)).tolist():
        g = np.flatnonzero(fid == f)
        if idx is not None:
            g = idx[g]
        time = funcs["time"][g]
        stats = sparse_rank_stats(funcs["rank"][g], time, nranks)
        rows.append(_row(names[f], kinds[f] if f < len(kinds) else "other",
                         int(funcs["calls"][g].sum(dtype=np.uint64)),
                         int(funcs["bytes_sent"][g].sum(dtype=np.uint64)),
                         int(funcs["bytes_recv"][g].sum(dtype=np.uint64)),
                         float(time.sum()), mpi_total, stats,
                         float(funcs["time_min"][g].min()), float(funcs["time_max"][g].max())))
    rows.sort(key=lambda r: (-r["time"], r["name"]))
    return rows


def summary_function_table(summary: np.ndarray, nranks: int, names: list[str],
                           kinds: list[str], mpi_total: float) -> list[dict]:
    """Rows from SUMMARY records (summary mode), most time first.

    Totals (sum over ranks) add up across regions exactly; per-rank min/max and
    minPE/maxPE exist only for a function recorded in a single region, because
    the runtime reduced each (function, region) separately. Otherwise
    ``time_per_rank`` has ``min``/``max``/``min_pe``/``max_pe`` = None.
    """
    recs = summary[summary["func"] != fmt.SUMMARY_RANK_LEVEL]
    rows = []
    for f in np.unique(recs["func"]):
        mine = recs[recs["func"] == f]
        by_metric = {m: mine[mine["metric"] == i] for i, m in enumerate(fmt.FUNC_METRICS)}
        sums = {m: r["sum"].sum() for m, r in by_metric.items()}
        t = by_metric["time"]
        if len(t) == 1:
            stats = summary_stats(t[0], nranks)
        else:
            avg = float(sums["time"]) / nranks if nranks else 0.0
            stats = {"min": None, "max": None, "avg": avg, "sum": float(sums["time"]),
                     "min_pe": None, "max_pe": None, "imbalance_pct": None}
        f = int(f)
        rows.append(_row(names[f], kinds[f] if f < len(kinds) else "other",
                         int(round(sums["calls"])), int(round(sums["bytes_sent"])),
                         int(round(sums["bytes_recv"])), float(sums["time"]), mpi_total, stats))
    rows.sort(key=lambda r: (-r["time"], r["name"]))
    return rows
