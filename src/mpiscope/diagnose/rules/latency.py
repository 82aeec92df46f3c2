"""small-messages: many small point-to-point messages whose per-message cost adds up (seeds 001,
003).

Packing k messages into one saves (k - 1) per-message costs, not the time spent waiting for
a partner (issue 29: LU's 0.91 s claim was mostly waiting, while its ~19,000 sends per rank at
0.2 us cost ~4 ms). Per call the profile shows what a message costs when nothing makes it
wait: for a call that never waits for its partner (MPI_Send of an eager size, MPI_Isend,
MPI_Irecv: kind p2p) the average call of its size (histogram), for one that may (MPI_Recv,
MPI_Sendrecv) the fastest call its function made anywhere in the run, never more than the
average of its size. Cost = the small messages' calls x that, per rank: an upper bound of
what aggregating saves. Their remaining time is waiting, given in the evidence.
"""

from __future__ import annotations

from ...profile import Profile
from ..common import (MIN_COST_PCT, all_ranks, ev, finding, p2p_by_bucket, p2p_calls_cost,
                      p2p_time, worth)

RULE = "small-messages"
# Messages at or below this size are latency-bound on any interconnect (1 KiB).
SMALL_BYTES = 1024
# Share of point-to-point messages that must be small.
SMALL_SHARE = 0.8


def per_message_cost(prof: Profile, rep: dict, small: set[int]) -> tuple[float, float]:
    """(the small messages' calls at their unhindered cost, their calls' time), per rank."""
    return p2p_calls_cost(prof, rep, small, posts_at_average=True)


def rule(prof: Profile, rep: dict) -> list[dict]:
    small = total = 0
    buckets: set[int] = set()
    for h, n in p2p_by_bucket(rep):
        total += n
        if h["hi"] <= SMALL_BYTES - 1:
            small += n
            buckets.add(h["bucket"])
    if total == 0 or small < SMALL_SHARE * total:
        return []
    cost, spent = per_message_cost(prof, rep, buckets)
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    n = max(prof.nranks, 1)
    evidence = [ev(f"point-to-point calls of at most {SMALL_BYTES} B (sends and receives)",
                   small, ""),
                ev("their share of all point-to-point calls with data", 100.0 * small / total, "%"),
                ev("per call, unhindered (avg)", cost * n / small if small else 0.0, "s"),
                ev("their calls' time per rank (avg)", spent, "s"),
                ev("of it, waiting for partners (not removed by packing)", spent - cost, "s"),
                ev("point-to-point time per rank (avg)", p2p_time(rep), "s")]
    return [finding(RULE, f"Small messages: {100 * small / total:.0f}% of point-to-point "
                    f"messages are at most {SMALL_BYTES} B, {small / n:,.0f} calls per rank",
                    cost, rep, all_ranks(prof), evidence,
                    "Aggregate small messages: pack the fields of one exchange into one "
                    "message per neighbour (a derived datatype or a buffer), or exchange "
                    "wider halos less often; each message costs a latency.",
                    bound="upper",
                    method="the small messages' calls, each at its unhindered cost (a posting "
                           "call's average, a receive's fastest call): what packing can save at "
                           "most")]
