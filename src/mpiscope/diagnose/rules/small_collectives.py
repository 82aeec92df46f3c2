"""small-collectives: many collectives that carry one scalar each (seeds 001, 004).

"For very small buffers, aggregate data into fewer MPI calls (especially
collectives)" (seed 001); POP's CG did two 8-byte allreduces per iteration,
Chronopoulos-Gear one of two values (seed 004). A collective of at most one
8-byte value is the signature of a sum that was not fused with another.
Sizes come from the message-size histogram (both modes). Cost = half the
time per rank of those calls: fusing pairs halves the calls and, for
latency-bound calls, the time.
"""

from __future__ import annotations

from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, worth
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
    for r in rep["functions"]:
        if r["kind"] != "coll" or r["name"] in SKIP or r["calls"] == 0:
            continue
        small = scalar.get(r["name"], 0)
        calls = small / n
        if small < SCALAR_SHARE * r["calls"] or calls < MIN_CALLS_PER_RANK:
            continue
        size = "8-byte" if doubles.get(r["name"], 0) * 2 > small else "one-scalar"
        cost = FUSE_GAIN * r["time_per_rank"]["avg"] * small / r["calls"]
        if not worth(cost, rep, MIN_COST_PCT):
            continue
        evidence = [ev("calls per rank", calls, ""),
                    ev("share of its calls carrying at most 15 bytes", 100.0 * small / r["calls"], "%"),
                    ev(f"{r['name']} time per rank (avg)", r["time_per_rank"]["avg"], "s")]
        evidence += site_evidence(rep, r["name"])
        out.append(finding(RULE, f"Many small collectives: {calls:,.0f} {size} "
                           f"{r['name']} calls per rank", cost, rep,
                           {"count": prof.nranks, "min_pe": 0, "max_pe": prof.nranks - 1,
                            "list": None if prof.nranks > 16 else list(range(prof.nranks))},
                           evidence,
                           f"Fuse these {calls:,.0f} {size} {r['name']} calls: "
                           "put values that are reduced at the same point into one buffer "
                           "and one call (Chronopoulos-Gear CG halves the allreduces of "
                           "classic CG, as in POP on the Cray XT); each call costs a latency, not bandwidth."))
    return out
