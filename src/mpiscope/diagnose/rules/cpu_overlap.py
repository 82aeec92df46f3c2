"""cpu-overlap: bound ranks of one node pinned to the same CPUs while CPUs of the node are
left to others (seed 001: "multiple threads spawned on the same core, which can be
disastrous").

The runtime compares the affinity masks of each node's ranks at MPI_Init and records, per rank,
how many other bound ranks share a CPU with it and how many threads compete for its CPUs
(``load``: threads per CPU, each rank's threads spread evenly over its mask). A node whose
CPUs are fewer than the job's threads is the oversubscribed rule's: binding cannot help there.
Otherwise binding each rank to CPUs of its own gives it the CPU share the other ranks took:
with fair sharing a rank got s = CPU time / wall time of a CPU, 1/s = load + O threads of
other processes, and alone with those others it gets 1/(1 + O): a CPU-bound run shrinks by
wall x s x (load - 1) (cpu.own_share_gain; on a node free of other work s = 1/load and this is
wall x (1 - 1/load)). But other processes free to move share the new CPUs too: the kernel
evens out the run queues, so the ranks get about their threads' share of the node however they
are pinned, and CPUs of their own give them only the CPU time that sat idle (the truth benchmark
at load 9: both ranks under taskset -c 0, the model claimed 33.5 %, binding them apart gained
2.9 %, within the noise). With the node's idle time (ENV layout 3) the gain is at most
wall x I / (W + I), I the rank's part of the node's idle CPU-seconds, W its CPU time
(cpu.idle_gain), and the cost an upper bound ("up to"). Cost = the largest over the
overlapping ranks (the others wait for it).
A profile without the run-queue wait (before ENV layout 2) uses the model alone: the largest
compute time of an overlapping rank x (1 - 1/load). Unbound ranks are the unbound-ranks
rule's, not this one's.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ...report.environment import env_values
from .. import cpu, rerun
from ..common import (BIND_ANYWHERE, MIN_COST_PCT, bind_change, env_of, ev, finding, ranks_field,
                      stat, worth)
from .oversubscribed import oversubscribed_nodes

RULE = "cpu-overlap"


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    if not env or not env["overlap_ranks"]:
        return []
    comp = stat(rep, "compute")
    if prof.is_summary:
        # the runtime's reductions: the most crowded rank, and the slowest rank's compute
        load = float(env["load"]["max"])
        cost = float(comp["max"]) * (1.0 - 1.0 / max(load, 1.0))
        ranks = ranks_field([env["load"]["max_pe"]])
        evidence = [ev("ranks sharing a CPU with another bound rank of their node",
                       env["overlap_ranks"], ""),
                    ev(f"threads per CPU, most crowded rank ({env['load']['max_pe']})", load, "x")]
    else:
        v = env_values(prof)
        nd = cpu.nodes(prof)
        crowded = oversubscribed_nodes(prof, rep)
        over = np.flatnonzero((v["overlap"] > 0) & ~np.isin(nd.of_rank, crowded))
        if not len(over):
            return []
        compute = prof.rank_metric("compute")[over]
        slowdown = 1.0 - 1.0 / np.maximum(v["load"][over], 1.0)
        model = float((np.maximum(compute, 0.0) * slowdown).max())
        known = cpu.run_delay_known(prof)
        gains = cpu.own_share_gain(prof, over)
        if known and nd.idle_known:  # only the node's idle CPU time is there to take
            gains = np.minimum(gains, cpu.idle_gain(prof, nd, over,
                                                    prof.ranks["wall"][over].astype(float)))
        cost = float(gains.max()) if known else model
        ranks = ranks_field(over)
        e = prof.env
        r = int(over[0])
        cpus = prof.environment["cpus"].get(int(e["cpus"][r]), "?")
        wall = prof.ranks["wall"][over]
        share = float(np.divide(e["cpu_time"][over], wall * np.maximum(e["threads"][over], 1),
                                out=np.zeros(len(over)), where=wall > 0).mean())
        evidence = [ev(f"rank {r} shares CPUs {cpus} with rank {int(e['overlap_rank'][r])}",
                       int(e["overlap"][r]) + 1, "ranks"),
                    ev("ranks sharing a CPU with another bound rank of their node", len(over), ""),
                    ev("threads per CPU on their CPUs (max)", float(v["load"][over].max()), "x"),
                    ev("CPU time they got per thread, share of their wall time (avg)",
                       100.0 * share, "%")]
        if known:
            evidence.append(ev("time an overlapping rank waited for a CPU (max)",
                               float(prof.env["run_delay"][over].max()), "s"))
        if known and nd.idle_known:
            evidence.append(ev("CPU-seconds their node's CPUs sat idle during the run (what "
                               "CPUs of their own can give them)",
                               float(nd.idle[nd.of_rank[over]].max()), "s"))
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    ch = bind_change(prof, rep)
    measured = not prof.is_summary and cpu.run_delay_known(prof)
    capped = measured and cpu.nodes(prof).idle_known
    return [finding(RULE, f"Ranks pinned to the same CPUs: {env['overlap_ranks']:,} bound "
                    f"rank(s) share CPUs with another rank of their node", cost, rep, ranks,
                    evidence,
                    "Give every rank CPUs of its own: bind with the launcher instead of a "
                    "wrapper that pins every rank alike (taskset, numactl), e.g. "
                    + BIND_ANYWHERE + ".", rerun.command(prof, rep, ch) if ch else None,
                    bound="upper" if capped or not measured else None, change=ch,
                    settle="a bound run (the command below): compare the two profiles"
                           if capped else None,
                    method="wall x CPU share x (threads per CPU - 1): the share the other ranks "
                           "on its CPUs took (fair sharing), at most wall x the node's idle "
                           "CPU-seconds / (its CPU time + them)" if capped else
                           "wall x CPU share x (threads per CPU - 1): the share the other ranks "
                           "on its CPUs took (fair sharing)" if measured else
                           "the slowest overlapping rank's compute time x (1 - 1/threads per "
                           "CPU on its CPUs)")]
