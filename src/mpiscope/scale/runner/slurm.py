"""Run a study through Slurm: one sbatch job per point, the scheduler is the engine.

Each point gets a batch script in its attempt folder; the job runs
``mpiscope scale point DIR KEY N``, i.e. the same run_point as a local study,
inside its allocation (so the study's launcher, e.g. ``srun --mpi=pmix``,
runs there). Job ids go to job.json; ``scale status`` asks squeue (and sacct
when accounting is on) about jobs that have not written their record yet.
"""

from __future__ import annotations

import datetime
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from ...errors import UserError
from .. import studydir
from ..study import Point, Study, slurm_option_lines
from .local import mpiscope_command

class SubmitRefused(UserError):
    """sbatch refused one point's job (the others are still submitted)."""


# Seconds a Slurm client command may take before the controller counts as not answering.
CLIENT_TIMEOUT = 60


def _client(argv: list[str], timeout: float = CLIENT_TIMEOUT) -> subprocess.CompletedProcess:
    """Run a Slurm client; UserError if it is missing or the controller does not answer."""
    if shutil.which(argv[0]) is None:
        raise UserError(f"Slurm is not installed here: no {argv[0]} on PATH "
                        f"(use --submit local, or run on the cluster's login node)")
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UserError(f"Slurm is not answering: {argv[0]} got no reply in {timeout:g} s") \
            from None


def _first_error(proc: subprocess.CompletedProcess) -> str:
    """The client's error line (its last, less a trailing 'Try "sbatch --help"' hint)."""
    lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()
             and not ln.startswith("Try ")]
    return lines[-1] if lines else f"exit code {proc.returncode}"


def check_controller() -> None:
    """UserError unless Slurm's controller answers (before anything is written)."""
    if shutil.which("sbatch") is None:
        raise UserError("Slurm is not installed here: no sbatch on PATH (use --submit local, "
                        "or run on the cluster's login node)")
    proc = _client(["sinfo", "-h", "-o", "%P"])
    if proc.returncode != 0:
        raise UserError(f"Slurm is not answering: {_first_error(proc)}")


def _directive_path(path: Path) -> str:
    """A path as one #SBATCH argument: quoted as a shell word (sbatch reads the directive
    line as one), ``%`` doubled so Slurm's filename patterns keep it literal."""
    return shlex.quote(str(path).replace("%", "%%"))


def batch_script(study: Study, root: Path, point: Point, attempt: studydir.Attempt,
                 workdir: Path) -> str:
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name={shlex.quote(f'{study.name}-{point.key}')}",
             f"#SBATCH --ntasks={point.np}"]
    if study.ppn:
        vals = study.values(point)
        lines += [f"#SBATCH --nodes={vals['nodes']}", f"#SBATCH --ntasks-per-node={study.ppn}"]
    lines += [f"#SBATCH --output={_directive_path(attempt.path)}/slurm-%j.out",
              f"#SBATCH --chdir={_directive_path(workdir)}"]
    lines += [f"#SBATCH {opt}" for opt in slurm_option_lines(study, point)]
    lines += ["# written by mpiscope scale run --submit slurm; the job runs this point under",
              "# mpiscope run and records exit code, wall time and profile in point.json",
              "exec " + " ".join(shlex.quote(a) for a in
                                 [*mpiscope_command(study.slurm_python), "scale", "point",
                                  str(root), point.key, str(attempt.number),
                                  "--workdir", str(workdir)])]
    return "\n".join(lines) + "\n"


