"""The tune directory: every run's profile and output, resumable like a scale study's.

    DIR/tune.json                   the launch command, the MPI, and the plan made from the
                                    probe run's diagnosis (the candidates, fixed once made)
    DIR/run.lock                    held (fcntl) by the one `mpiscope tune` working on it
    DIR/files/                      order files and the launcher files they need (rankfile,
                                    machine file, SLURM_HOSTFILE) for the recommended command
    DIR/runs/probe/attempt1/        the first baseline run: diagnosed, never timed
    DIR/runs/r03-baseline/attempt1/ round 3's baseline run; r03-<candidate> beside it;
                                    c01-... the rounds of the combined candidate
        run.json                    exit code, times, profile name, the findings' costs
        stdout.txt, stderr.txt      what the run printed
        <program>.<job>.mpiscope    its profile
    DIR/result.json                 the last result (the same dict --json prints)

A run is done when its latest attempt's run.json says so. An attempt cut short (Ctrl-C)
or failed stays where it is and the next `mpiscope tune` makes attempt2 beside it:
nothing written is replaced. The user's own files are never written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import UserError
from ..scale.studydir import _read_json as read_json, locked, write_json

PLAN = "tune.json"
RESULT = "result.json"
RECORD = "run.json"
SCHEMA = "mpiscope-tune/1"


def create(root: Path) -> None:
    """Make the directory and its runs/ and files/ folders (UserError if it cannot be)."""
    try:
        (root / "runs").mkdir(parents=True, exist_ok=True)
        (root / "files").mkdir(exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the tune directory {root}: {err.strerror}") from None


def open_dir(root: Path, argv: list[str], impl: str) -> dict:
    """Start the plan of a new directory, or check it holds a tune of this same command;
    the plan so far.

    Raises:
        UserError: it cannot be created, is not a tune directory, or holds another command's.
    """
    plan_path = root / PLAN
    if not plan_path.exists():
        if any((root / "runs").iterdir()):
            raise UserError(f"{root} holds runs but no {PLAN}: not a tune directory; give "
                            f"another --dir")
        plan = {"schema": SCHEMA, "command": list(argv), "mpi": impl, "cwd": os.getcwd()}
        write_json(plan_path, plan)
        return plan
    plan = read_json(plan_path)
    if plan is None or plan.get("schema") != SCHEMA:
        raise UserError(f"{plan_path} is not a tune plan; give another --dir")
    if plan.get("command") != list(argv):
        raise UserError(f"{root} holds a tune of another command ({' '.join(plan['command'])});"
                        f" give another --dir")
    return plan


def lock(root: Path):
    return locked(root, "mpiscope tune")


def _attempts(root: Path, name: str) -> list[Path]:
    base = root / "runs" / name
    if not base.is_dir():
        return []
    nums = sorted(int(p.name[7:]) for p in base.iterdir()
                  if p.name.startswith("attempt") and p.name[7:].isdigit())
    return [base / f"attempt{n}" for n in nums]


def latest_record(root: Path, name: str) -> dict | None:
    """run.json of the run's latest attempt (None: never run, or cut short)."""
    tries = _attempts(root, name)
    rec = read_json(tries[-1] / RECORD) if tries else None
    if rec is not None:
        rec["dir"] = str(tries[-1])
    return rec


def new_attempt(root: Path, name: str) -> Path:
    """The run's next attempt folder, created exclusively."""
    base = root / "runs" / name
    base.mkdir(parents=True, exist_ok=True)
    n = len(_attempts(root, name)) + 1
    while True:
        path = base / f"attempt{n}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1


def close_attempt(path: Path, record: dict) -> None:
    """Write the attempt's run.json (once: an attempt is never reopened)."""
    with open(path / RECORD, "x") as f:
        f.write(json.dumps(record, indent=1) + "\n")
