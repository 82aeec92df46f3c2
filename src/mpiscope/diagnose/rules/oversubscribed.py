"""oversubscribed: a node runs more threads (ranks x their OpenMP threads) than it has CPUs.

Not a binding problem: no binding gives 4 ranks 4 CPUs on a 2-CPU node (issue 29: bound with
overload-allowed the run took the same time). The threads take turns, and a rank that
busy-polls in MPI burns its turn waiting for a partner that is not running.

What running at most one thread per CPU on the same node gains (the fix this finding's
command makes: fewer ranks, or fewer OpenMP threads): the work stays, the CPU burnt outside
it goes. Per node, the job's compute CPU-seconds W = sum over its ranks of compute time x
(CPU time / wall time) (each rank's CPU rate, taken as even over its run) and the CPUs the job
got there G = sum of CPU time / wall time. If G is below the node's C CPUs, other processes
took the rest: with fair sharing O = T (C - G) / G of them beside the job's T threads, and C
threads of the job would get G' = C x C / (C + O) (C without other processes). On G' CPUs
the same work takes W / G'. Cost = run time - the largest W / G' over the oversubscribed
nodes: an upper bound, since the MPI time a run at fewer ranks still has is not subtracted
(on a node shared with other work, fewer threads also get fewer turns: the cost can be 0).
More nodes (a CPU per thread) would gain the ranks' run-queue wait instead; the evidence
gives it.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from .. import cpu, rerun
from ..common import MIN_COST_PCT, env_of, ev, finding, ranks_field, runtime, worth

RULE = "oversubscribed"


def oversubscribed_nodes(prof: Profile, rep: dict) -> np.ndarray:
    """Node indices (cpu.nodes) running more threads than CPUs; empty where unknown."""
    nd = cpu.nodes(prof)
    return np.zeros(0, np.int64) if nd is None else np.flatnonzero(nd.oversubscribed)


def summary_oversubscribed(rep: dict) -> bool:
    """Summary mode (no per-node rows): an unbound rank's CPUs carry more than one thread each
    (its mask is every CPU its node lets the job use, so its node runs more threads than
    CPUs), or one rank alone runs more threads than its node has CPUs."""
    env = env_of(rep)
    if not env:
        return False
    cpus = float(env["node_cpus"]["min"] or 0)
    return bool(env["unbound_ranks"] and float(env["load"]["max"]) > 1.0) or \
        (cpus > 0 and float(env["threads"]["max"]) > cpus)


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    if not env:
        return []
    if prof.is_summary or not len(prof.env):
        return _summary(prof, rep, env)
    nd = cpu.nodes(prof)
    over = oversubscribed_nodes(prof, rep)
    if nd is None or not len(over):
        return []
    wall = prof.ranks["wall"].astype(np.float64)
    compute = np.maximum(prof.rank_metric("compute"), 0.0)
    rate = cpu.cpu_rate(prof)
    work = np.bincount(nd.of_rank, weights=compute * rate, minlength=len(nd.ids))
    got = np.bincount(nd.of_rank, weights=rate, minlength=len(nd.ids))
    got = np.minimum(got, nd.cpus)
    others = np.divide(nd.threads * (nd.cpus - got), got, out=np.zeros(len(got)), where=got > 0)
    cap = np.where(got > 0, nd.cpus * nd.cpus / (nd.cpus + others), nd.cpus)
    new = np.divide(work, cap, out=np.zeros(len(work)), where=cap > 0)
    t = runtime(rep)
    cost = t - float(new[over].max())
    k = int(over[np.argmax(nd.threads[over] / nd.cpus[over])])
    ranks = np.flatnonzero(np.isin(nd.of_rank, over))
    waited = cpu.not_running(prof)
    cpu_total = float(prof.env["cpu_time"][nd.of_rank == k].sum())
    evidence = [ev(f"threads on node {int(nd.ids[k])} (ranks x threads)", int(nd.threads[k]), ""),
                ev("CPUs the job may use there" + ("" if nd.known else
                                                    " (an unbound rank's mask)"),
                   int(nd.cpus[k]), ""),
                ev("CPUs the job's ranks got there (CPU time / wall time)", float(got[k]), ""),
                ev("of their CPU time, spent outside MPI calls",
                   100.0 * float(work[k]) / max(float(got[k]) * t, 1e-300)
                   if cpu_total > 0 else 0.0, "%"),
                ev("other processes' threads beside the job's (fair sharing)", float(others[k]), ""),
                ev("the same work at one thread per CPU (compute CPU-seconds / the CPUs it "
                   "would get)", float(new[k]), "s"),
                ev("time a rank waited for a CPU (max): what a CPU per thread (more nodes) "
                   "would gain", float(waited[ranks].max()), "s")]
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    ch = _fewer(prof, rep, nd, over)
    fixed = rerun.fixed_decomposition(prof)
    n_over = len(over)
    where = f"node {int(nd.ids[k])}" if n_over == 1 else f"{n_over} nodes"
    return [finding(RULE, f"More threads than CPUs: {int(nd.threads[k])} threads on "
                    f"{int(nd.cpus[k])} CPUs ({where})", cost, rep, ranks_field(ranks), evidence,
                    "Run at most one thread per CPU: fewer ranks per node (more nodes, or fewer "
                    "ranks), or fewer OpenMP threads per rank. Binding cannot help: there are "
                    "not enough CPUs to give each thread one."
                    + (f" The program's arguments fix its rank count ({fixed}): change them "
                       "with it, or run on more nodes." if fixed and ch is None else ""),
                    rerun.command(prof, rep, ch) if ch else None, bound="upper", change=ch,
                    method="run time - the job's compute CPU-seconds / the CPUs one thread per "
                           "CPU would get, on the most loaded node (MPI time at fewer ranks not "
                           "subtracted)")]


def _fewer(prof: Profile, rep: dict, nd: cpu.Nodes, over: np.ndarray) -> dict | None:
    """The change: OpenMP threads down to the CPUs per rank when that suffices, else ranks
    down to the CPUs of the nodes (one thread each); None when the program's arguments fix
    its rank count (a decomposition such as 4x4: rerun.fixed_decomposition)."""
    c = int(nd.cpus[over].min())
    ppn = int(nd.ranks[over].max())
    threads = int(np.maximum(prof.env["threads"], 1).max())
    if threads > 1 and ppn <= c:
        return rerun.change("launch", env={"OMP_NUM_THREADS": str(max(c // ppn, 1))},
                            threads=max(c // ppn, 1))
    if rerun.fixed_decomposition(prof):
        return None
    return rerun.change("launch", nranks=c * len(nd.ids),
                        env={"OMP_NUM_THREADS": "1"} if threads > 1 else None)


def _summary(prof: Profile, rep: dict, env: dict) -> list[dict]:
    if not summary_oversubscribed(rep):
        return []
    load = float(env["load"]["max"])
    # without per-rank rows: the share of the slowest rank's compute its CPUs could not give
    # it beyond their fair share is not known; the run-queue wait is
    waited = float(env["run_delay"]["max"]) / max(float(env["threads"]["max"]), 1.0)
    if not worth(waited, rep, MIN_COST_PCT):
        return []
    return [finding(RULE, f"More threads than CPUs: {load:.2g} threads per CPU on the most "
                    "crowded node", waited, rep, ranks_field([env["load"]["max_pe"]]),
                    [ev("threads per CPU (max)", load, "x"),
                     ev("unbound ranks", env["unbound_ranks"], ""),
                     ev("time a rank's thread waited for a CPU (max)", waited, "s")],
                    "Run at most one thread per CPU: fewer ranks per node (more nodes, or fewer "
                    "ranks), or fewer OpenMP threads per rank.", None, bound="upper",
                    method="the longest run-queue wait of a rank per thread (summary mode: no "
                           "per-node CPU accounting)")]
