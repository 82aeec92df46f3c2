"""Per rank count: repetitions reduced to min/median/max, speedup and efficiency (pure).

Strong scaling (same problem, more ranks): speedup S(P) = T(P0) / T(P) and
parallel efficiency E(P) = S(P) * P0 / P, both relative to the smallest rank
count P0 (P0 = 1 gives the textbook definitions). Weak scaling (work per rank
fixed): efficiency relative to the smallest run, E(P) = T(P0) / T(P), as seed
000's WRF table. T is the median wall time over repetitions (max over ranks).
"""

from __future__ import annotations

import numpy as np

from .collect import COMPUTE, POP_KEYS


def _stats(values: list[float]) -> dict:
    v = np.asarray(values, float)
    return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max()),
            "n": int(v.size)}


def per_p(runs: list[dict], kind: str) -> list[dict]:
    """One row per rank count with a done run, ascending P."""
    nps = sorted({r["np"] for r in runs})
    rows = []
    for n in nps:
        mine = [r for r in runs if r["np"] == n]
        pop = None
        pops = [r["pop"] for r in mine if r["pop"]]
        if pops:
            pop = {}
            for k in POP_KEYS:
                vals = [p[k] for p in pops if p.get(k) is not None]
                pop[k] = float(np.median(vals)) if vals else None
        rows.append({
            "np": n, "reps": len(mine),
            "wall_s": _stats([r["wall_s"] for r in mine]),
            "wall_avg_s": _stats([r["wall_avg_s"] for r in mine]),
            "elapsed_s": _stats([r["elapsed_s"] for r in mine if r["elapsed_s"] is not None]
                                or [float("nan")]),
            "mpi_pct": float(np.median([r["mpi_pct"] for r in mine])),
            "pop": pop,
        })
    if rows:
        p0, t0 = rows[0]["np"], rows[0]["wall_s"]["median"]
        for row in rows:
            t = row["wall_s"]["median"]
            if kind == "strong":
                row["speedup"] = t0 / t if t > 0 else None
                row["efficiency"] = row["speedup"] * p0 / row["np"] if t > 0 else None
            else:
                row["speedup"] = None
                row["efficiency"] = t0 / t if t > 0 else None
    return rows


def function_names(runs: list[dict], min_share: float = 0.0) -> list[str]:
    """Functions (and (compute)) by their largest share of the average wall time over P.

    ``min_share`` drops those that never reach that fraction of a run's wall time.
    """
    share: dict[str, float] = {}
    for r in runs:
        for name, t in r["functions"].items():
            s = t / r["wall_avg_s"] if r["wall_avg_s"] > 0 else 0.0
            share[name] = max(share.get(name, 0.0), s)
    names = [n for n, s in share.items() if s >= min_share and (s > 0 or n == COMPUTE)]
    return sorted(names, key=lambda n: (-share[n], n))


def function_times(runs: list[dict], names: list[str]) -> dict[str, dict]:
    """name -> {"np": [...], "median": [...], "min": [...], "max": [...], "values": [[per rep]]}

    Time per rank (average over ranks) in seconds; a function a run did not
    call counts 0 s in that run.
    """
    nps = sorted({r["np"] for r in runs})
    out = {}
    for name in names:
        vals = [[r["functions"].get(name, 0.0) for r in runs if r["np"] == n] for n in nps]
        out[name] = {"np": nps, "values": vals,
                     "median": [float(np.median(v)) for v in vals],
                     "min": [float(min(v)) for v in vals], "max": [float(max(v)) for v in vals]}
    return out
