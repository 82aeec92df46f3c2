"""cpu-starved: ranks that wanted their CPU while other processes (other jobs, daemons, a
runaway process) ran on it.

Issue 29: LU ran 21 s instead of 1.9 s with its CPU time 26 % of its wall time, and nothing
said so. The runtime records each rank's run-queue wait (``run_delay``: runnable, but another
thread had the CPU). Part of it can be the job's own doing, priced by other rules: a rank
whose CPUs carry ``load`` > 1 threads of the job (oversubscribed, overlapping) waits
1 - 1/load of the time for its own kind, and an unbound rank's wait while a CPU of its node
sat idle is the kernel's placement (unbound-ranks). The rest is other processes' doing. The
ranks wait for each other, so the run stretches by about the most any rank waited: cost = the
largest such remainder over the ranks, what CPUs of the job's own would give back. An upper
bound ("up to"): part of a rank's wait can fall while it sat in MPI waiting for others anyway,
and a fix short of CPUs of its own (moving one of the other processes) gives back only part of
it (the truth benchmark at load 4-20 removed the one busy process it had planted, the other
engineers' work stayed: claimed 69-96 %, gained 13-34 %). A profile written before ENV
layout 2 has no run-queue wait: there, for ranks bound apart, the time a single-threaded rank
spent outside MPI without its CPU (compute time - CPU time) is the evidence, also an upper
bound (it also counts time asleep in I/O or sleep()).
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from .. import cpu
from ..common import MIN_COST_PCT, env_of, ev, finding, ranks_field, runtime, worth

RULE = "cpu-starved"
# A rank is named when it waited at least this share of the largest wait.
NAMED_SHARE = 0.5


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    if not env:
        return []
    if prof.is_summary or not len(prof.env):
        return _summary(prof, rep, env)
    nd = cpu.nodes(prof)
    if nd is None:
        return []
    e = prof.env
    known = cpu.run_delay_known(prof)
    if known:
        wall = prof.ranks["wall"].astype(np.float64)
        t = np.maximum(e["threads"], 1).astype(np.float64)
        load = np.maximum(np.maximum(e["load"], nd.threads[nd.of_rank] / np.maximum(
            nd.cpus[nd.of_rank], 1)), 1.0)
        own = t * wall * (1.0 - 1.0 / load)            # waiting for the job's own threads
        delay = e["run_delay"].astype(np.float64)
        unbound = (e["flags"] & 1) != 0
        placed = np.where(unbound & nd.idle_known, np.minimum(delay, nd.idle[nd.of_rank]), 0.0)
        waited = np.maximum(delay - own - placed, 0.0) / t   # per thread: the run's stretch
        mine = np.ones(len(waited), bool)
        how = ("the longest run-queue wait of a rank beyond what the job's own threads and the "
               "kernel's placement explain (other processes on its CPU): what CPUs of the job's "
               "own give back at most")
    else:
        mine = ~nd.oversubscribed[nd.of_rank] & ((e["flags"] & 1) == 0) & (e["overlap"] == 0) & \
            (e["threads"] <= np.maximum(e["ncpus"], 1))
        compute = np.maximum(prof.rank_metric("compute"), 0.0)
        waited = np.where(e["threads"] <= 1, np.maximum(compute - e["cpu_time"], 0.0), 0.0)
        delay = waited
        how = ("the longest time a rank computed without its CPU (compute time - CPU time; "
               "it also counts sleeping: an older profile has no run-queue wait)")
    # No rank gains more than its run: the run-queue wait is read over a window a little
    # wider than MPI_Init..MPI_Finalize, which on a run of milliseconds under load can
    # exceed the run itself (CI: 100.7 % of a 38 ms ping-pong).
    wall = prof.ranks["wall"].astype(np.float64)
    waited = np.minimum(np.where(mine, waited, 0.0), wall)
    cost = float(waited.max())
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    r = int(np.argmax(waited))
    named = np.flatnonzero(waited >= NAMED_SHARE * cost)
    evidence = [ev(f"rank {r}: waited for a CPU" if known else f"rank {r}: computed without "
                   "its CPU", float(delay[r]), "s"),
                ev(f"rank {r}: of it, while other processes had its CPU", cost, "s"),
                ev(f"rank {r}: CPU time / wall time", 100.0 * float(e["cpu_time"][r]) /
                   max(float(wall[r]), 1e-300), "%"),
                ev(f"threads the job ran on its node / CPUs there",
                   f"{int(nd.threads[nd.of_rank[r]])} / {int(nd.cpus[nd.of_rank[r]]) or '?'}", ""),
                ev("ranks that waited at least half as long", len(named), "")]
    return [finding(RULE, f"CPU taken by other processes: rank {r} waited "
                    f"{100 * cost / max(float(wall[r]), 1e-300):.0f}% of its run for its CPU",
                    cost, rep, ranks_field(named), evidence,
                    "Other processes ran on the job's CPUs (other jobs, daemons, a runaway "
                    "process): run on CPUs of your own (an exclusive allocation: srun "
                    "--exclusive, #SBATCH --exclusive) or find them (top -H, ps -eLo "
                    "psr,pcpu,comm) and move them; then profile again.", None,
                    bound="upper", method=how,
                    settle="rerun when the node is free of other work and compare the two "
                           "profiles (mpiscope compare)")]


def _summary(prof: Profile, rep: dict, env: dict) -> list[dict]:
    if env["unbound_ranks"] or env["overlap_ranks"] or env["oversub_ranks"] or \
            not env["node_cpus"]["max"]:
        return []
    cost = min(float(env["run_delay"]["max"]) / max(float(env["threads"]["max"]), 1.0),
               runtime(rep))
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    r = env["run_delay"]["max_pe"]
    return [finding(RULE, f"CPU taken by other processes: rank {r} waited {cost:.3g} s for its "
                    "CPU", cost, rep, ranks_field([r]),
                    [ev(f"rank {r}: waited for a CPU (maxPE)", cost, "s"),
                     ev("ranks that waited at all", env["run_delay"]["nonzero"], "")],
                    "Other processes ran on the job's CPUs: run on CPUs of your own (srun "
                    "--exclusive) or find them (top -H); then profile again.", None,
                    bound="upper", method="the longest run-queue wait of a rank (runnable, "
                                          "another process on its CPU)")]
