"""openmp-oversubscribed: a rank runs more OpenMP threads than it has CPUs (seed 001: "must
get aprun -d correct": OMP_NUM_THREADS=4 on a depth of 1 puts four threads on one core).

Per rank the runtime records the CPUs of its mask and the threads OpenMP will start
(OMP_NUM_THREADS's first level, when an OpenMP runtime is loaded). With T threads on C < T
CPUs the threads share the work, so a parallel region takes the time of C threads, not T
(issue 29: 2 threads on 1 CPU ran about 15 % slower than 1 thread, not twice as slow).

Where the node has a CPU for every thread of the job (else it is the oversubscribed rule's),
the fix gives each rank T CPUs; a region then runs T/C times as fast, if the new CPUs are free.
From the evidence: the rank's threads waited for its CPUs (run-queue wait) while they shared
them; with T threads on C CPUs each region of length L makes them wait (T - C) x L in all, and
one CPU per thread saves L x (T - C)/T, so the gain is at most the run-queue wait / T. But the
wait also counts other processes' turns on those CPUs, and the new CPUs serve other processes
too: where those are free to move (most are), the kernel evens out the run queues, so a rank
gets about its threads' share of the node whatever its mask, and CPUs of its own only give it
the CPU time that sat idle (the truth benchmark at load 20 and at load 2: the rule claimed 50 %
from the wait, a core per thread LOST 23-46 %; 2 threads on 1 core beside other work ran faster
than 1). So the extra threads can only use the node's idle CPU-seconds I (ENV layout 3), shared
by the node's oversubscribed ranks in proportion to the threads they lack: with W = its CPU time
it runs at W / wall CPUs and would run at (W + I) / wall, so its compute shrinks by
compute x I / (W + I) (alone on a 2-CPU node, one core for 2 threads: I = W, half the compute,
as it should). Cost = the largest, over such ranks, of the smallest of that, the wait / T and
compute x (T - C)/(T + O) (O = T (C - G)/G other threads on its C CPUs from the CPUs G it got,
fair sharing: a profile without the node's idle time), at most compute x (1 - C/T). An upper
bound ("up to"): the idle time and the parallel regions need not have coincided; `settle`: a run
with a core per thread (the command).
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from .. import cpu, rerun
from ..common import (BIND_ANYWHERE, MIN_COST_PCT, bind_change, env_of, ev, finding, ranks_field,
                      stat, worth)
from .oversubscribed import oversubscribed_nodes, summary_oversubscribed

RULE = "openmp-oversubscribed"


def shared_gain(prof: Profile, over: np.ndarray) -> np.ndarray:
    """Per rank of ``over``: compute x (T - C)/(T + O), with O = T (C - G)/G the other
    processes' threads on its C CPUs (G = CPU time / wall: the CPUs it got; fair sharing)."""
    e = prof.env
    t, c = e["threads"][over].astype(np.float64), e["ncpus"][over].astype(np.float64)
    wall = prof.ranks["wall"][over].astype(np.float64)
    got = np.divide(e["cpu_time"][over], wall, out=np.zeros(len(over)), where=wall > 0)
    others = np.divide(t * np.maximum(c - got, 0.0), got, out=np.zeros(len(over)), where=got > 0)
    compute = np.maximum(prof.rank_metric("compute")[over], 0.0)
    return compute * (t - c) / (t + others)


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    if not env or not env["oversub_ranks"]:
        return []
    known = idle_known = False
    if prof.is_summary or not len(prof.env):
        if summary_oversubscribed(rep):
            return []
        threads, ncpus = int(env["threads"]["max"]), int(env["ncpus"]["min"])
        comp = float(stat(rep, "compute")["max"])
        bound = comp * (1.0 - ncpus / threads) if threads > ncpus > 0 else 0.0
        idle_known = bool(env["node_cpus"]["max"])
        # the new CPUs give at most the node's idle CPU-seconds (ENV layout 3)
        idle = float(env["node_idle"]["max"])
        cost = min(bound, idle) if idle_known else bound
        ranks = ranks_field([env["threads"]["max_pe"]])
        over_count = env["oversub_ranks"]
    else:
        e = prof.env
        nd = cpu.nodes(prof)
        crowded = oversubscribed_nodes(prof, rep)
        over = np.flatnonzero((e["threads"] > e["ncpus"]) & (e["ncpus"] > 0)
                              & ~np.isin(nd.of_rank, crowded))
        if not len(over):
            return []
        t, c = e["threads"][over].astype(np.float64), e["ncpus"][over].astype(np.float64)
        compute = np.maximum(prof.rank_metric("compute")[over], 0.0)
        bounds = compute * (1.0 - c / t)
        known = cpu.run_delay_known(prof)
        gains = np.minimum(e["run_delay"][over] / t, shared_gain(prof, over)) if known else bounds
        idle_known = known and nd.idle_known
        if idle_known:
            gains = np.minimum(gains, cpu.idle_gain(prof, nd, over, compute, t - c))
        worst = int(np.argmax(gains))
        cost, bound = float(gains[worst]), float(bounds[worst])
        threads, ncpus = int(t[worst]), int(c[worst])
        ranks = ranks_field(over)
        over_count = len(over)
        idle = float(nd.idle[nd.of_rank[over[worst]]])
    evidence = [ev("OpenMP threads per rank", threads, ""), ev("CPUs in its affinity mask", ncpus, ""),
                ev("ranks running more threads than CPUs", over_count, ""),
                ev("what one CPU per thread gains at most (all compute in parallel regions)",
                   bound, "s")]
    if idle_known:
        evidence.append(ev("CPU-seconds its node's CPUs sat idle during the run (what CPUs of "
                           "its own can give it)", idle, "s"))
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    ch = bind_change(prof, rep, threads)
    return [finding(RULE, f"{threads} OpenMP threads on {ncpus} CPU(s): {over_count:,} rank(s) "
                    "run more threads than CPUs in their mask", cost, rep, ranks, evidence,
                    f"Give each rank as many cores as threads ({BIND_ANYWHERE}), or set "
                    f"OMP_NUM_THREADS={ncpus} to the CPUs each rank has.",
                    rerun.command(prof, rep, ch) if ch else None,
                    bound="upper" if idle_known or not known else None,
                    cost_max_s=bound if known and not idle_known else None, change=ch,
                    settle="a run with a core per thread (the command below): compare the two "
                           "profiles" if idle_known else None,
                    method="compute x the node's idle CPU-seconds / (its CPU time + them) (what "
                           "CPUs of its own can give it where the kernel evens out the run "
                           "queues), at most its run-queue wait / its threads" if idle_known else
                           "the rank's run-queue wait / its threads (what one CPU per thread "
                           "saves), at most compute x (threads - CPUs) / (threads + other "
                           "processes' threads on its CPUs)" if known else
                           "compute x (1 - CPUs/threads): all compute in parallel regions")]
