"""Run a kernel: ``LAUNCHER ARGS <kernel binary for that MPI> <options>``, once or at each P.

The kernel prints JSON lines (see ``bench/common.h``); this module launches
it, keeps whatever it printed even if the launch fails, and merges the runs
into one result (``results.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import native
from ..errors import UserError
from . import results
from .kernels import Kernel

# Launcher flags that give the number of ranks, as mpirun/mpiexec/srun spell them.
_NP_FLAGS = ("-n", "-np", "--np", "-c", "--n", "--ntasks")


def ranks_in(launcher: list[str]) -> int | None:
    """The rank count a launch command asks for, if it says so with a usual flag."""
    for i, arg in enumerate(launcher):
        if arg in _NP_FLAGS and i + 1 < len(launcher) and launcher[i + 1].isdigit():
            return int(launcher[i + 1])
        m = re.fullmatch(r"(--?(?:n|np|ntasks))=(\d+)", arg)
        if m:
            return int(m.group(2))
    return None


def with_ranks(launcher: list[str], nranks: int) -> list[str]:
    """The launch command with its rank count replaced by ``nranks``."""
    out = list(launcher)
    for i, arg in enumerate(out):
        if arg in _NP_FLAGS and i + 1 < len(out) and out[i + 1].isdigit():
            out[i + 1] = str(nranks)
            return out
        m = re.fullmatch(r"(--?(?:n|np|ntasks))=(\d+)", arg)
        if m:
            out[i] = f"{m.group(1)}={nranks}"
            return out
    raise UserError("--ranks needs a launcher rank count to replace "
                    f"(one of {', '.join(_NP_FLAGS)} N) in: {' '.join(launcher)}")


def resolve_impl(launcher: list[str], mpi: str | None) -> str:
    if not launcher:
        raise UserError("no launcher given: add -- LAUNCHER ARGS, e.g. -- mpirun -n 4")
    return native.resolve_impl(launcher, mpi)


def launch(command: list[str], timeout: float) -> tuple[results.RunOutput, int | None, float, str]:
    """Run one command; returns (parsed stdout, exit code or None on timeout, seconds, stderr)."""
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    except FileNotFoundError:
        raise UserError(f"launcher '{command[0]}' not found") from None
    except PermissionError:
        raise UserError(f"launcher '{command[0]}' is not executable") from None
    interrupted = False
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except (subprocess.TimeoutExpired, KeyboardInterrupt) as why:
        interrupted = isinstance(why, KeyboardInterrupt)
        try:  # the launcher and every rank it started: its own session
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        code = None
    if interrupted:
        err = (err or "") + "\ninterrupted (Ctrl-C)"
    return results.parse_lines(out or ""), code, time.monotonic() - t0, err or ""


def _finalize_stats(rows: list[dict]) -> list[dict]:
    """startup: the per-rank finalize lines reduced to one min/avg/max row."""
    values = np.array([r["finalize_s"] for r in rows if r.get("table") == "finalize"])
    if values.size == 0:
        return []
    return [{"table": "finalize", "ranks_reported": int(values.size),
             "finalize_s_min": float(values.min()), "finalize_s_avg": float(values.mean()),
             "finalize_s_max": float(values.max())}]


def _failure(code: int | None, out: results.RunOutput, stderr: str, timeout: float) -> str:
    if out.errors:
        return out.errors[0]
    if code is None:
        if stderr.endswith("interrupted (Ctrl-C)"):
            return "interrupted (Ctrl-C)"
        return f"timed out after {timeout:g} s"
    last = [line for line in stderr.strip().splitlines() if line.strip()]
    why = f": {last[-1].strip()[:200]}" if last else ""
    if code != 0:
        return f"launcher exited with status {code}{why}"
    return f"kernel ended without its end line{why}"


def run_kernel(kern: Kernel, launcher: list[str], kernel_args: list[str], *, impl: str,
               ranks: list[int] | None, cli_options: dict, timeout: float,
               io_dir: str | None = None, keep: bool = False) -> dict:
    """Launch ``kern`` (at each P of ``ranks`` if given) and return the merged result.

    A failed launch ends the series: the result keeps what was printed, is
    marked partial, and carries the reason in ``errors``.
    """
    binary = str(native.program(impl, f"bench/{kern.name}"))
    result = results.new_result(kern.name, impl, launcher, cli_options, kern.methods)
    launches = [with_ranks(launcher, p) for p in ranks] if ranks else [list(launcher)]
    tmpdir = None
    args = list(kernel_args)
    if kern.needs_dir:
        if io_dir is None:
            tmpdir = tempfile.mkdtemp(prefix="mpiscope-io-", dir=".")
            io_dir = tmpdir
        elif not Path(io_dir).is_dir():
            raise UserError(f"--dir {io_dir}: not a directory")
        args += ["--dir", str(Path(io_dir).resolve())] + (["--keep"] if keep else [])
    try:
        for cmd_launcher in launches:
            extra = ["--launch-time", f"{time.time():.6f}"] if kern.name == "startup" else []
            command = cmd_launcher + [binary] + args + extra
            out, code, wall, stderr = launch(command, timeout)
            extra_rows = []
            if kern.name == "startup":
                extra_rows = _finalize_stats(out.rows) + [{"table": "launch", "wall_s": wall}]
                out.rows = [r for r in out.rows if r.get("table") != "finalize"]
            results.add_run(result, out, command, code, wall, extra_rows)
            if not result["runs"][-1]["complete"]:
                if not out.errors:
                    result["errors"].append(_failure(code, out, stderr, timeout))
                break
    finally:
        if tmpdir and not keep:
            shutil.rmtree(tmpdir, ignore_errors=True)
    if tmpdir and keep:
        result["notes"].append(f"files kept in {Path(tmpdir).resolve()}")
    return result
