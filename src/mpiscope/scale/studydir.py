"""The study directory: the study file it was made for, and one folder per attempt of each point.

    DIR/study.toml                          the study file as first run (never replaced)
    DIR/points/np00004-rep1/attempt1/
        point.json                          exit code, wall time, profile name, command
        stdout.txt, stderr.txt              what the launch printed
        <program>.<job>.mpiscope            the profile
        job.sbatch, job.json                (--submit slurm) the script and its job id

A point is done when its latest attempt's point.json says so; a failed attempt
stays where it is and a new run makes attempt2 beside it, so nothing already
written is ever replaced.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from .study import Point, Study, load_study

STUDY_FILE = "study.toml"
RECORD = "point.json"
JOB = "job.json"


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


def prepare(study: Study) -> Path:
    """Create the study directory, or check that it holds this same study.

    Raises:
        UserError: the directory was made for a different study file.
    """
    root = study.output
    text = study.path.read_text()
    saved = root / STUDY_FILE
    if saved.exists():
        if saved.read_text() != text:
            raise UserError(f"{root} holds results of a different study ({saved} differs from "
                            f"{study.path}); set study.output to a new directory")
    else:
        try:
            root.mkdir(parents=True, exist_ok=True)
            (root / "points").mkdir(exist_ok=True)
            saved.write_text(text)
        except OSError as err:
            raise UserError(f"cannot create the study directory {root}: {err}") from None
    return root


def open_study(root: str | Path) -> tuple[Study, Path]:
    """The Study of an existing study directory (its saved study file, output = the directory)."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise UserError(f"{root} is not a directory")
    saved = root / STUDY_FILE
    if not saved.exists():
        raise UserError(f"{root} is not a study directory (no {STUDY_FILE}; "
                        f"make one with mpiscope scale run STUDY.toml)")
    study = load_study(saved)
    study.output = root
    return study, root
