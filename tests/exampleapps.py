"""Helpers for the mini-app tests (tests/examples/test_examples_*.py).

The apps are built per MPI into libexec/mpiscope/examples/ (examples/CMakeLists.txt).
Each prints one line starting with ``RESULT <app>`` that must be the same for
every variant of a problem; profile tests run them under ``mpiscope run``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

import mpiscope
import mpitest
from mpiscope import native
from mpiscope.profile import Profile

# Seconds one small mini-app run may take (16 oversubscribed ranks on 2 cores).
TIMEOUT = 120


def app(impl: str, name: str) -> str:
    return str(native.program(impl, f"examples/{name}"))


def run_app(impl: str, n: int, name: str, *args: str, cwd=None,
            check: bool = True) -> subprocess.CompletedProcess:
    """Run mini-app ``name`` on n ranks of implementation impl (no profiler)."""
    cmd = mpitest.launcher(impl, n) + [app(impl, name), *map(str, args)]
    return mpitest.run(cmd, cwd=cwd, timeout=TIMEOUT, check=check)


def result_line(proc: subprocess.CompletedProcess, name: str) -> str:
    """The one ``RESULT <name> ...`` line a run printed."""
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"RESULT {name} ")]
    assert len(lines) == 1, f"expected one RESULT line, got:\n{proc.stdout}\n{proc.stderr}"
    return lines[0]


def result_fields(line: str) -> dict[str, str]:
    """``RESULT app k=v k=v`` -> {k: v}."""
    return dict(tok.split("=", 1) for tok in line.split()[2:])


def app_of(name: str) -> str:
    """The app a build prints its RESULT line as: pcg_f08 -> pcg."""
    return name.split("_")[0]


def result(impl: str, n: int, name: str, *args: str, cwd=None) -> str:
    return result_line(run_app(impl, n, name, *args, cwd=cwd), app_of(name))


def profiled(impl: str, n: int, name: str, *args: str, outdir: Path,
             extra: tuple[str, ...] = (), launch: list[str] | None = None
             ) -> tuple[Profile, str]:
    """Run mini-app ``name`` under ``mpiscope run`` into outdir; return (profile, RESULT line).
    ``launch``: the whole launcher command (default ``mpitest.launcher(impl, n)``)."""
    outdir.mkdir(parents=True, exist_ok=True)
    before = set(outdir.glob("*.mpiscope"))
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(outdir), "--mpi", impl, *extra, "--",
                               *(launch or mpitest.launcher(impl, n)), app(impl, name),
                               *map(str, args))
    proc = mpitest.run(cmd, cwd=outdir, timeout=TIMEOUT)
    new = sorted(set(outdir.glob("*.mpiscope")) - before)
    assert len(new) == 1, f"expected one new profile in {outdir}, got {new}\n{proc.stderr}"
    return mpiscope.read(str(new[0])), result_line(proc, app_of(name))


def per_rank(profile: Profile, field: str, func: str | None = None,
             region: str | None = None, kind: str | None = None) -> np.ndarray:
    """Per-rank sum of a FUNCS field, optionally for one function, region or function kind."""
    recs = profile.funcs
    mask = np.ones(len(recs), bool)
    if func is not None:
        if func not in profile.functions:
            return np.zeros(profile.nranks, np.float64)
        mask &= recs["func"] == profile.func_id(func)
    if region is not None:
        mask &= recs["region"] == profile.region_id(region)
    if kind is not None:
        kinds = np.array(profile.function_kinds)
        mask &= kinds[recs["func"]] == kind if len(kinds) else False
    out = np.zeros(profile.nranks, np.float64)
    np.add.at(out, recs["rank"][mask], recs[field][mask].astype(np.float64))
    return out


def peer_matrix(profile: Profile, field: str = "msgs") -> np.ndarray:
    """Dense nranks x nranks matrix of a PEERS field (rank -> peer)."""
    m = np.zeros((profile.nranks, profile.nranks), np.int64)
    np.add.at(m, (profile.peers["rank"], profile.peers["peer"]), profile.peers[field])
    return m


def assert_one_line_error(proc: subprocess.CompletedProcess, name: str, message: str) -> None:
    """The run failed with exactly one ``<name>: error: ...`` line containing message."""
    assert proc.returncode != 0
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith(f"{name}: error:")]
    assert len(errors) == 1 and message in errors[0], proc.stderr


def mix(bits: np.ndarray, index: np.ndarray) -> np.ndarray:
    """examples/common/miniapp.c:miniapp_mix over uint64 arrays."""
    with np.errstate(over="ignore"):
        z = bits ^ (index * np.uint64(0x9E3779B97F4A7C15))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def blocks(n: int, p: int) -> list[int]:
    """examples/common/miniapp.c:miniapp_block lengths."""
    return [n // p + (1 if c < n % p else 0) for c in range(p)]


def expected_halo_traffic(grid: tuple[int, int], procs: tuple[int, int], steps: int):
    """(messages, bytes) matrices of a 2-D run: one message per neighbour per step;
    x faces carry the interior rows, y faces whole rows with their two ghosts."""
    (nx, ny), (px, py) = grid, procs
    lx, ly = blocks(nx, px), blocks(ny, py)
    size = px * py
    msgs = np.zeros((size, size), np.int64)
    nbytes = np.zeros((size, size), np.int64)
    for r in range(size):
        cx, cy = r % px, r // px
        for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            if 0 <= cx + dx < px and 0 <= cy + dy < py:
                peer = cx + dx + px * (cy + dy)
                msgs[r, peer] = steps
                face = ly[cy] if dx else lx[cx] + 2
                nbytes[r, peer] = steps * face * 8
    return msgs, nbytes
