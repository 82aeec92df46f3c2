"""Communication analyses: message-size histogram, on-/off-node traffic, top pairs.

Pure functions over the profile's numpy record arrays; no Python loop runs over
ranks or records.
"""

from __future__ import annotations

import numpy as np

NBUCKETS = 256  # the bucket field is a u8


def bucket_range(bucket: int) -> tuple[int, int]:
    """Smallest and largest message size (bytes) of a histogram bucket."""
    if bucket == 0:
        return 0, 0
    return 1 << (bucket - 1), (1 << bucket) - 1


def histogram(hist: np.ndarray, functions: list[str]) -> list[dict]:
    """Calls per log2 size bucket, summed over ranks and regions, split by function.

    Arguments:
        hist: fmt.HIST records (full mode: per rank; summary: already summed).
        functions: META function names.
    Returns:
        one dict per non-empty bucket, smallest first: bucket, lo, hi (bytes),
        count, time, by_function {name: count}.
    """
    if len(hist) == 0:
        return []
    nfunc = max(len(functions), 1)
    key = hist["func"].astype(np.int64) * NBUCKETS + hist["bucket"]
    # Counts are integers; float64 sums of integers are exact below 2**53.
    counts = np.bincount(key, weights=hist["count"], minlength=nfunc * NBUCKETS)
    times = np.bincount(key, weights=hist["time"], minlength=nfunc * NBUCKETS)
    counts = counts.reshape(-1, NBUCKETS)
    times = times.reshape(-1, NBUCKETS)
    per_bucket, time_bucket = counts.sum(axis=0), times.sum(axis=0)
    rows = []
    for b in np.flatnonzero(per_bucket):
        lo, hi = bucket_range(int(b))
        by_func = {functions[f]: int(counts[f, b]) for f in np.flatnonzero(counts[:, b])}
        rows.append({"bucket": int(b), "lo": lo, "hi": hi, "count": int(per_bucket[b]),
                     "time": float(time_bucket[b]), "by_function": by_func})
    return rows


def traffic_from_ranks(ranks: np.ndarray) -> dict:
    """On-/off-node point-to-point totals as each rank's runtime classified them."""
    out = {f: int(ranks[f].sum(dtype=np.uint64)) for f in
           ("on_node_msgs", "on_node_bytes", "off_node_msgs", "off_node_bytes")}
    return _with_totals(out)


def traffic_from_peers(peers: np.ndarray, node_of_rank: np.ndarray) -> dict:
    """On-/off-node point-to-point totals recomputed from the PEERS records,
    by the same rule `mpiscope place evaluate` applies to an order.

    Arguments:
        peers: fmt.PEER records (sender rank, destination peer, msgs, bytes).
        node_of_rank: node id of every rank (e.g. rank // ppn to model a placement).
    """
    from ..place.evaluate import traffic_of_pairs

    t = traffic_of_pairs(node_of_rank, peers["rank"].astype(np.int64),
                         peers["peer"].astype(np.int64), peers["msgs"], peers["bytes"])
    return _with_totals({"on_node_msgs": t.on_msgs, "on_node_bytes": t.on_bytes,
                         "off_node_msgs": t.off_msgs, "off_node_bytes": t.off_bytes})


def _with_totals(t: dict) -> dict:
    t["total_msgs"] = t["on_node_msgs"] + t["off_node_msgs"]
    t["total_bytes"] = t["on_node_bytes"] + t["off_node_bytes"]
    t["off_node_msgs_pct"] = 100.0 * t["off_node_msgs"] / t["total_msgs"] if t["total_msgs"] else 0.0
    t["off_node_bytes_pct"] = (100.0 * t["off_node_bytes"] / t["total_bytes"]
                               if t["total_bytes"] else 0.0)
    return t


def top_pairs(peers: np.ndarray, nranks: int, k: int,
              node_of_rank: np.ndarray | None = None) -> list[dict]:
    """The k rank pairs exchanging the most bytes, both directions added together.

    Returns:
        dicts a < b, msgs, bytes (a->b plus b->a), bytes_ab, bytes_ba and, with
        node_of_rank, on_node; sorted by bytes (then msgs) descending, then by (a, b).
    """
    if len(peers) == 0 or k <= 0:
        return []
    src = peers["rank"].astype(np.uint64)
    dst = peers["peer"].astype(np.uint64)
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    key = lo * np.uint64(nranks) + hi
    pair, inv = np.unique(key, return_inverse=True)
    nbytes = peers["bytes"].astype(np.float64)
    fwd = src <= dst
    bytes_ab = np.bincount(inv, weights=np.where(fwd, nbytes, 0.0), minlength=len(pair))
    bytes_ba = np.bincount(inv, weights=np.where(fwd, 0.0, nbytes), minlength=len(pair))
    msgs = np.bincount(inv, weights=peers["msgs"].astype(np.float64), minlength=len(pair))
    total = bytes_ab + bytes_ba
    k = min(k, len(pair))
    # Every pair tied with the k-th largest competes; ties go by msgs, then the lowest pair.
    kth = np.partition(total, len(total) - k)[len(total) - k]
    cand = np.flatnonzero(total >= kth)
    order = np.lexsort((pair[cand], -msgs[cand], -total[cand]))[:k]
    out = []
    for i in cand[order]:
        a, b = divmod(int(pair[i]), nranks)
        row = {"a": a, "b": b, "msgs": int(msgs[i]), "bytes": int(total[i]),
               "bytes_ab": int(bytes_ab[i]), "bytes_ba": int(bytes_ba[i])}
        if node_of_rank is not None:
            row["on_node"] = bool(node_of_rank[a] == node_of_rank[b])
        out.append(row)
    return out
