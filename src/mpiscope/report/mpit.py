"""MPI_T performance variables (MPISCOPE_MPIT=1): per variable, its value at
MPI_Finalize and its peak (a level's sampled high-water mark) as per-rank
min/max/avg with minPE/maxPE (docs/report.md, docs/runtime.md "MPI_T
performance variables").

Pure functions over the profile's MPIT records and META "mpit".
"""

from __future__ import annotations

import numpy as np

from .. import format as fmt
from ..profile import Profile
from .imbalance import rank_stats, summary_stats

NONE_AVAILABLE = "no MPI_T performance variables available from this MPI library"


def mpit_section(prof: Profile) -> dict:
    """The report's "mpit" entry.

    Returns ``{"recorded": bool, "why_none": str|None, "library_pvars": int|None,
    "sample_interval_us": int|None, "variables": [V...]}``; ``recorded`` is
    False when the run had MPISCOPE_MPIT unset (no META "mpit"). Each V:
    ``{"name", "what", "class", "kind", "over", "elements", "bound", "desc",
    "value": S, "peak": S, "samples": S|None}`` where S is the per-rank
    statistics dict (min, max, avg, sum, min_pe, max_pe, imbalance_pct) over
    all ranks (a rank without the variable counts 0).
    """
    meta = prof.meta.get("mpit")
    if not isinstance(meta, dict):
        return {"recorded": False, "why_none": None, "library_pvars": None,
                "sample_interval_us": None, "variables": []}
    variables = prof.mpit_variables
    out = []
    for idx, info in enumerate(variables):
        row = {k: info.get(k) if isinstance(info.get(k), (str, int, float, type(None))) else None
               for k in ("name", "what", "class", "kind", "over", "elements", "bound", "desc")}
        row["name"] = str(row["name"] or f"#{idx}")
        row.update(_stats(prof, idx))
        out.append(row)
    why = meta.get("why_none")
    if not out and not isinstance(why, str):
        why = NONE_AVAILABLE
    return {"recorded": True, "why_none": why if not out else None,
            "library_pvars": _int(meta.get("library_pvars")),
            "sample_interval_us": _int(meta.get("sample_interval_us")), "variables": out}


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _stats(prof: Profile, idx: int) -> dict:
    recs = prof.mpit
    if prof.is_summary:
        mine = recs[recs["func"] == idx]
        got = {}
        for m, key in enumerate(fmt.MPIT_METRICS):
            r = mine[mine["metric"] == m]
            got[key] = summary_stats(r[0], prof.nranks) if len(r) else None
        return {**got, "samples": None}
    mine = recs[recs["var"] == idx]
    got = {}
    for key in (*fmt.MPIT_METRICS, "samples"):
        dense = np.zeros(prof.nranks, dtype=np.float64)
        dense[mine["rank"]] = mine[key]
        got[key] = rank_stats(dense)
    return got
