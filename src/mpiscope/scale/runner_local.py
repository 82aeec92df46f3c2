"""Run the points of a study one after another on this machine, each under `mpiscope run`.

The same :func:`run_point` runs a point inside a Slurm job (runner_slurm.py's
batch script calls ``mpiscope scale point``), so a point's record is written by
one piece of code wherever it ran.
"""

from __future__ import annotations

import datetime
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..errors import UserError
from . import studydir
from .study import Point, Study


def mpiscope_run_argv(study: Study, point: Point, outdir: Path) -> list[str]:
    """``mpiscope run`` for one point, with this Python (the one running the study)."""
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "--dir", str(outdir)]
    if study.mpi:
        cmd += ["--mpi", study.mpi]
    if study.mode:
        cmd += ["--mode", study.mode]
    if study.sync:
        cmd.append("--sync")
    return [*cmd, "--", *study.launch_argv(point)]


def child_environment(study: Study, point: Point) -> dict[str, str]:
    env = dict(os.environ)
    env.update(study.environment(point))
    # The child is this same mpiscope, wherever it was imported from (a source tree too).
    pkg_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    return env


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_point(study: Study, root: Path, point: Point, workdir: Path,
              attempt: studydir.Attempt | None = None) -> dict:
    """Run one point under ``mpiscope run`` and write its point.json; return the record.

    A launch that fails, times out or writes no profile is recorded as failed
    (with the reason), never raised: the study goes on.
    """
    attempt = attempt or studydir.new_attempt(root, point)
    argv = mpiscope_run_argv(study, point, attempt.path)
    record = {"np": point.np, "rep": point.rep, "attempt": attempt.number,
              "command": study.launch_argv(point), "started": _now(),
              "host": os.uname().nodename}
    if os.environ.get("SLURM_JOB_ID"):
        record["slurm_job_id"] = os.environ["SLURM_JOB_ID"]
    before = set(attempt.path.glob("*.mpiscope"))
    t0 = time.monotonic()
    reason = None
    with open(attempt.path / "stdout.txt", "wb") as out, \
            open(attempt.path / "stderr.txt", "wb") as err:
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=workdir,
                                    env=child_environment(study, point),
                                    start_new_session=True)
        except OSError as e:
            raise UserError(f"cannot start {argv[0]}: {e}") from None
        try:
            rc = proc.wait(timeout=study.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            rc = proc.wait()
            reason = f"timed out after {study.timeout:g} s"
        except KeyboardInterrupt:
            _kill_group(proc)
            proc.wait()
            raise
    elapsed = time.monotonic() - t0
    profiles = sorted(p.name for p in set(attempt.path.glob("*.mpiscope")) - before)
    if reason is None and rc != 0:
        reason = f"exit code {rc}"
    if reason is None and len(profiles) != 1:
        reason = ("no profile written" if not profiles
                  else f"{len(profiles)} profiles written, expected one")
    record.update({"exit_code": rc, "elapsed_s": elapsed, "profile": profiles[0] if
                   len(profiles) == 1 else None, "status": "failed" if reason else "done",
                   "reason": reason, "finished": _now()})
    studydir.write_json(attempt.path / studydir.RECORD, record)
    return record


def _kill_group(proc: subprocess.Popen) -> None:
    """Stop the launch and every rank it started (they share its session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def pending_points(study: Study, root: Path) -> list[Point]:
    """Points whose latest attempt is not done (never run, failed, or interrupted)."""
    out = []
    for point in study.points():
        last = studydir.latest(root, point)
        if last is None or last.status in ("failed", "incomplete"):
            out.append(point)
    return out


def run_local(study: Study, root: Path, workdir: Path, console) -> list[dict]:
    """Run every point not done yet, with a progress bar; return the new records."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

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
            bar.update(task, description=f"{study.name}: np={point.np} rep={point.rep}")
            rec = run_point(study, root, point, workdir)
            records.append(rec)
            if rec["status"] != "done":
                bar.console.print(f"[yellow]np={point.np} rep={point.rep} failed: "
                                  f"{rec['reason']} (see {studydir.point_dir(root, point)})")
            bar.advance(task)
        bar.update(task, description=study.name)
    return records
