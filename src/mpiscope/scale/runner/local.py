"""Run the points of a study one after another on this machine, each under `mpiscope run`.

The same :func:`run_point` runs a point inside a Slurm job (slurm.py's
batch script calls ``mpiscope scale point``), so a point's record is written by
one piece of code wherever it ran.
"""

from __future__ import annotations

import datetime
import os
import sys
from pathlib import Path

from ...errors import UserError
from .. import studydir
from ..study import Point, Study
from . import processes


# Runs mpiscope's CLI from the package root given as the first argument, so a
# point's `mpiscope run` (and a Slurm job's `scale point`) is this same mpiscope
# without PYTHONPATH, which the point's own programs would inherit (a Python
# program would import mpiscope's numpy instead of its own). A Python other
# than this one (slurm.python) uses its own mpiscope if it has one.
_BOOT_SAME = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'mpiscope'; "
              "from mpiscope.cli import main; sys.exit(main(sys.argv[1:]))")
_BOOT_OTHER = ("import sys, importlib.util; r = sys.argv.pop(1); sys.argv[0] = 'mpiscope'\n"
               "if importlib.util.find_spec('mpiscope') is None: sys.path.insert(0, r)\n"
               "from mpiscope.cli import main; sys.exit(main(sys.argv[1:]))")


def mpiscope_command(python: str | None = None) -> list[str]:
    """The command line that starts this mpiscope's CLI with ``python`` (default: this one)."""
    root = str(Path(__file__).resolve().parents[3])
    same = python is None or python == sys.executable
    return [python or sys.executable, "-c", _BOOT_SAME if same else _BOOT_OTHER, root]


def mpiscope_run_argv(study: Study, point: Point, outdir: Path) -> list[str]:
    """``mpiscope run`` for one point, ended with this process (``--parent-pid``)."""
    cmd = [*mpiscope_command(), "run", "--dir", str(outdir), "--parent-pid", str(os.getpid())]
    if study.mpi:
        cmd += ["--mpi", study.mpi]
    if study.mode:
        cmd += ["--mode", study.mode]
    if study.sync:
        cmd.append("--sync")
    return [*cmd, "--", *study.launch_argv(point)]


def child_environment(study: Study, point: Point, attempt: Path) -> dict[str, str]:
    """The environment a point runs in: ours, the study's [env], and the point's tag."""
    env = dict(os.environ)
    env.update(study.environment(point))
    env[processes.TAG] = str(attempt)
    return env


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _profile_ranks(path: Path) -> tuple[int | None, str | None]:
    """(ranks, None) of a profile, or (None, why it cannot be read)."""
    from ...reader import read

    try:
        return read(path).nranks, None
    except UserError as err:
        return None, str(err)


