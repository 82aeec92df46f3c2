"""mpi-init: MPI_Init takes a noticeable share of the job.

The runtime times each rank's MPI_Init (entry to exit of its wrapper: the MPI's start-up and
wire-up, plus the runtime's own setup, which the evidence gives). No rank computes before
every rank is wired up, so cost = the longest MPI_Init less the runtime's own setup (a run
without mpiscope does not pay that; summary mode: the longest of each, subtracted). The job is the longest MPI_Init + the
longest wall time + the longest MPI_Finalize wait (common.job_time), and cost_pct is of that:
the other rules' run starts after MPI_Init. Reported from MIN_COST_PCT of the job.
"""

from __future__ import annotations

from ...profile import Profile
from ..common import MIN_COST_PCT, all_ranks, env_of, ev, finding, job_time, of_job

RULE = "mpi-init"


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    job = job_time(rep)
    if not env or job <= 0:
        return []
    init = env["init"]
    # the MPI's own start-up: the runtime's setup is the profiler's, not the program's
    if prof.is_summary or not len(prof.env):
        cost = max(float(init["max"]) - float(env["init_own"]["max"]), 0.0)
    else:
        cost = float((prof.env["init"] - prof.env["init_own"]).max())
    if 100.0 * cost / job < MIN_COST_PCT:
        return []
    evidence = [ev("longest MPI_Init without mpiscope's setup", cost, "s"),
                ev(f"longest MPI_Init: rank {init['max_pe']}", init["max"], "s"),
                ev("MPI_Init per rank (avg)", init["avg"], "s"),
                ev("of it mpiscope's own setup (max)", env["init_own"]["max"], "s"),
                ev("job: longest MPI_Init + wall time + MPI_Finalize wait", job, "s")]
    f = finding(RULE, f"MPI_Init takes {100 * cost / job:.0f}% of the job", cost, rep,
                all_ranks(prof), evidence,
                "Start-up is paid once per job: give each job more work (more steps, several "
                "cases per job) so it amortises. If it grows with the rank count it is the "
                "launcher's wire-up: use the site's PMIx launch (srun --mpi=pmix), keep "
                "connections lazy (the default: do not preconnect), and compare MPI_Init "
                "across job sizes (mpiscope scale).",
                method="the longest MPI_Init less mpiscope's own setup (no rank computes "
                       "before every rank is wired up)")
    return [of_job(f, rep)]
