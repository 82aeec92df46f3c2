"""What the CPU rules share: per node, the threads the job ran and the CPUs it had; per rank,
the time it did not run (docs/diagnose.md "CPU time").

Evidence (ENV section, docs/runtime.md "Environment"): each rank's CPU time (all its
threads), its run-queue wait (``run_delay``: runnable, but another thread had the CPU), its
affinity mask, its threads, and its node's CPUs (``node_cpus``: what the job may use there).
Layout 3 adds how long the node's CPUs sat idle meanwhile (``node_idle``): a rank that waited
while a CPU was idle was placed badly (binding helps); one that waited while every CPU was
busy was crowded out. A profile written before ENV layout 2 has neither node_cpus nor
run_delay: the node's CPUs are then
the union of the node's masks when a rank is unbound (its mask is every CPU it may use), the
time not running is wall x threads - CPU time (which also counts sleeping), and the node's
idle time is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..profile import Profile


def cpu_count(text: str) -> int:
    """CPUs of a CPU list such as "0-3,8" (0 if it is no list)."""
    n = 0
    for part in str(text or "").split(","):
        a, _, b = part.strip().partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            return 0
        n += max(hi - lo + 1, 0)
    return n


def cpu_set(text: str) -> set[int]:
    out: set[int] = set()
    for part in str(text or "").split(","):
        a, _, b = part.strip().partition("-")
        try:
            out.update(range(int(a), int(b or a) + 1))
        except ValueError:
            return set()
    return out


@dataclass
class Nodes:
    """Per node of a full-mode profile with ENV records (index k of ``ids``)."""

    ids: np.ndarray          # node ids (RANKS node)
    of_rank: np.ndarray      # index into ids of every rank
    threads: np.ndarray      # threads the job ran there (ranks x their threads)
    ranks: np.ndarray        # ranks there
    cpus: np.ndarray         # CPUs the job may use there (0: unknown)
    known: bool              # cpus is the runtime's node_cpus (ENV layout 2), not inferred
    idle: np.ndarray         # CPU-seconds those CPUs sat idle during the run (the largest
                             # reading of its ranks; ENV layout 3)
    idle_known: bool

    @property
    def oversubscribed(self) -> np.ndarray:
        """Nodes running more threads than they have CPUs (False where unknown)."""
        return (self.cpus > 0) & (self.threads > self.cpus)


def nodes(prof: Profile) -> Nodes | None:
    """The job's nodes, None without per-rank ENV records (summary mode, older runtime)."""
    e = prof.env
    if not len(e) or len(e) != prof.nranks:
        return None
    node = prof.ranks["node"].astype(np.int64)
    ids, of_rank = np.unique(node, return_inverse=True)
    of_rank = of_rank.ravel()
    threads = np.bincount(of_rank, weights=np.maximum(e["threads"], 1).astype(np.float64))
    ranks = np.bincount(of_rank, minlength=len(ids))
    known = bool((e["node_cpus"] > 0).all())
    if known:
        cpus = np.zeros(len(ids))
        np.maximum.at(cpus, of_rank, e["node_cpus"].astype(np.float64))
    else:  # an unbound rank's mask is every CPU the job may use on its node
        lists = prof.environment["cpus"]
        cpus = np.zeros(len(ids))
        unb = np.flatnonzero(e["flags"] & 1)
        for r in unb.tolist():
            k = of_rank[r]
            cpus[k] = max(cpus[k], cpu_count(lists.get(int(e["cpus"][r]), "")))
    idle = np.zeros(len(ids))
    np.maximum.at(idle, of_rank, e["node_idle"].astype(np.float64))
    return Nodes(ids, of_rank, threads, ranks, cpus, known, idle, known)


def run_delay_known(prof: Profile) -> bool:
    """The ranks' run-queue wait was recorded (ENV layout 2 on a kernel with schedstat)."""
    e = prof.env
    return bool(len(e)) and bool((e["node_cpus"] > 0).all())


def not_running(prof: Profile) -> np.ndarray:
    """Seconds per rank and thread it wanted a CPU and did not have one: the run-queue wait
    (summed over its threads by the runtime) / threads when recorded, else (wall x threads -
    CPU time) / threads, which also counts time asleep: an upper bound."""
    e = prof.env
    t = np.maximum(e["threads"], 1).astype(np.float64)
    if run_delay_known(prof):
        return e["run_delay"].astype(np.float64) / t
    wall = prof.ranks["wall"].astype(np.float64)
    return np.maximum(wall * t - e["cpu_time"], 0.0) / t


def wait_beyond_least(prof: Profile) -> np.ndarray | None:
    """Per rank, its run-queue wait per thread beyond the least of any rank (a wait every rank
    had stretches them all alike); None where the wait was not recorded."""
    if prof.is_summary or not run_delay_known(prof):
        return None
    wait = not_running(prof)
    return wait - wait.min()


def cpu_rate(prof: Profile) -> np.ndarray:
    """CPUs each rank used on average over its run (CPU time / wall time)."""
    wall = prof.ranks["wall"].astype(np.float64)
    return np.divide(prof.env["cpu_time"], wall, out=np.zeros(len(wall)), where=wall > 0)


def own_share_gain(prof: Profile, ranks: np.ndarray) -> np.ndarray:
    """Per rank (of ``ranks``): what CPUs of its own would gain a rank whose CPUs carry
    ``load`` threads of the job per CPU. With fair sharing a thread gets s = CPU time /
    (wall x threads) of a CPU, 1/s = load + O threads of other processes; alone with those
    others it would get 1/(1 + O), so a CPU-bound run shrinks by wall x s x (load - 1); at
    most wall x (1 - 1/load), the gain without other processes."""
    e = prof.env
    wall = prof.ranks["wall"][ranks].astype(np.float64)
    t = np.maximum(e["threads"][ranks], 1).astype(np.float64)
    load = np.maximum(e["load"][ranks].astype(np.float64), 1.0)
    s = np.divide(e["cpu_time"][ranks], wall * t, out=np.zeros(len(ranks)), where=wall > 0)
    return np.minimum(wall * s * (load - 1.0), wall * (1.0 - 1.0 / load))



def idle_gain(prof: Profile, nd: Nodes, ranks: np.ndarray, base: np.ndarray,
              want: np.ndarray | None = None) -> np.ndarray:
    """Per rank (of ``ranks``): base x I / (W + I), what CPUs of its own can give a rank that
    shared its CPUs, I its part of its node's idle CPU-seconds (in proportion to ``want``,
    default evenly among the node's ``ranks``), W its CPU time. Other processes free to move
    are spread by the kernel so that every run queue is alike: a rank gets about its threads'
    share of the node whatever its mask, and CPUs of its own add only the CPU time that sat
    idle (the truth benchmark at load 2-20: a core per thread or ranks bound apart gained
    nothing to speak of, or lost, where the fair-sharing model claimed 33-50 %). It runs at
    W / wall CPUs and would run at (W + I) / wall: ``base`` (its compute or wall time)
    shrinks by base x I / (W + I)."""
    e = prof.env
    want = np.ones(len(ranks)) if want is None else np.asarray(want, dtype=np.float64)
    node = nd.of_rank[ranks]
    on_node = np.bincount(node, weights=want, minlength=len(nd.ids))[node]
    idle = nd.idle[node] * np.divide(want, on_node, out=np.zeros(len(ranks)), where=on_node > 0)
    w = e["cpu_time"][ranks].astype(np.float64)
    return np.maximum(base, 0.0) * np.divide(idle, w + idle, out=np.zeros(len(ranks)),
                                             where=w + idle > 0)