def run_point(study: Study, root: Path, point: Point, workdir: Path,
              attempt: studydir.Attempt | None = None,
              signals: processes.StopSignals | None = None) -> dict:
    """Run one point under ``mpiscope run`` and close its attempt; return the record.

    A launch that fails, times out, writes no profile or a profile of another
    rank count is recorded as failed (with the reason), never raised: the
    study goes on. A stop signal (``signals``) stops the point the same way
    as a timeout; the caller then sees ``signals.first`` and ends the study.
    No process of the point is left when this returns (processes).
    """
    signals = signals or processes.StopSignals()
    attempt = attempt or studydir.new_attempt(root, point)
    tag = str(attempt.path)
    argv = mpiscope_run_argv(study, point, attempt.path)
    record = {"np": point.np, "rep": point.rep, "attempt": attempt.number,
              "command": study.launch_argv(point), "started": _now(),
              "host": os.uname().nodename}
    if os.environ.get("SLURM_JOB_ID"):
        record["slurm_job_id"] = os.environ["SLURM_JOB_ID"]
    before = set(attempt.path.glob("*.mpiscope"))
    run = processes.supervise(argv, child_environment(study, point, attempt.path), workdir,
                              attempt.path, tag, signals, study.timeout)
    rc, reason, elapsed, left = run.exit_code, run.reason, run.elapsed_s, run.left
    killed_at_stop, killed = run.killed_at_stop, run.killed_after_end
    profiles = sorted(p.name for p in set(attempt.path.glob("*.mpiscope")) - before)
    if reason is None and rc != 0:
        reason = f"exit code {rc}"
    if reason is None and len(profiles) != 1:
        reason = ("no profile written" if not profiles
                  else f"{len(profiles)} profiles written, expected one")
    if reason is None:
        nranks, unreadable = _profile_ranks(attempt.path / profiles[0])
        if unreadable:
            reason = f"unreadable profile: {unreadable}"
        elif nranks != point.np:
            reason = (f"the profile has {nranks} ranks, not {point.np}: does "
                      f"launcher.command (or study.command) pass {{np}}?")
    record.update({"exit_code": rc, "elapsed_s": elapsed, "profile": profiles[0] if
                   len(profiles) == 1 else None, "status": "failed" if reason else "done",
                   "reason": reason, "finished": _now()})
    if killed_at_stop:  # the launcher had not ended them within the grace time
        record["killed_at_stop"] = killed_at_stop
    if killed:
        record["killed_after_end"] = killed
    if left:
        record["left_running"] = left
        record["status"] = "failed"
        record["reason"] = (f"{reason}; " if reason else "") + \
            f"{len(left)} process(es) of the point could not be stopped (pids {left})"
    if not studydir.close_attempt(attempt, record):
        record = studydir.read_record(attempt)
    return record


def pending_points(study: Study, root: Path) -> list[Point]:
    """Points whose latest attempt is not done (never run, failed, or interrupted)."""
    out = []
    for point in study.points():
        last = studydir.latest(root, point)
        if last is None or last.status in ("failed", "incomplete"):
            out.append(point)
    return out


def refuse_queued(study: Study, root: Path) -> None:
    """UserError if points of the study are queued or running in Slurm (a local run would
    run them twice). Jobs that ended without a record are recorded as failed, so
    the local run runs those points again."""
    from . import slurm

    submitted = [p for p in study.points()
                 if (last := studydir.latest(root, p)) is not None and last.status == "submitted"]
    if not submitted:
        return
    try:
        rows = slurm.point_states(study, root)
    except UserError as err:
        raise UserError(f"{len(submitted)} point(s) of {root} were submitted to Slurm and "
                        f"their jobs' state cannot be asked here ({err}); run it where Slurm "
                        f"answers") from None
    active = [r for r in rows if r["state"] not in studydir.ENDED_STATES + ("not run",)]
    if active:
        jobs = ", ".join(f"np={r['np']} rep={r['rep']} job {r['job_id']} ({r['state']})"
                         for r in active[:5]) + (" ..." if len(active) > 5 else "")
        raise UserError(f"{len(active)} point(s) of {root} are queued or running in Slurm: "
                        f"{jobs}; wait for them (mpiscope scale status) or scancel them, "
                        f"then run again")


def run_local(study: Study, root: Path, workdir: Path, console,
              signals: processes.StopSignals) -> list[dict]:
    """Run every point not done yet, with a progress bar; return the new records.

    Raises:
        processes.Interrupted: a stop signal came; the point running then was
            stopped and recorded as failed, the later ones not started.
    """
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    refuse_queued(study, root)
    todo = pending_points(study, root)
    records = []
    if not todo:
        console.print(f"all {len(study.points())} points of {study.name} are done "
                      f"({root})")
        return records
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("left"),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(study.name, total=len(todo))
        for point in todo:
            signals.check()
            bar.update(task, description=f"{study.name}: np={point.np} rep={point.rep}")
            rec = run_point(study, root, point, workdir, signals=signals)
            records.append(rec)
            if rec["status"] != "done":
                bar.console.print(f"np={point.np} rep={point.rep} failed: {rec['reason']} "
                                  f"(see {studydir.point_dir(root, point)})",
                                  style="yellow", highlight=False)
            bar.advance(task)
        bar.update(task, description=study.name)
    signals.check()
    return records
