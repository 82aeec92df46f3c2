"""small-collectives: many collectives that carry one scalar each (seeds 001, 004).

"For very small buffers, aggregate data into fewer MPI calls (especially
collectives)" (seed 001); POP's CG did two 8-byte allreduces per iteration,
Chronopoulos-Gear one of two values (seed 004). A collective of at most one
8-byte value is the signature of a sum that was not fused with another.
Sizes come from the message-size histogram (both modes).

Fusing pairs halves the calls, and so the calls' own cost (latency); it does not remove the
waiting for late ranks that the calls also hold (issue 29: HPCG's and CloverLeaf's average
call was 30-200 times the fastest one). With --sync data the collective's own time is apart
from the waiting (the sync barrier before it holds that): cost = FUSE_GAIN x its own time x
the share of scalar calls. Without, the fastest call anywhere in the run (the last rank to
arrive, who waits for nobody) is what a call costs by itself: cost = FUSE_GAIN x scalar calls
x that, and the finding gives FUSE_GAIN x their whole time as the bound if all of it were
the calls' own, when the average call is more than AMBIGUOUS times the fastest (then --sync
tells, and the finding says so: its command reruns with --sync); within that, there is
hardly any waiting and the cost is FUSE_GAIN x their time.
"""

from __future__ import annotations

from ... import format as fmt
from ...profile import Profile
from .. import rerun
from ..common import MIN_COST_PCT, call_floor, ev, finding, worth
from ..sites import site_evidence

RULE = "small-collectives"
# Histogram bucket of the largest scalar: bucket b holds [2^(b-1), 2^b - 1] bytes, so
# bucket 4 is 8..15 bytes, one double (a 16-byte pair of doubles is bucket 5).
SCALAR_BUCKET = 4
# Share of the function's calls that must carry a single scalar.
SCALAR_SHARE = 0.8
# Calls per rank below which fusing cannot matter.
MIN_CALLS_PER_RANK = 100
# Share of the time that fusing saves: pairs fused into one call.
FUSE_GAIN = 0.5
SKIP = {"MPI_Barrier", "MPI_Ibarrier"}  # no data to fuse: excessive-barriers' business
# Average call / fastest call above which the calls' time is mostly waiting, not their own.
AMBIGUOUS = 2.0


def rule(prof: Profile, rep: dict) -> list[dict]:
    out = []
    n = max(prof.nranks, 1)
    scalar: dict[str, int] = {}
    doubles: dict[str, int] = {}  # calls in bucket 4 (8..15 bytes: one double or long)
    for h in rep["histogram"]:
        if h["bucket"] <= SCALAR_BUCKET:
            for name, c in h["by_function"].items():
                scalar[name] = scalar.get(name, 0) + c
                if h["bucket"] == SCALAR_BUCKET:
                    doubles[name] = doubles.get(name, 0) + c
    names = {r["name"] for r in rep["functions"]}
    for r in rep["functions"]:
        if r["kind"] != "coll" or r["name"] in SKIP or r["calls"] == 0:
            continue
        small = scalar.get(r["name"], 0)
        calls = small / n
        if small < SCALAR_SHARE * r["calls"] or calls < MIN_CALLS_PER_RANK:
            continue
        size = "8-byte" if doubles.get(r["name"], 0) * 2 > small else "one-scalar"
        share = small / r["calls"]
        avg_call = r["time"] / r["calls"]
        floor = call_floor(rep, r["name"])
        synced = prof.flags & fmt.FLAG_SYNC and f"{r['name']}:sync" in names
        whole = FUSE_GAIN * r["time_per_rank"]["avg"] * share
        ambiguous = not synced and floor is not None and avg_call > AMBIGUOUS * floor
        if ambiguous:
            cost, upper = FUSE_GAIN * calls * floor, whole
        else:  # the calls' own time: after the sync barrier, or hardly more than the fastest
            cost, upper = whole, None
        if not worth(cost, rep, MIN_COST_PCT) and not (ambiguous and worth(upper, rep, MIN_COST_PCT)):
            continue
        evidence = [ev("calls per rank", calls, ""),
                    ev("share of its calls carrying at most 15 bytes", 100.0 * share, "%"),
                    ev(f"{r['name']} time per rank (avg)", r["time_per_rank"]["avg"], "s"),
                    ev("average call", avg_call, "s")]
        if floor is not None:
            evidence.append(ev("fastest call (the last rank to arrive)", floor, "s"))
        evidence += site_evidence(rep, r["name"])
        settle = None
        command = change = None
        if ambiguous:
            settle = (f"the average call is {avg_call / floor:,.0f}x the fastest: most of their "
                      "time is waiting for late ranks, which fusing does not remove; a run "
                      "with --sync (the command below) times the waiting apart")
            change = rerun.change("measure", run_options=["--sync"])
            command = rerun.command(prof, rep, change)
        out.append(finding(RULE, f"Many small collectives: {calls:,.0f} {size} "
                           f"{r['name']} calls per rank", cost, rep,
                           {"count": prof.nranks, "min_pe": 0, "max_pe": prof.nranks - 1,
                            "list": None if prof.nranks > 16 else list(range(prof.nranks))},
                           evidence,
                           f"Fuse these {calls:,.0f} {size} {r['name']} calls: "
                           "put values that are reduced at the same point into one buffer "
                           "and one call (Chronopoulos-Gear CG halves the allreduces of "
                           "classic CG, as in POP on the Cray XT); each call costs a latency, not bandwidth.",
                           command, cost_max_s=upper if ambiguous else None, settle=settle,
                           change=change,
                           method="half of the calls' own time (after the --sync barrier)"
                           if synced else "half of their calls x the fastest call (a call's "
                           "own cost; fusing pairs saves one of two)" if ambiguous else
                           "half of the calls' time (their average call is within "
                           f"{AMBIGUOUS:g}x the fastest: hardly any waiting)"))
    return out
