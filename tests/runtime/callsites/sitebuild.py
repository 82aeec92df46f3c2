"""Build and run the call-site test programs (tests/programs/callsites/) and read
their sites back as {(function, file, line): calls per rank}.

The programs mark every call line with ``site:NAME``; :func:`marker_lines`
finds those lines, so a test asserts the exact file:line of each site without
hard-coding line numbers. They are compiled here (with -g, at the optimization
the test asks for), not by the CMake build, because the tests strip, rebuild
and relink them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

import mpitest
from mpiscope import format as fmt
from mpiscope import native, read

SRC = mpitest.REPO / "tests" / "programs" / "callsites"
COMPILERS = {"c": "mpicc", "cxx": "mpicxx", "fortran": "mpif90"}


def marker_lines(path: Path) -> dict[str, int]:
    """site:NAME marker -> its line number (1-based) in the source file."""
    out = {}
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        for name in re.findall(r"site:(\w+)", line):
            out[name] = i
    return out


def compile_program(impl: str, lang: str, sources: list[Path], out: Path, *flags: str) -> Path:
    """Compile sources with impl's compiler wrapper (-g and the given flags) into out."""
    cc = shutil.which(f"{COMPILERS[lang]}.{impl}")
    assert cc, f"{COMPILERS[lang]}.{impl} not found"
    extra = ["-fallow-argument-mismatch", "-J", str(out.parent)] if lang == "fortran" else []
    cmd = [cc, "-g", *flags, *extra, "-o", str(out), *map(str, sources)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return out


def mpi4py_env(impl: str) -> dict:
    """PYTHONPATH for an mpi4py built against impl (scripts/setup.sh builds MPICH's)."""
    if impl == "openmpi":
        return {}
    path = mpitest.REPO / "build" / f"mpi4py-{impl}"
    assert list(path.glob("mpi4py/MPI.*.so")), f"{path}: no mpi4py for {impl}; run scripts/setup.sh"
    return {"PYTHONPATH": f"{path}{os.pathsep}{mpitest.REPO / 'src'}"}


def run_profile(impl: str, argv: list[str], tmp: Path, n: int = 2, env: dict | None = None,
                launch_prefix: list[list[str]] | None = None):
    """Run argv on n ranks of impl under the runtime (LD_PRELOAD); return (Profile, stdout).

    launch_prefix: per rank, a command put before argv (an MPMD launch), e.g. setarch."""
    env = {"LD_PRELOAD": str(native.runtime_library(impl)), "MPISCOPE_DIR": str(tmp),
           "MPISCOPE_QUIET": "1", **(env or {})}
    before = set(tmp.glob("*.mpiscope"))
    if impl == "openmpi":
        fwd = [a for k in env for a in ("-x", k)]
        base = ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", *fwd]
    else:
        fwd = [a for k, v in env.items() for a in ("-env", k, v)]
        base = ["mpirun.mpich", *fwd]
    if launch_prefix:
        cmd = base[:]
        for r, pre in enumerate(launch_prefix):
            cmd += ([":"] if r else []) + ["-n", "1", *pre, *argv]
    else:
        cmd = [*base, "-n", str(n), *argv]
    proc = mpitest.run(cmd, cwd=tmp, env=env, timeout=240)
    [path] = set(tmp.glob("*.mpiscope")) - before
    return read(path), proc.stdout


def site_calls(prof, sym=None) -> dict[tuple, np.ndarray]:
    """(MPI function, ((file name, line, parent function), ...) innermost first) -> calls
    per rank, from the profile's CALLSITES totals symbolized as the report does (the
    innermost frame is the line written; an inlined call adds ("inlined in", file name,
    line, function) frames after it); the site of lost calls is key (function, None)."""
    from mpiscope.report.callsites import resolve_sites
    from mpiscope.symbols import Symbolizer
    sym = sym or Symbolizer(use_cache=False)
    tot = prof.callsites[prof.callsites["bucket"] == fmt.SITE_TOTAL]
    defs = prof.callsite_defs
    ids = [int(s) for s in np.unique(tot["site"]) if s != fmt.SITE_LOST]
    frames, _ = resolve_sites(prof, ids, sym)
    out: dict[tuple, np.ndarray] = defaultdict(lambda: np.zeros(prof.nranks, np.int64))
    for site in np.unique(tot["site"]).tolist():
        rows = tot[tot["site"] == site]
        for f in np.unique(rows["func"]).tolist():
            r = rows[rows["func"] == f]
            per_rank = np.bincount(r["rank"], weights=r["calls"], minlength=prof.nranks).astype(np.int64)
            if site == fmt.SITE_LOST:
                out[(prof.functions[f], None)] += per_rank
                continue
            assert defs[site][0] == f
            where = []
            for fr in frames[site]:
                where.append((Path(fr["file"]).name if fr["file"] else None, fr["line"], fr["function"]))
                where += [("inlined in", Path(i["file"] or "?").name, i["line"], i["function"])
                          for i in fr["inlined_in"]]
            out[(prof.functions[f], tuple(where))] += per_rank
    return dict(out)


def innermost(calls: dict[tuple, np.ndarray]) -> dict[tuple, np.ndarray]:
    """The same sites keyed by (MPI function, file name, line) of their innermost frame."""
    out: dict[tuple, np.ndarray] = {}
    for (func, where), per_rank in calls.items():
        key = (func, None) if where is None else (func, where[0][0], where[0][1])
        out[key] = out[key] + per_rank if key in out else per_rank.copy()
    return out


def assert_sites_cover_functions(prof) -> None:
    """Every call of every function is in exactly one site: per (rank, function), the
    sites' calls, bytes and time add up to the FUNCS record's."""
    tot = prof.callsites[prof.callsites["bucket"] == fmt.SITE_TOTAL]
    n, nf = prof.nranks, len(prof.functions)
    for field in ("calls", "bytes_sent", "bytes_recv"):
        a = np.zeros((n, nf), np.int64)
        b = np.zeros((n, nf), np.int64)
        np.add.at(a, (tot["rank"], tot["func"]), tot[field].astype(np.int64))
        np.add.at(b, (prof.funcs["rank"], prof.funcs["func"]), prof.funcs[field].astype(np.int64))
        pcontrol = prof.functions.index("MPI_Pcontrol") if "MPI_Pcontrol" in prof.functions else -1
        if pcontrol >= 0:
            b[:, pcontrol] = 0       # bookkeeping, no call site
        assert (a == b).all(), (field, np.argwhere(a != b)[:5])
    t = np.zeros((n, nf))
    np.add.at(t, (tot["rank"], tot["func"]), tot["time"])
    f = np.zeros((n, nf))
    np.add.at(f, (prof.funcs["rank"], prof.funcs["func"]), prof.funcs["time"])
    assert np.allclose(t, f, rtol=1e-9, atol=1e-12)


def python() -> str:
    return sys.executable
