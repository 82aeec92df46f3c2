"""The study directory: the study file it was made for, and one folder per attempt of each point.

    DIR/study.toml                          the study file as first run (never replaced
                                            once a point has run)
    DIR/origin.json                         where the study file was (its directory is
                                            where the points run)
    DIR/run.lock                            held (fcntl) by the one `scale run` working on it
    DIR/points/np00004-rep1/attempt1/
        point.json                          exit code, wall time, profile name, command
        stdout.txt, stderr.txt              what the launch printed
        <program>.<job>.mpiscope            the profile
        job.sbatch, job.json                (--submit slurm) the script and its job id

A point is done when its latest attempt's point.json says so; a failed attempt
stays where it is and a new run makes attempt2 beside it, so nothing already
written is ever replaced. point.json closes an attempt: it is created once
(``close_attempt``), never rewritten, whoever (the runner, a Slurm job, ``scale
status`` finding the job gone) gets there first.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from .study import ORIGIN_NAME, SAVED_NAME, Point, Study, load_study

STUDY_FILE = SAVED_NAME
RECORD = "point.json"
JOB = "job.json"
LOCK = "run.lock"
# Attempt states that are final (studydir's own; Slurm's running states are not).
ENDED_STATES = ("done", "failed")


@dataclass
class Attempt:
    point: Point
    number: int
    path: Path
    record: dict | None   # point.json, None while not finished (or never started)
    job: dict | None      # job.json (Slurm), None for local runs

    @property
    def status(self) -> str:
        """done, failed, submitted (Slurm, no record yet) or incomplete (started, never finished)."""
        if self.record is not None:
            return self.record.get("status", "failed")
        return "submitted" if self.job is not None else "incomplete"


def point_dir(root: Path, point: Point) -> Path:
    return root / "points" / point.key


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise UserError(f"{path} is unreadable or not JSON ({err}); move it away and rerun") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} is not a JSON object; move it away and rerun")
    return data


def attempts(root: Path, point: Point) -> list[Attempt]:
    """Every attempt of a point, oldest first."""
    base = point_dir(root, point)
    out = []
    if not base.is_dir():
        return out
    numbers = sorted(int(p.name[7:]) for p in base.iterdir()
                     if p.name.startswith("attempt") and p.name[7:].isdigit())
    for n in numbers:
        path = base / f"attempt{n}"
        out.append(Attempt(point, n, path, _read_json(path / RECORD), _read_json(path / JOB)))
    return out


def read_record(attempt: Attempt) -> dict | None:
    """The attempt's point.json as it is on disk now."""
    return _read_json(attempt.path / RECORD)


def latest(root: Path, point: Point) -> Attempt | None:
    tries = attempts(root, point)
    return tries[-1] if tries else None


def new_attempt(root: Path, point: Point) -> Attempt:
    """Create the next attempt folder (exclusively: two runners never share one)."""
    base = point_dir(root, point)
    base.mkdir(parents=True, exist_ok=True)
    n = len(attempts(root, point)) + 1
    while True:
        path = base / f"attempt{n}"
        try:
            path.mkdir()
            return Attempt(point, n, path, None, None)
        except FileExistsError:
            n += 1


def write_json(path: Path, data: dict) -> None:
    """Write atomically: a reader sees the old file or the whole new one, never half."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def close_attempt(attempt: Attempt, record: dict) -> bool:
    """Write the attempt's point.json unless it has one; False if it was already closed.

    The record is written to a private file and hard-linked into place, so it
    appears whole and only once: two writers (a Slurm job ending and ``scale
    status`` seeing the job gone) cannot replace each other's record.
    """
    path = attempt.path / RECORD
    tmp = attempt.path / f".{RECORD}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink()


@contextlib.contextmanager
def locked(root: Path, command: str = "mpiscope scale run"):
    """Hold the study directory's lock (one ``scale run`` at a time), or raise UserError
    naming the holder (``command``: what holds such a lock, for the message; ``mpiscope
    tune`` locks its directory the same way).

    An fcntl lock on DIR/run.lock: the kernel (or the NFS lock manager) drops it
    when the holder exits however it ends, so a lock file left by a killed run
    locks nothing. The holder's pid and host are written into the file for the
    message.
    """
    path = root / LOCK
    try:
        f = open(path, "a+")
    except OSError as err:
        raise UserError(f"cannot open the lock file {path}: {err.strerror}") from None
    with f:
        try:
            fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno not in (errno.EACCES, errno.EAGAIN):
                raise UserError(f"cannot lock {path}: {err.strerror}") from None
            f.seek(0)
            holder = f.read().split()
            who = (f"pid {holder[0]} on {holder[1]}" if len(holder) >= 2
                   else "another process")
            raise UserError(f"{root} is in use by another {command} ({who}); "
                            f"wait for it to end, or stop it, then run again") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()} {socket.gethostname()}\n")
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()


@contextlib.contextmanager
def opened_for_run(study: Study):
    """Create the study directory (or open it), lock it, check it holds this same study;
    yield the directory, locked until the block ends.

    Raises:
        UserError: another run holds the directory, or it was made for a
            different study file and holds results.
    """
    root = study.output
    text = study.path.read_text()
    saved = root / STUDY_FILE
    try:
        (root / "points").mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the study directory {root}: {err.strerror}") from None
    with locked(root):
        if saved.exists() and saved.resolve() != study.path.resolve():
            if saved.read_text() != text:
                if any(attempts(root, p) for p in _saved_points(root)):
                    raise UserError(f"{root} holds results of a different study ({saved} "
                                    f"differs from {study.path}); set study.output to a new "
                                    f"directory")
                # Nothing ran under the saved file (a run stopped before its first
                # point): the directory holds no results to protect.
                saved.write_text(text)
        elif not saved.exists():
            try:
                write_json(root / ORIGIN_NAME, {"study_file": str(study.path),
                                                "workdir": str(study.workdir)})
                saved.write_text(text)
            except OSError as err:
                raise UserError(f"cannot write {saved}: {err.strerror}") from None
        yield root


def _saved_points(root: Path) -> list[Point]:
    """The points folders of a study directory, whatever study made them."""
    base = root / "points"
    out = []
    for d in (base.iterdir() if base.is_dir() else ()):
        np_, _, rep = d.name.partition("-rep")
        if np_.startswith("np") and np_[2:].isdigit() and rep.isdigit():
            out.append(Point(int(np_[2:]), int(rep)))
    return out


def open_study(root: str | Path) -> tuple[Study, Path]:
    """The Study of an existing study directory (its saved study file, output = the directory)."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise UserError(f"{root} is not a directory")
    saved = root / STUDY_FILE
    if not saved.exists():
        raise UserError(f"{root} is not a study directory (no {STUDY_FILE}; "
                        f"make one with mpiscope scale run STUDY.toml)")
    study = load_study(saved)  # its output is the directory (study._output_dir)
    return study, root
