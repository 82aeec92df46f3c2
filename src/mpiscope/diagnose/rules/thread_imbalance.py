"""thread-imbalance: inside a rank, one thread works while its other threads wait (hybrid
MPI + OpenMP; issue 31).

From the sampled compute (``mpiscope run --sample``, docs/sampling.md): the report's
``samples.threads`` rows give each thread of a rank sampled on several threads its CPU
seconds outside MPI, and the part of them in the OpenMP runtime (spinning at barriers and
for work, not the program's work). A thread's work = its seconds - that part.

Cost (per rank, the largest over ranks): max(work) - avg(work) over the rank's threads, "up
to": what evening the threads' work gains when they work side by side (a parallel region
ends when its busiest thread does); a thread that works while the others are not waiting
for it (a helper thread, a serial phase of one thread) gains less. Fires when the rank's
thread load balance avg/max is below compute-imbalance's LB_MAX and the cost reaches the bar.
"""

from __future__ import annotations

from collections import defaultdict

from ..common import MIN_COST_PCT, ev, finding, ranks_field, worth
from .compute_imbalance import LB_MAX

RULE = "thread-imbalance"


def rule(prof, rep: dict) -> list[dict]:
    rows = (rep.get("samples") or {}).get("threads") or []
    by_rank: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        by_rank[r["rank"]].append(r)
    worst = None
    for rank, threads in by_rank.items():
        work = [max(t["seconds"] - t.get("openmp_runtime_seconds", 0.0), 0.0) for t in threads]
        top = max(work)
        avg = sum(work) / len(work)
        if top <= 0 or len(work) < 2:
            continue
        if worst is None or top - avg > worst[1]:
            worst = (rank, top - avg, top, avg, threads[work.index(top)], threads)
    if worst is None:
        return []
    rank, cost, top, avg, busy, threads = worst
    if avg / top >= LB_MAX or not worth(cost, rep, MIN_COST_PCT):
        return []
    what = busy["functions"][0]["function"] if busy["functions"] else None
    evidence = [ev(f"rank {rank}: work of its busiest thread ({busy['thread']})", top, "s"),
                ev(f"rank {rank}: work per thread, avg of {len(threads)}", avg, "s"),
                ev("thread load balance avg/max", 100.0 * avg / top, "%")]
    if what:
        evidence.append(ev(f"the busiest thread's most sampled function: {what}",
                           busy["functions"][0]["seconds"], "s"))
    omp = sum(t.get("openmp_runtime_seconds", 0.0) for t in threads)
    if omp > 0:
        evidence.append(ev(f"rank {rank}: seconds in the OpenMP runtime (waiting), all threads",
                           omp, "s"))
    title = (f"Thread imbalance: on rank {rank} thread {busy['thread']} works "
             f"{top / avg:.1f}x its threads' average" + (f" (in {what})" if what else ""))
    return [finding(RULE, title, cost, rep, ranks_field([rank]), evidence,
                    "Even out the work of the rank's threads: schedule(dynamic) or (guided) "
                    "for loops whose iterations cost unequally, smaller chunks, collapse(2) for "
                    "short outer loops; move work a single thread does (I/O, a serial section) "
                    "out of the parallel region or split it into tasks.",
                    bound="upper",
                    method="the rank's busiest thread's work - its threads' average (work: "
                           "sampled CPU seconds outside MPI and the OpenMP runtime): what "
                           "evening them gains at most")]
