"""Statistics over ranks: min, max, avg, minPE, maxPE and the imbalance percentage.

Imbalance follows CrayPat's definition (documented in docs/report.md):

    imbalance % = 100 * (max - avg) / max * N / (N - 1)

It is 0 when every rank has the same value and 100 when one rank holds all of
it; the N/(N-1) factor makes "everything on one rank" read 100 % at any N.
minPE / maxPE are the lowest rank holding the minimum / maximum (as MPI_MINLOC
and MPI_MAXLOC break ties, so full and summary profiles agree).
"""

from __future__ import annotations

import numpy as np


def imbalance_pct(vmax: float, avg: float, n: int) -> float:
    """CrayPat imbalance percentage of a metric whose maximum over n ranks is vmax."""
    if n <= 1 or vmax <= 0:
        return 0.0
    return 100.0 * (vmax - avg) / vmax * n / (n - 1)


def _num(x):
    """A JSON-ready Python number from a numpy scalar (ints stay ints)."""
    return int(x) if isinstance(x, (np.integer, int)) else float(x)


def rank_stats(values: np.ndarray) -> dict:
    """Stats of a dense per-rank array (index = rank): min/max/avg/sum/minPE/maxPE/imbalance."""
    n = len(values)
    if n == 0:
        return {"min": 0, "max": 0, "avg": 0.0, "sum": 0, "min_pe": None, "max_pe": None,
                "imbalance_pct": 0.0}
    imin, imax = int(np.argmin(values)), int(np.argmax(values))
    total = values.sum()
    avg = float(total) / n
    return {"min": _num(values[imin]), "max": _num(values[imax]), "avg": avg,
            "sum": _num(total), "min_pe": imin, "max_pe": imax,
            "imbalance_pct": imbalance_pct(float(values[imax]), avg, n)}


def sparse_rank_stats(ranks: np.ndarray, values: np.ndarray, nranks: int) -> dict:
    """Stats over nranks ranks of a value given per record (rank, value); absent ranks count 0.

    Records of the same rank are summed first (np.bincount), so this also folds
    several regions or records of one rank together.
    """
    per_rank = np.bincount(ranks, weights=values, minlength=nranks)
    return rank_stats(per_rank)


def summary_stats(rec, nranks: int) -> dict:
    """Stats of one SUMMARY record (reduced by the runtime with MINLOC/MAXLOC)."""
    vmax, total = float(rec["max"]), float(rec["sum"])
    avg = total / nranks if nranks else 0.0
    return {"min": float(rec["min"]), "max": vmax, "avg": avg, "sum": total,
            "min_pe": int(rec["min_rank"]), "max_pe": int(rec["max_rank"]),
            "imbalance_pct": imbalance_pct(vmax, avg, nranks)}