def submit(study: Study, root: Path, point: Point, workdir: Path) -> str:
    """Write the point's batch script into a new attempt folder, sbatch it; return the job id.

    Raises:
        SubmitRefused: sbatch refused the job; the attempt is closed as failed
            with sbatch's message.
        UserError: Slurm is not answering.
    """
    attempt = studydir.new_attempt(root, point)
    script = attempt.path / "job.sbatch"
    script.write_text(batch_script(study, root, point, attempt, workdir))
    proc = _client(["sbatch", "--parsable", str(script)])
    if proc.returncode != 0:
        reason = f"sbatch failed: {_first_error(proc)}"
        studydir.close_attempt(attempt, {"np": point.np, "rep": point.rep,
                                         "attempt": attempt.number, "status": "failed",
                                         "reason": reason, "exit_code": None,
                                         "profile": None})
        raise SubmitRefused(f"{reason} (np={point.np} rep={point.rep}; script {script})")
    job_id = proc.stdout.strip().split(";")[0]
    studydir.write_json(attempt.path / studydir.JOB, {
        "job_id": job_id, "script": script.name,
        "submitted": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
    return job_id


def queue_states(job_ids: list[str]) -> dict[str, str]:
    """job id -> Slurm state for jobs the controller still knows (squeue, then sacct)."""
    if not job_ids:
        return {}
    proc = _client(["squeue", "-h", "-t", "all", "-j", ",".join(job_ids), "-o", "%i|%T"])
    states = {}
    if proc.returncode == 0:
        for line in proc.stdout.splitlines():
            jid, _, state = line.partition("|")
            states[jid.strip()] = state.strip()
    elif "Invalid job id" not in (proc.stderr or ""):
        raise UserError(f"squeue failed: {_first_error(proc)}")
    gone = [j for j in job_ids if j not in states]
    if gone and shutil.which("sacct"):
        acct = _client(["sacct", "-n", "-X", "-P", "-j", ",".join(gone), "-o", "JobID,State"])
        if acct.returncode == 0:  # accounting may be off: then we know only what squeue said
            for line in acct.stdout.splitlines():
                jid, _, state = line.partition("|")
                if jid.strip() in gone and state.strip():
                    states[jid.strip()] = state.split()[0]
    return states


ACTIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
          "RESIZING", "SIGNALING", "STAGE_OUT"}


def point_states(study: Study, root: Path) -> list[dict]:
    """Each point's state: done, failed, pending, running, not run, or the job's end state.

    A job that left the queue without writing its record (killed, out of time,
    node failure) is recorded as failed here, so the next run submits it again.
    """
    lasts = {p: studydir.latest(root, p) for p in study.points()}
    waiting = {p: a for p, a in lasts.items() if a is not None and a.status == "submitted"}
    states = queue_states([a.job["job_id"] for a in waiting.values()]) if waiting else {}
    out = []
    for point, last in lasts.items():
        row = {"np": point.np, "rep": point.rep, "attempt": None, "job_id": None,
               "state": "not run", "detail": ""}
        if last is not None:
            row["attempt"] = last.number
            row["job_id"] = (last.job or {}).get("job_id")
            row["state"] = last.status
            if last.record:
                rec = last.record
                row["detail"] = rec.get("reason") or (
                    f"{rec['elapsed_s']:.1f} s" if rec.get("elapsed_s") is not None else "")
        if point in waiting:
            last = studydir.latest(root, point)  # the job may have finished meanwhile
            if last.status == "submitted":
                st = states.get(row["job_id"])
                if st in ACTIVE:
                    row["state"] = st.lower()
                else:
                    reason = (f"Slurm job {row['job_id']} ended ({st or 'no longer known'}) "
                              f"without writing its record")
                    if studydir.close_attempt(last, {
                            "np": point.np, "rep": point.rep, "attempt": last.number,
                            "status": "failed", "reason": reason, "exit_code": None,
                            "profile": None, "slurm_state": st}):
                        row["state"], row["detail"] = "failed", reason
                    else:  # the job wrote its record after all, just now
                        rec = studydir.read_record(last) or {}
                        row["state"] = rec.get("status", "failed")
                        row["detail"] = rec.get("reason") or ""
            else:
                row["state"] = last.status
        out.append(row)
    return out


def run_slurm(study: Study, root: Path, workdir: Path, console, wait: bool,
              signals, poll_s: float = 2.0) -> list[Point]:
    """Submit every point that is not done, pending or running; return the points that
    failed: refused by sbatch, and with ``wait`` those whose job failed.

    A refused submission does not stop the others (as a failed point never
    stops a local study). With ``wait``, poll until every point has a record,
    with a progress bar. Call check_controller first.

    Raises:
        processes.Interrupted: a stop signal (``signals``) came; what was
            submitted stays submitted.
    """
    todo = [Point(r["np"], r["rep"]) for r in point_states(study, root)
            if r["state"] in ("not run", "failed", "incomplete")]
    refused = []
    for point in todo:
        signals.check()
        try:
            jid = submit(study, root, point, workdir)
        except SubmitRefused as err:
            refused.append(point)
            console.print(f"not submitted: {err}", style="yellow", highlight=False)
            continue
        console.print(f"submitted np={point.np} rep={point.rep}: job {jid}")
    if not todo:
        console.print(f"nothing to submit: every point of {study.name} is done or queued")
    if not wait:
        console.print(f"follow with: mpiscope scale status {root}")
        return refused
    rows = wait_for(study, root, console, signals, poll_s)
    return [Point(r["np"], r["rep"]) for r in rows if r["state"] != "done"]


def wait_for(study: Study, root: Path, console, signals, poll_s: float = 2.0) -> list[dict]:
    """Poll until no point is pending or running; return the last point_states."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    total = len(study.points())
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("left"),
               TimeRemainingColumn())
    with Progress(*columns, console=console) as bar:
        task = bar.add_task(study.name, total=total)
        while True:
            rows = point_states(study, root)
            finished = sum(r["state"] in ("done", "failed") for r in rows)
            running = sum(r["state"] == "running" for r in rows)
            pending = sum(r["state"] == "pending" for r in rows)
            bar.update(task, completed=finished,
                       description=f"{study.name}: {running} running, {pending} pending")
            if all(r["state"] in ("done", "failed", "not run") for r in rows):
                return rows
            time.sleep(poll_s)
            signals.check()
