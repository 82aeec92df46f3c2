"""small-messages: point-to-point time dominated by small, latency-bound messages (seeds 001, 003).

Cost = average per-rank time in point-to-point calls (p2p + wait kinds)
times the share of their messages that are small: the time of calls whose
cost is mostly latency. Packing k messages into one saves (k - 1)/k of it.
"""

from __future__ import annotations

from ...profile import Profile
from ..common import MIN_COST_PCT, all_ranks, ev, finding, p2p_by_bucket, p2p_time, worth

RULE = "small-messages"
# Messages at or below this size are latency-bound on any interconnect (1 KiB).
SMALL_BYTES = 1024
# Share of point-to-point messages that must be small.
SMALL_SHARE = 0.8


def rule(prof: Profile, rep: dict) -> list[dict]:
    small = total = 0
    for h, n in p2p_by_bucket(rep):
        total += n
        if h["hi"] <= SMALL_BYTES - 1:
            small += n
    if total == 0 or small < SMALL_SHARE * total:
        return []
    p2p = p2p_time(rep)
    cost = p2p * small / total
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    evidence = [ev(f"point-to-point messages of at most {SMALL_BYTES} B", small, ""),
                ev("their share of all point-to-point messages", 100.0 * small / total, "%"),
                ev("point-to-point time per rank (avg)", p2p, "s")]
    return [finding(RULE, f"Small messages: {100 * small / total:.0f}% of point-to-point "
                    f"messages are at most {SMALL_BYTES} B (latency-bound)", cost, rep,
                    all_ranks(prof), evidence,
                    "Aggregate small messages: pack the fields of one exchange into one "
                    "message per neighbour (a derived datatype or a buffer), or exchange "
                    "wider halos less often; each message costs a latency.")]
