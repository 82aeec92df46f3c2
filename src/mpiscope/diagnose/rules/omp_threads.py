"""openmp-oversubscribed: a rank runs more OpenMP threads than it has CPUs (seed 001: "must
get aprun -d correct": OMP_NUM_THREADS=4 on a depth of 1 puts four threads on one core).

Per rank the runtime records the CPUs of its mask and the threads OpenMP will start
(OMP_NUM_THREADS's first level, when an OpenMP runtime is loaded). With T threads on C < T
CPUs, a parallel region runs at most C/T as fast. Cost = the largest compute time of such a
rank x (1 - C/T): what it saves with one CPU per thread (if all its compute is in parallel
regions; serial parts lose nothing, so this is an upper bound).
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ..common import BIND_ANYWHERE, MIN_COST_PCT, bind_command, env_of, ev, finding, ranks_field, stat, worth

RULE = "openmp-oversubscribed"


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    if not env or not env["oversub_ranks"]:
        return []
    if prof.is_summary:
        threads, ncpus = int(env["threads"]["max"]), int(env["ncpus"]["min"])
        comp = float(stat(rep, "compute")["max"])
        cost = comp * (1.0 - ncpus / threads) if threads > ncpus > 0 else 0.0
        ranks = ranks_field([env["threads"]["max_pe"]])
        over_count = env["oversub_ranks"]
    else:
        e = prof.env
        over = np.flatnonzero((e["threads"] > e["ncpus"]) & (e["ncpus"] > 0))
        t, c = e["threads"][over].astype(np.float64), e["ncpus"][over].astype(np.float64)
        compute = np.maximum(prof.rank_metric("compute")[over], 0.0)
        worst = int(np.argmax(compute * (1.0 - c / t)))
        cost = float(compute[worst] * (1.0 - c[worst] / t[worst]))
        threads, ncpus = int(t[worst]), int(c[worst])
        ranks = ranks_field(over)
        over_count = len(over)
    evidence = [ev("OpenMP threads per rank", threads, ""), ev("CPUs in its affinity mask", ncpus, ""),
                ev("ranks running more threads than CPUs", over_count, "")]
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    return [finding(RULE, f"{threads} OpenMP threads on {ncpus} CPU(s): {over_count:,} rank(s) "
                    "run more threads than CPUs in their mask", cost, rep, ranks, evidence,
                    f"Give each rank as many cores as threads ({BIND_ANYWHERE}), or set "
                    f"OMP_NUM_THREADS={ncpus} to the CPUs each rank has.",
                    bind_command(prof, threads))]
