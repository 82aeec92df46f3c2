"""One run of a tune: the launch under `mpiscope run`, into its own attempt folder.

The run is `mpiscope run --dir ATTEMPT --mpi IMPL -- <launch>` started as scale's
points are (scale.runner.local.mpiscope_command, ``--parent-pid``), its processes tagged with
``MPISCOPE_POINT`` so that a timeout or Ctrl-C stops all of them and none is left
(scale.runner.processes). Its record: exit code, elapsed time, the profile, the run's and the
job's time as the profile measures them, and the cost of every finding diagnose makes of it.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from ..errors import UserError
from ..scale.runner import processes as point_procs
from ..scale.runner.local import mpiscope_command
from . import tunedir


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def measure(path: Path) -> dict:
    """What tune compares of one profile: the run's time (the longest rank's, MPI_Init to
    MPI_Finalize), the job's time (+ the longest MPI_Init and wait in MPI_Finalize), and
    each finding's cost."""
    from ..diagnose import diagnose
    from ..diagnose.common import job_time, runtime
    from ..reader import read
    from ..report import build_report

    prof = read(path)
    rep = build_report(prof)
    diag = diagnose(prof, rep)
    costs: dict[str, float] = {}
    for f in diag["findings"]:
        costs[f["rule"]] = costs.get(f["rule"], 0.0) + f["cost_s"]
    return {"job_s": job_time(rep), "run_s": runtime(rep), "nranks": prof.nranks,
            "finding_costs": costs}


def run_once(root: Path, name: str, launch: list[str], env: dict, impl: str, cwd: str,
             signals: point_procs.StopSignals, timeout: float | None = None) -> dict:
    """Run ``launch`` once as run ``name``; close its attempt and return the record.

    A run that fails, times out or writes no readable profile is recorded as failed
    (with the reason), never raised. A stop signal stops the run the same way; the
    caller then sees ``signals.first``.
    """
    attempt = tunedir.new_attempt(root, name)
    tag = str(attempt)
    argv = [*mpiscope_command(), "run", "--dir", str(attempt), "--mpi", impl,
            "--parent-pid", str(os.getpid()), "--", *launch]
    child_env = dict(os.environ)
    child_env.update(env)
    child_env[point_procs.TAG] = tag
    record = {"name": name, "attempt": int(attempt.name[7:]), "command": launch, "env": env,
              "started": _now()}
    run = point_procs.supervise(argv, child_env, cwd, attempt, tag, signals, timeout)
    rc, reason, elapsed, left = run.exit_code, run.reason, run.elapsed_s, run.left
    profiles = sorted(attempt.glob("*.mpiscope"))
    if reason is None and rc != 0:
        reason = f"exit code {rc}"
    if reason is None and len(profiles) != 1:
        reason = "no profile written" if not profiles else f"{len(profiles)} profiles written"
    measured = {}
    if reason is None:
        try:
            measured = measure(profiles[0])
        except UserError as e:
            reason = f"unreadable profile: {e}"
    if left:
        reason = (f"{reason}; " if reason else "") + f"processes left running: {left}"
    record.update({"exit_code": rc, "elapsed_s": elapsed,
                   "profile": profiles[0].name if len(profiles) == 1 else None,
                   "status": "failed" if reason else "done", "reason": reason,
                   "finished": _now(), **measured})
    tunedir.close_attempt(attempt, record)
    record["dir"] = str(attempt)
    return record
