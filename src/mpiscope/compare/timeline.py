"""Two timelines aligned (docs/compare.md "timeline"): the compare dict's "timeline".

Both runs' per-bin shares (the reports' "timeline" sections) are put on one grid of
COLUMNS columns over the longer run, in seconds since MPI_Init: the same moment of the
two runs side by side (a column past a run's end is null). Their phases and bursts are
listed per side, so a start that got shorter or bursts that appeared show.
"""

from __future__ import annotations

import numpy as np

COLUMNS = 64


def resample(start, width, values, edges: np.ndarray) -> list:
    """Per-bin shares onto the cells [edges[i], edges[i+1]): the overlap-weighted mean of
    the bins a cell covers; None where it covers none (past the run's end)."""
    start, width, values = (np.asarray(x, np.float64) for x in (start, width, values))
    end = start + width
    lo, hi = edges[:-1, None], edges[1:, None]
    overlap = np.clip(np.minimum(hi, end[None, :]) - np.maximum(lo, start[None, :]), 0, None)
    w = overlap.sum(axis=1)
    v = (overlap * values[None, :]).sum(axis=1) / np.where(w > 0, w, 1.0)
    return [float(x) if ok else None for x, ok in zip(v, w > 1e-12 * max(float(edges[-1]), 1e-300))]


def _phases(tl: dict) -> list[dict]:
    keep = ("index", "label", "start", "end", "share_of_run", "mpi_share", "top_kind",
            "least_mpi_rank")
    return [{k: p[k] for k in keep} for p in tl["phases"]]


def _bursts(tl: dict) -> dict | None:
    b = tl.get("bursts")
    return None if not b else {k: b[k] for k in ("period", "count", "duration", "first",
                                                 "mpi_share_in", "mpi_share_out")}


def compare_timelines(ta: dict | None, tb: dict | None, columns: int = COLUMNS) -> dict:
    """The two report "timeline" dicts on one time axis."""
    if not (ta and ta.get("available") and tb and tb.get("available")):
        which = [k for k, t in (("A", ta), ("B", tb)) if not (t and t.get("available"))]
        return {"available": False, "why": f"no timeline in {' and '.join(which)}"}
    end = max(ta["end_seconds"], tb["end_seconds"])
    edges = np.linspace(0.0, end, columns + 1)
    kinds = sorted(set(ta["kinds"]) | set(tb["kinds"]))
    side = {}
    for key, t in (("a", ta), ("b", tb)):
        zero = np.zeros(len(t["width"]))
        side[key] = {k: resample(t["start"], t["width"], t["share"].get(k, zero), edges)
                     for k in kinds + ["mpi", "compute"]}
        side[key]["mpi_min"] = resample(t["start"], t["width"], t["mpi_min"], edges)
        side[key]["mpi_max"] = resample(t["start"], t["width"], t["mpi_max"], edges)
    return {"available": True, "columns": columns, "start": edges[:-1].tolist(),
            "column_seconds": float(end / columns), "end_seconds": {"a": ta["end_seconds"],
                                                                    "b": tb["end_seconds"]},
            "bin_seconds": {"a": ta["bin_seconds"], "b": tb["bin_seconds"]}, "kinds": kinds,
            "a": side["a"], "b": side["b"],
            "phases": {"a": _phases(ta), "b": _phases(tb)},
            "bursts": {"a": _bursts(ta), "b": _bursts(tb)}}


def worse_items(t: dict) -> list[tuple[float, str]]:
    """(seconds, sentence) for what got worse in time: bursts that appeared or grew."""
    if not t.get("available"):
        return []
    ba, bb = t["bursts"]["a"], t["bursts"]["b"]
    items = []
    if bb and not ba:
        items.append((bb["count"] * bb["duration"] * (bb["mpi_share_in"] - bb["mpi_share_out"]),
                      f"periodic bursts appeared: every {bb['period']:.3g} s, {bb['duration']:.3g} "
                      f"s each ({bb['count']} times)"))
    elif ba and bb and bb["duration"] > 1.05 * ba["duration"]:
        items.append(((bb["duration"] - ba["duration"]) * bb["count"],
                      f"periodic bursts grew: {ba['duration']:.3g} -> {bb['duration']:.3g} s each "
                      f"(every {ba['period']:.3g} -> {bb['period']:.3g} s)"))
    return items
