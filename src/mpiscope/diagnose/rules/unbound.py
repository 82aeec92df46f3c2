"""unbound-ranks: ranks free to run on every CPU of a node they share with other ranks.

The runtime flags a rank unbound when its mask holds every CPU the node's ranks use, the
node runs more than one rank and has more than one CPU (``--bind-to none``, or a launcher
without binding). The kernel may then stack two ranks on one CPU while another idles, and
move them away from their memory (issue 29: MPICH CG at 2 unbound ranks ran 1.27 s with CPU
time 0.65 s; bound, 0.25 s in 3 of 4 runs).

On a node with at least as many CPUs as the job's threads (more threads is the
oversubscribed rule's), what binding can gain is the time the unbound ranks wanted a CPU
while one of the node's CPUs sat idle: a rank that waited while every CPU was busy was
crowded out by other processes, and binding would not give it a CPU (that is cpu-starved's
business). Cost = the smaller of the largest run-queue wait of an unbound rank and the node's
idle CPU-seconds over the run: an upper bound (the idle time and the waits need not have
coincided); a bound run tells (the finding's command). A profile without the node's idle time
(before ENV layout 3) prices the wait alone, and one without the run-queue wait (before
layout 2) wall x threads - CPU time, which also counts sleeping.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from .. import cpu, rerun
from ..common import (BIND_ANYWHERE, bind_change, env_of, ev, finding, ranks_field, stat)
from .oversubscribed import oversubscribed_nodes, summary_oversubscribed

RULE = "unbound-ranks"


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    if not env or not env["unbound_ranks"]:
        return []
    if prof.is_summary or not len(prof.env):
        if summary_oversubscribed(rep):
            return []
        load = float(env["load"]["max"])
        waited = float(env["run_delay"]["max"]) / max(float(env["threads"]["max"]), 1.0)
        ranks = ranks_field([env["unbound"]["max_pe"]])
        evidence = [ev("unbound ranks", env["unbound_ranks"], "")]
        known = bool(env["node_cpus"]["max"])
        cost = min(waited, float(env["node_idle"]["max"])) if known else (
            float(stat(rep, "compute")["max"]) * (1.0 - 1.0 / load) if load > 1.0 else 0.0)
    else:
        e = prof.env
        nd = cpu.nodes(prof)
        over = oversubscribed_nodes(prof, rep)
        unb = np.flatnonzero((e["flags"] & 1) & ~np.isin(nd.of_rank, over))
        if not len(unb):
            return []
        load = float(e["load"][unb].max())
        known = True
        waited = cpu.not_running(prof)[unb]
        idle = float(nd.idle[nd.of_rank[unb]].max())
        cost = min(float(waited.max()), idle) if nd.idle_known else float(waited.max())
        ranks = ranks_field(unb)
        r = int(unb[0])
        node = int(prof.ranks["node"][r])
        wall = prof.ranks["wall"][unb].astype(np.float64)
        evidence = [ev("unbound ranks", len(unb), ""),
                    ev(f"rank {r} may run on CPUs", prof.environment["cpus"].get(
                        int(e["cpus"][r]), "?"), ""),
                    ev(f"ranks on its node ({node})", int((prof.ranks["node"] == node).sum()), ""),
                    ev("CPU time / wall time of the unbound ranks (min)",
                       100.0 * float((e["cpu_time"][unb] / np.maximum(wall, 1e-300)).min()), "%"),
                    ev("time an unbound rank waited for a CPU (max)" if cpu.run_delay_known(prof)
                       else "time an unbound rank did not run (max: wall - CPU time)",
                       float(waited.max()), "s")]
        if nd.idle_known:
            evidence.append(ev("CPU-seconds its node's CPUs sat idle meanwhile", idle, "s"))
    evidence.append(ev("threads per CPU on their CPUs (max)", load, "x"))
    ch = bind_change(prof, rep)
    why = ("they waited for a CPU while a CPU of their node sat idle" if cost > 0 else
           "the kernel may stack them on one CPU or move them away from their memory")
    return [finding(RULE, f"Unbound ranks on a shared node: {env['unbound_ranks']:,} rank(s) "
                    f"may run on any CPU of their node; {why}", cost, rep, ranks, evidence,
                    "Bind each rank to its own cores so the kernel cannot stack or move them: "
                    + BIND_ANYWHERE + ".", rerun.command(prof, rep, ch) if ch else None,
                    bound="upper" if known else None, change=ch,
                    settle="a bound run (the command below) tells stacking (binding removes "
                           "the wait) from other processes on the node (the wait stays): "
                           "compare the two profiles",
                    method="the longest run-queue wait of an unbound rank, at most the node's "
                           "idle CPU-seconds (binding can only give it an idle CPU)" if known else
                           "the slowest rank's compute time x (1 - 1/threads per CPU)")]
