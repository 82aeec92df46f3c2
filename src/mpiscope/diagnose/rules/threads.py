"""threads-summed: MPI time summed over several threads exceeds wall time (MPI_THREAD_MULTIPLE).

Not a performance problem of the program but of what the profile can say:
when several threads are in MPI at once the runtime sums their times, so
wall - MPI goes negative and compute time, load balance, late senders and
the POP metrics are unknown. Reported first (cost 0 does not hide it) so the
reader knows why those rules stay silent.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ..common import ev, finding, ranks_field, stat

RULE = "threads-summed"


def rule(prof: Profile, rep: dict) -> list[dict]:
    comp = stat(rep, "compute")
    if comp["min"] is None or float(comp["min"]) >= 0:
        return []
    if prof.is_summary:
        ranks = ranks_field([comp["min_pe"]])
        threads = None
    else:
        over = np.flatnonzero(prof.ranks["mpi"] > prof.ranks["wall"])
        if over.size == 0:  # a negative compute time from non-finite times (a corrupt file)
            return []
        ranks = ranks_field(over)
        threads = int(prof.ranks["threads"][over].max())
    evidence = [ev("lowest compute time (wall - MPI)", float(comp["min"]), "s")]
    if threads:
        evidence.append(ev("threads that called MPI (max)", threads, ""))
    return [finding(RULE, "MPI time summed over threads exceeds wall time: compute time, "
                    "load balance and POP metrics are unknown", 0.0, rep, ranks, evidence,
                    "Read per-function times as thread-seconds. To measure compute "
                    "imbalance, profile a run where one thread calls MPI "
                    "(MPI_THREAD_FUNNELED), or mark phases with MPI_Pcontrol regions.")]
