"""A Python (mpi4py) program under `mpiscope run` is profiled under its
script's name and arguments, not the interpreter's (docs/runtime.md).

The installed mpi4py is built against Open MPI, so this runs on Open MPI.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

import mpitest
from mpiscope import read

SCRIPT = mpitest.REPO / "tests" / "tools" / "mpi4py_ring.py"


def test_mpi4py_script_is_the_program(tmp_path):
    n, steps = 4, 5
    proc = mpitest.run(mpitest.mpiscope_cmd(
        "run", "--mpi", "openmpi", "--dir", str(tmp_path), "--",
        *mpitest.launcher("openmpi", n), sys.executable, "-u", str(SCRIPT), "--steps", str(steps)),
        cwd=tmp_path, timeout=240)
    assert f"mpi4py_ring: {steps} steps on {n} ranks" in proc.stdout
    [path] = re.findall(r"mpiscope: profile: (\S+)", proc.stderr)
    assert Path(path).name.startswith("mpi4py_ring."), path
    prof = read(path)
    assert prof.meta["program"] == str(SCRIPT.resolve())
    assert prof.meta["argv"] == [str(SCRIPT), "--steps", str(steps)]
    assert Path(prof.meta["interpreter"]).name.startswith("python")
    assert prof.meta["interpreter_argv"][1:3] == ["-u", str(SCRIPT)]
    for name, want in (("MPI_Sendrecv", steps), ("MPI_Allreduce", steps)):
        rows = prof.funcs[prof.funcs["func"] == prof.func_id(name)]
        per_rank = np.bincount(rows["rank"], weights=rows["calls"], minlength=n)
        assert per_rank.tolist() == [want] * n, name
    text = mpitest.run(mpitest.mpiscope_cmd("report", path)).stdout
    assert f"Profile of {SCRIPT.resolve()} --steps {steps}" in text
