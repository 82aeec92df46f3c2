"""POP Centre of Excellence efficiency metrics from a profile (docs/metrics.md).

    parallel efficiency      = load balance x communication efficiency
    load balance             = avg(useful) / max(useful)
    communication efficiency = max(useful) / runtime
    communication efficiency = serialisation x transfer      (MPISCOPE_SYNC runs)

useful = a rank's time outside MPI (wall - MPI); runtime = the longest rank's
wall time. A profile has no trace, so transfer is approximated from the sync
barriers: the time a rank spends inside a collective *after* its sync barrier
(everyone has arrived) is data movement that an ideal network would remove;
waiting before it is not. Point-to-point time is not split and stays in
serialisation. ``metrics`` is the pure formula; the other functions only pull
the per-rank arrays it needs out of a Profile.
"""

from __future__ import annotations

import numpy as np

from .. import format as fmt
from ..profile import Profile

KEYS = ("parallel_efficiency", "load_balance", "communication_efficiency",
        "serialisation", "transfer")


def _clip(x: float) -> float:
    # Clock granularity and MPI time counted on several threads can push a ratio a hair
    # past 1; the metric is defined in [0, 1].
    return float(min(1.0, max(0.0, x)))


def metrics(useful: np.ndarray, runtime: float, transfer_time: float | None = None) -> dict:
    """The five POP numbers from per-rank useful time.

    Arguments:
        useful: time outside MPI of every rank taking part (seconds).
        runtime: elapsed time of the run or region (the longest rank's).
        transfer_time: time an ideal network would remove from the runtime
            (MPISCOPE_SYNC runs), or None when the profile cannot tell.
    Returns:
        {key: float in [0, 1] or None} for every key of KEYS.
    """
    out = dict.fromkeys(KEYS)
    if len(useful) == 0 or runtime <= 0 or float(np.min(useful)) < 0:
        return out
    umax, uavg = float(np.max(useful)), float(np.mean(useful))
    if umax <= 0:
        return out
    out["load_balance"] = _clip(uavg / umax)
    out["communication_efficiency"] = _clip(umax / runtime)
    out["parallel_efficiency"] = _clip(uavg / runtime)
    if transfer_time is not None:
        ideal = max(runtime - transfer_time, umax)  # an ideal network cannot beat the work
        out["transfer"] = _clip(ideal / runtime)
        out["serialisation"] = _clip(umax / ideal)
    return out


def summary_metrics(compute_max: float, compute_sum: float, nranks: int, runtime: float,
                    compute_min: float) -> dict:
    """POP numbers from a summary profile's reduced compute time (no sync split)."""
    out = dict.fromkeys(KEYS)
    if nranks == 0 or runtime <= 0 or compute_max <= 0 or compute_min < 0:
        return out
    avg = compute_sum / nranks
    out["load_balance"] = _clip(avg / compute_max)
    out["communication_efficiency"] = _clip(compute_max / runtime)
    out["parallel_efficiency"] = _clip(avg / runtime)
    return out


def _kind_mask(prof: Profile, funcs: np.ndarray, kind: str) -> np.ndarray:
    kinds = np.array(prof.function_kinds + ["other"])
    f = np.minimum(funcs["func"].astype(np.int64), len(kinds) - 1)
    return kinds[f] == kind


def _transfer_time(prof: Profile, funcs: np.ndarray, ranks: np.ndarray) -> float | None:
    """Average per-rank time in collectives after their sync barrier, or None without sync."""
    if not prof.flags & fmt.FLAG_SYNC or len(ranks) == 0:
        return None
    coll = _kind_mask(prof, funcs, "coll")
    per_rank = np.bincount(funcs["rank"][coll], weights=funcs["time"][coll],
                           minlength=prof.nranks)
    return float(per_rank[ranks].mean())


