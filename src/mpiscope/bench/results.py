"""Benchmark results: the JSON schema, parsing a kernel's output, merging runs, saving safely.

A result file (``"format": "mpiscope-bench"``, version 1)::

    kernel, timestamp (UTC ISO 8601), partial (bool), errors [str]
    machine   {hostname, cpu_model, cores, memory_kib, os, load_average (1/5/15 min, at start)}
    mpi       {impl, library_version, mpi_version}
    launcher  [argv as given], options {the CLI options given}
    kernel_options {the options the kernel ran with, defaults included}
    methods   {number: how it is measured}   (from kernels.py)
    notes     [facts printed by the kernel, e.g. "no off-node pairs"]
    runs      [{nranks, nnodes, node_of_rank, command, exit_code, complete, wall_s}]
    rows      [{table, nranks, ...the kernel's fields}]

A run is *complete* when its kernel printed its end line and exited 0; a
result is *partial* when any run is not: what was printed is kept.
"""

from __future__ import annotations

import json
import os
import platform
import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..errors import UserError

FORMAT = "mpiscope-bench"
VERSION = 1


@dataclass
class RunOutput:
    """What one launch of a kernel printed, parsed."""
    meta: dict | None = None
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ended: bool = False


def parse_lines(text: str) -> RunOutput:
    """Parse a kernel's stdout: JSON objects with a "type", one per line; other lines ignored.

    The launcher may mix its own messages into stdout, and a killed run may leave
    a truncated last line: neither is an error here.
    """
    out = RunOutput()
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = obj.pop("type", None) if isinstance(obj, dict) else None
        if kind == "meta" and out.meta is None:
            out.meta = obj
        elif kind == "row":
            out.rows.append(obj)
        elif kind == "note":
            out.notes.append(str(obj.get("text", "")))
        elif kind == "error":
            out.errors.append(str(obj.get("message", "")))
        elif kind == "end":
            out.ended = True
    return out


def machine_info() -> dict:
    """Hostname, CPU model, cores, memory and OS of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1])
                break
    except (OSError, ValueError, IndexError):
        pass
    try:  # other load on the machine when the run started: context for every timing
        load = [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        load = None
    return {"hostname": socket.gethostname(), "cpu_model": cpu, "cores": os.cpu_count(),
            "memory_kib": mem, "os": f"{platform.system()} {platform.release()}",
            "load_average": load}


def new_result(kernel: str, impl: str, launcher: list[str], options: dict,
               methods: dict) -> dict:
    return {
        "format": FORMAT, "version": VERSION, "kernel": kernel,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "partial": False, "errors": [],
        "machine": machine_info(),
        "mpi": {"impl": impl, "library_version": None, "mpi_version": None},
        "launcher": list(launcher), "options": dict(options), "kernel_options": None,
        "methods": dict(methods), "notes": [], "runs": [], "rows": [],
    }


def add_run(result: dict, out: RunOutput, command: list[str], exit_code: int | None,
            wall_s: float, extra_rows: list[dict] | None = None) -> None:
    """Merge one launch into ``result``: rows get the run's rank count; partial if incomplete."""
    meta = out.meta or {}
    nranks = meta.get("nranks")
    complete = out.ended and exit_code == 0 and not out.errors
    if meta:
        result["mpi"]["library_version"] = result["mpi"]["library_version"] or \
            meta.get("mpi_library")
        result["mpi"]["mpi_version"] = result["mpi"]["mpi_version"] or meta.get("mpi_version")
        if result["kernel_options"] is None:
            result["kernel_options"] = meta.get("options")
    result["runs"].append({"nranks": nranks, "nnodes": meta.get("nnodes"),
                           "node_of_rank": meta.get("node_of_rank"), "command": list(command),
                           "exit_code": exit_code, "complete": complete,
                           "wall_s": round(wall_s, 6)})
    for row in out.rows + list(extra_rows or []):
        result["rows"].append({"nranks": nranks, **row})
    for note in out.notes:
        if note not in result["notes"]:
            result["notes"].append(note)
    result["errors"].extend(out.errors)
    if not complete:
        result["partial"] = True


def free_path(path: Path) -> Path:
    """``path`` if it does not exist, else the first ``stem-N.suffix`` that does not."""
    if not path.exists():
        return path
    n = 1
    while True:
        cand = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not cand.exists():
            return cand
        n += 1


def default_path(result: dict, directory: Path = Path(".")) -> Path:
    stamp = result["timestamp"].replace(":", "").replace("-", "")[:15]
    return free_path(directory / f"bench-{result['kernel']}-{result['mpi']['impl']}-{stamp}.json")


def save(result: dict, path: Path, force: bool = False) -> Path:
    """Write ``result`` to ``path``; an existing file is an error unless ``force``.

    The file is written beside the target and renamed into place, so an
    interrupted write never leaves half a result behind.
    """
    if path.exists() and not force:
        raise UserError(f"{path} exists; choose another --output or pass --force")
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        os.replace(tmp, path)
    except OSError as err:
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {err.strerror}") from None
    return path


def check_writable(path: Path) -> None:
    """UserError now, before any measuring, if ``path`` cannot be created."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {path}: {parent} is not a writable directory")


def load(path: str | os.PathLike) -> dict:
    """Read a result file; UserError naming the problem if it is not one."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise UserError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{p}: is a directory, not a result file") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"{p}: not a JSON file (expected an mpiscope bench result)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{p}: not an mpiscope bench result (no \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise UserError(f"{p}: result version {data.get('version')} is not supported "
                        f"(this mpiscope reads version {VERSION})")
    if not isinstance(data.get("rows"), list) or "kernel" not in data:
        raise UserError(f"{p}: result has no rows or no kernel")
    return data


def rows(result: dict, table: str, **match) -> list[dict]:
    """The rows of one table whose fields equal ``match``."""
    return [r for r in result["rows"] if r.get("table") == table and
            all(r.get(k) == v for k, v in match.items())]
