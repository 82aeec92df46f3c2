"""Per-rank views downsampled once, in Python, keeping the extreme ranks.

A browser draws a few thousand bars comfortably, not a million. Ranks are
taken in an order (rank order, or sorted by a metric) and cut into at most
``nbuckets`` runs of consecutive positions; each bucket keeps the average of
every part of the stack, the min and max of the total and the rank holding
each. So the extreme rank of the whole job is always the max (or min) of its
bucket and is never averaged away; with P <= nbuckets every bucket is one rank
and nothing is downsampled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Bars drawn per per-rank view at most (each is up to 4 stacked rectangles).
NBUCKETS = 500


@dataclass
class Buckets:
    """Ranks in some order, cut into runs of consecutive positions.

    Attributes:
        start: first position of each bucket in the order (x of its bar).
        size: positions per bucket (width of its bar).
        avg: part name -> average of that part over the bucket's ranks.
        lo, hi: min / max over the bucket's ranks of the total (sum of parts).
        lo_rank, hi_rank: the (lowest) rank holding lo / hi.
        first_rank, last_rank: rank at the bucket's first / last position.
    """
    start: np.ndarray
    size: np.ndarray
    avg: dict[str, np.ndarray]
    lo: np.ndarray
    hi: np.ndarray
    lo_rank: np.ndarray
    hi_rank: np.ndarray
    first_rank: np.ndarray
    last_rank: np.ndarray

    @property
    def exact(self) -> bool:
        """Every bucket is one rank."""
        return bool(np.all(self.size == 1))


def bucketize(parts: dict[str, np.ndarray], order: np.ndarray | None = None,
              nbuckets: int = NBUCKETS) -> Buckets:
    """Cut per-rank ``parts`` (same length P, index = rank) taken in ``order`` into buckets.

    Arguments:
        parts: name -> per-rank values; their sum is the "total" whose min/max is kept.
        order: the ranks in display order (default: rank order).
        nbuckets: at most this many buckets (P buckets of one rank when P <= nbuckets).
    """
    n = len(next(iter(parts.values())))
    order = np.arange(n) if order is None else np.asarray(order)
    ordered = {k: np.asarray(v, dtype=np.float64)[order] for k, v in parts.items()}
    total = np.zeros(n) if not ordered else sum(ordered.values())
    nb = max(1, min(nbuckets, n))
    start = np.unique(np.linspace(0, n, nb + 1).astype(np.int64)[:-1])
    size = np.diff(np.append(start, n))
    avg = {k: np.add.reduceat(v, start) / size for k, v in ordered.items()}
    lo = np.minimum.reduceat(total, start)
    hi = np.maximum.reduceat(total, start)
    return Buckets(start=start, size=size, avg=avg, lo=lo, hi=hi,
                   lo_rank=order[_first_at(total, lo, start, size)],
                   hi_rank=order[_first_at(total, hi, start, size)],
                   first_rank=order[start], last_rank=order[start + size - 1])


def _first_at(values: np.ndarray, target: np.ndarray, start: np.ndarray,
              size: np.ndarray) -> np.ndarray:
    """Per bucket, the first position whose value equals the bucket's target (the
    bucket's first position when none does: a NaN total, from a corrupt record
    such as inf - inf, equals nothing)."""
    pos = np.arange(len(values))
    hit = np.where(values == np.repeat(target, size), pos, len(values))
    first = np.minimum.reduceat(hit, start)
    return np.where(first < len(values), first, start)


def sort_order(values: np.ndarray) -> np.ndarray:
    """Ranks by decreasing value (ties: lower rank first): the slowest rank comes first."""
    # A stable sort of the negated values keeps tied ranks in rank order.
    return np.argsort(-np.asarray(values, dtype=np.float64), kind="stable")


def position_of(order: np.ndarray, rank: int) -> int:
    """Where ``rank`` stands in ``order``."""
    return int(np.flatnonzero(order == rank)[0])
