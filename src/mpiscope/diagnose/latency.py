"""small-messages: point-to-point time dominated by small, latency-bound messages (seeds 001, 003).

Cost = average per-rank time in point-to-point calls (p2p + wait kinds)
times the share of their messages that are small: the time of calls whose
cost is mostly latency. Packing k messages into one saves (k - 1)/k of it.
"""

from __future__ import annotations

from ..profile import Profile
from .common import MIN_COST_PCT, ev, finding, worth

RULE = "small-messages"
# Messages at or below this size are latency-bound on any interconnect (1 KiB).
SMALL_BYTES = 1024
# Share of point-to-point messages that must be small.
SMALL_SHARE = 0.8


def rule(prof: Profile, rep: dict) -> list[dict]:
    kinds = {r["name"]: r["kind"] for r in rep["functions"]}
    small = total = 0
    for h in rep["histogram"]:
        if h["bucket"] == 0:
            continue  # 0-byte calls (MPI_PROC_NULL at a domain's edge, empty messages) carry nothing
        n = sum(c for f, c in h["by_function"].items() if kinds.get(f) == "p2p")
        total += n
        if h["hi"] <= SMALL_BYTES - 1:
            small += n
    if total == 0 or small < SMALL_SHARE * total:
        return []
    p2p = sum(r["time_per_rank"]["avg"] for r in rep["functions"] if r["kind"] in ("p2p", "wait"))
    cost = p2p * small / total
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    evidence = [ev(f"point-to-point messages of at most {SMALL_BYTES} B", small, ""),
                ev("their share of all point-to-point messages", 100.0 * small / total, "%"),
                ev("point-to-point time per rank (avg)", p2p, "s")]
    n = prof.nranks
    return [finding(RULE, f"Small messages: {100 * small / total:.0f}% of point-to-point "
                    f"messages are at most {SMALL_BYTES} B (latency-bound)", cost, rep,
                    {"count": n, "min_pe": 0, "max_pe": n - 1,
                     "list": None if n > 16 else list(range(n))}, evidence,
                    "Aggregate small messages: pack the fields of one exchange into one "
                    "message per neighbour (a derived datatype or a buffer), or exchange "
                    "wider halos less often; each message costs a latency.")]
