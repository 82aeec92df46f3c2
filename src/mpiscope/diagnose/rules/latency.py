"""small-messages: many small point-to-point messages whose per-message cost adds up (seeds 001,
003).

Packing k messages into one saves (k - 1) per-message costs, not the time spent waiting for
a partner (issue 29: LU's 0.91 s claim was mostly waiting, while its ~19,000 sends per rank at
0.2 us cost ~4 ms). Per call the profile shows what a message costs when nothing makes it
wait: for a call that never waits for its partner (MPI_Send of an eager size, MPI_Isend,
MPI_Irecv: kind p2p) the average call of its size (histogram), for one that may (MPI_Recv,
MPI_Sendrecv) the fastest call its function made anywhere in the run, never more than the
average of its size. A non-blocking message also costs its completion: the calls that
complete requests (MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome) at their fastest call
each, the small messages' share of the requests posted (16 messages of 64 B per neighbour
packed into one: MPI_Waitall's time fell by 70 %, a third of what packing gained; without it
the claim was half the gain, perf/truth's small-messages-latency). Cost = the small
messages' calls x that, plus their share of the completions, per rank: an upper bound of
what aggregating saves. Their remaining time is waiting, given in the evidence.
"""

from __future__ import annotations

from ...profile import Profile
from ..common import (MIN_COST_PCT, all_ranks, call_floor, ev, finding, hist_cells,
                      p2p_by_bucket, p2p_calls_cost, p2p_time, worth)

RULE = "small-messages"
# Messages at or below this size are latency-bound on any interconnect (1 KiB).
SMALL_BYTES = 1024
# Share of point-to-point messages that must be small.
SMALL_SHARE = 0.8


# The calls that post a request of one point-to-point message ...
POSTS = ("MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv", "MPI_Imrecv")
# ... and those that complete requests: a Wait's fastest call is a completion that did not
# wait. MPI_Test* are left out: a polling loop calls them however many messages there are.
COMPLETIONS = ("MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome")


def requests_posted(rep: dict) -> float:
    """Requests posted by all ranks: non-blocking messages, non-blocking collectives
    (MPI_I<collective>, kind coll) and persistent starts (one per MPI_Start or MPI_Startall
    call: the array's length is not recorded, so the small messages' share is overstated, as
    an upper bound may be)."""
    return float(sum(r["calls"] for r in rep["functions"]
                     if r["name"] in POSTS or r["name"] in ("MPI_Start", "MPI_Startall")
                     or (r["kind"] == "coll" and r["name"].startswith("MPI_I"))))


def completion_cost(prof: Profile, rep: dict, small: set[int]) -> tuple[float, float]:
    """(the completion calls at their fastest, their time), per rank, times the share of the
    requests that are small non-blocking messages (size buckets ``small``)."""
    posted = requests_posted(rep)
    small_posts = sum(calls for (name, bucket), (calls, _) in hist_cells(prof).items()
                      if name in POSTS and bucket in small)
    if posted <= 0 or small_posts <= 0:
        return 0.0, 0.0
    share = min(small_posts / posted, 1.0)
    n = max(prof.nranks, 1)
    cost = spent = 0.0
    for r in rep["functions"]:
        if r["name"] not in COMPLETIONS or r["calls"] <= 0:
            continue
        time = r["time"]
        floor = call_floor(rep, r["name"])
        per_call = time / r["calls"] if floor is None else min(floor, time / r["calls"])
        cost += share * r["calls"] * per_call / n
        spent += share * time / n
    return cost, spent


def per_message_cost(prof: Profile, rep: dict, small: set[int]) -> tuple[float, float]:
    """(the small messages' calls and their share of the completions at their unhindered
    cost, the time of both), per rank."""
    cost, spent = p2p_calls_cost(prof, rep, small, posts_at_average=True)
    done, done_spent = completion_cost(prof, rep, small)
    return cost + done, spent + done_spent


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
                ev("per call, unhindered, with its completion (avg)",
                   cost * n / small if small else 0.0, "s"),
                ev("of the cost, completing their requests (MPI_Wait*, fastest calls)",
                   completion_cost(prof, rep, buckets)[0], "s"),
                ev("their calls' time per rank (avg, with their share of MPI_Wait*)", spent, "s"),
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
                           "call's average, a receive's fastest call), and their share of the "
                           "requests' completions (MPI_Wait*, at their fastest calls): what "
                           "packing can save at most")]
