"""Sampled functions in findings: which functions carry a compute imbalance, from the
report's "Compute by function (sampled)" rows (``rep["samples"]``, docs/sampling.md):
"rank 1 spends 2.7x the average in heavy_kernel (cost.c)". Rules call
:func:`imbalance_functions` and quote what it returns; no rule reads the file again.
"""

from __future__ import annotations

import os

from .common import ev

# A function carries the imbalance when its own (max - avg) across ranks is at least this
# share of the rank-level compute (max - avg).
CARRY_SHARE = 0.2
MAX_NAMED = 2


def imbalance_functions(rep: dict, compute_gap: float) -> list[dict]:
    """The sampled functions whose max - avg time over ranks is at least CARRY_SHARE of
    compute_gap, largest first (at most MAX_NAMED): {"function", "file", "rank", "max",
    "avg", "gap", "ratio"}; [] when the run was not sampled."""
    sm = rep.get("samples") or {}
    if not sm.get("recorded") or compute_gap <= 0:
        return []
    out = []
    for r in sm.get("functions", ()):
        if r["function"].startswith("("):      # other addresses, unknown, no symbol
            continue
        st = r["time_per_rank"]
        gap = st["max"] - st["avg"]
        if gap >= CARRY_SHARE * compute_gap and st["avg"] > 0:
            out.append({"function": r["function"],
                        "file": os.path.basename(r["file"]) if r["file"] else None,
                        "rank": st["max_pe"], "max": st["max"], "avg": st["avg"], "gap": gap,
                        "ratio": st["max"] / st["avg"]})
    out.sort(key=lambda f: -f["gap"])
    return out[:MAX_NAMED]


def sentence(f: dict) -> str:
    """ "rank 2 spends 4.0x the average in heavy_kernel (solver.c)" """
    where = f" ({f['file']})" if f["file"] else ""
    return f"rank {f['rank']} spends {f['ratio']:.1f}x the average in {f['function']}{where}"


def evidence(funcs: list[dict]) -> list[dict]:
    return [ev(f"{sentence(f)}: sampled time max - avg", f["gap"], "s") for f in funcs]