def pop_section(prof: Profile, nested: dict[int, set[int]] | None = None,
                only: int | None = None) -> dict:
    """``rep["pop"]``: POP metrics of the whole run and of every region.

    Arguments:
        prof: the profile.
        nested: region id -> itself and the regions nested in it (full mode;
            from report.build), so region numbers are inclusive like the
            region tables.
        only: restrict the regions to this id (``--region``).
    """
    notes = ["useful time = wall - MPI time per rank; runtime = the longest rank's wall time "
             "(MPI_Init to MPI_Finalize); from the profile's totals, not a trace"]
    sync = bool(prof.flags & fmt.FLAG_SYNC)
    if sync:
        notes.append("serialisation/transfer: transfer = time inside collectives after their "
                     "sync barrier (removed by an ideal network); point-to-point time is not "
                     "split and stays in serialisation")
    else:
        notes.append("serialisation and transfer need MPISCOPE_SYNC data: "
                     "rerun with `mpiscope run --sync`")
    if prof.is_summary:
        return _summary_pop(prof, notes, only)
    if prof.nranks == 0 or len(prof.ranks) == 0:
        return {"available": False, "why_not": "the profile has no ranks",
                "whole": dict.fromkeys(KEYS), "regions": [], "notes": notes}
    useful = prof.rank_metric("compute")
    runtime = float(prof.ranks["wall"].max())
    why_not = None
    if float(useful.min()) < 0:
        threads = int(prof.ranks["threads"].max())
        why_not = (f"MPI time exceeds wall time on some rank (summed over {threads} threads "
                   "that called MPI), so useful time is unknown")
    whole = metrics(useful, runtime, _transfer_time(prof, prof.funcs, np.arange(prof.nranks)))
    regions = [] if why_not else _region_pop(prof, nested or {}, only)
    if whole["load_balance"] is None and why_not is None:
        why_not = "no rank spent time outside MPI"
    return {"available": why_not is None, "why_not": why_not, "whole": whole,
            "regions": regions, "notes": notes}


def _region_pop(prof: Profile, nested: dict[int, set[int]], only: int | None) -> list[dict]:
    regs, funcs = prof.regions, prof.funcs
    names = prof.region_names
    out = []
    for rid in np.unique(regs["region"]).tolist():
        if only is not None and rid != only:
            continue
        mine = regs[regs["region"] == rid]
        ranks = np.unique(mine["rank"]).astype(np.int64)
        wall = np.bincount(mine["rank"], weights=mine["wall"], minlength=prof.nranks)[ranks]
        inside = funcs[np.isin(funcs["region"], np.fromiter(nested.get(rid, {rid}), np.uint64))]
        mpi = np.bincount(inside["rank"], weights=inside["time"], minlength=prof.nranks)[ranks]
        runtime = float(wall.max()) if len(wall) else 0.0
        m = metrics(wall - mpi, runtime, _transfer_time(prof, inside, ranks))
        out.append({"name": names.get(rid, f"{rid:016x}"), "ranks": int(len(ranks)), **m})
    out.sort(key=lambda r: r["name"])
    return out


def _summary_pop(prof: Profile, notes: list[str], only: int | None) -> dict:
    summ = prof.summary
    level = summ[summ["func"] == fmt.SUMMARY_RANK_LEVEL]

    def rec(metric):
        r = level[level["metric"] == fmt.RANK_METRICS.index(metric)]
        return r[0] if len(r) else None

    comp, wall = rec("compute"), rec("wall")
    notes = notes + ["summary mode: load balance and communication efficiency come from the "
                     "runtime's reduced min/max/sum of compute time; regions have no per-rank "
                     "wall time, so they have no POP numbers; no serialisation/transfer split"]
    if comp is None or wall is None:
        return {"available": False, "why_not": "the summary has no rank-level compute/wall rows",
                "whole": dict.fromkeys(KEYS), "regions": [], "notes": notes}
    whole = summary_metrics(float(comp["max"]), float(comp["sum"]), prof.nranks,
                            float(wall["max"]), float(comp["min"]))
    fsumm = summ[(summ["func"] != fmt.SUMMARY_RANK_LEVEL) & (summ["region"] != 0)]
    names = prof.region_names
    regions = [{"name": names.get(rid, f"{rid:016x}"), "ranks": None, **dict.fromkeys(KEYS)}
               for rid in np.unique(fsumm["region"]).tolist() if only is None or rid == only]
    why_not = None
    if whole["load_balance"] is None:
        why_not = ("MPI time exceeds wall time on some rank, or no rank computed: "
                   "useful time is unknown")
    return {"available": why_not is None, "why_not": why_not, "whole": whole,
            "regions": sorted(regions, key=lambda r: r["name"]), "notes": notes}
