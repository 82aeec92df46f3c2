"""finalize-wait: ranks wait a noticeable time in MPI_Finalize for the last rank to get there.

At MPI_Finalize the runtime times each rank's wait for the last rank (one barrier before the
profile is written; the MPI's own teardown after it is not timed). The last rank to arrive
waits least; what the others wait beyond it is work after the last synchronisation that is not
balanced: cost = avg - min of the wait (as late-arrival's). cost_pct is of the job
(common.job_time); reported from MIN_COST_PCT of it.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ..common import MIN_COST_PCT, env_of, ev, finding, job_time, of_job, ranks_field

RULE = "finalize-wait"
# Ranks that waited: within this share of the range below the longest wait.
WAITED_SHARE = 0.5


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    job = job_time(rep)
    if not env or job <= 0:
        return []
    fin = env["finalize"]
    cost = float(fin["avg"]) - float(fin["min"])
    if 100.0 * cost / job < MIN_COST_PCT:
        return []
    if prof.is_summary:
        ranks = ranks_field([fin["max_pe"]])
    else:
        w = prof.env["finalize"]
        ranks = ranks_field(np.flatnonzero(w >= w.max() - WAITED_SHARE * (w.max() - w.min())))
    evidence = [ev(f"wait in MPI_Finalize, least: rank {fin['min_pe']} (the last to arrive)",
                   fin["min"], "s"),
                ev("avg per rank", fin["avg"], "s"),
                ev(f"most: rank {fin['max_pe']}", fin["max"], "s")]
    f = finding(RULE, f"Ranks wait for rank {fin['min_pe']} in MPI_Finalize: the end of the "
                "run is imbalanced", cost, rep, ranks, evidence,
                f"The work after the last synchronisation is uneven (rank {fin['min_pe']} "
                "arrives last): balance it, or find it with MPI_Pcontrol regions around the "
                "final phase (output, checks) and mpiscope report --region NAME.",
                method="the wait in MPI_Finalize, avg - min over ranks")
    return [of_job(f, rep)]
