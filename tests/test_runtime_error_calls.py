"""Erroneous calls under MPI_ERRORS_RETURN (issue 21, "Erroneous calls").

tests/error_calls.py generates, from runtime/functions.py, one C program that
calls every wrapped function once per erroneous argument (null handle, rank
P + 5, count -1, tag -5). It runs on one rank without the runtime and with it
(mpiscope run). Each case must end the same way in both runs: the same error
class, or a crash of the MPI library itself in both ("crashes without too":
the driver restarts the program after the crashed case, so one crash does not
hide the cases after it). Every profile written must be readable, `mpiscope
report` must accept it, and it must hold no byte and no peer: every call
either failed or moved nothing by construction, and a call that failed is
counted, never its bytes or its message (MPI_Send to rank P + 5 used to
record peer P + 5 and the report then rejected the profile; MPI_Send on
MPI_COMM_NULL used to crash the runtime).
"""

from __future__ import annotations

import re
import subprocess

import pytest

import error_calls
import mpitest
from mpiscope import read
from profile_expect import run_killable

CASE = re.compile(r"^case (\d+) (\S+) (\S+) (-?\d+)$", re.M)
TRY = re.compile(r"^try (\d+)$", re.M)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    src, listed = error_calls.program()
    path = tmp_path_factory.mktemp("errcalls") / "error_calls.c"
    path.write_text(src)
    return path, listed


def _build(impl: str, src, out) -> str:
    cc = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}[impl]
    subprocess.run([cc, "-w", "-O0", str(src), "-o", str(out)], check=True, timeout=300,
                   capture_output=True)
    return str(out)


def sweep(impl: str, exe: str, ncases: int, rundir, profiled: bool) -> tuple[dict, str]:
    """{case: error class or "crash"} over all cases, restarting after a crash."""
    outcome, first, log = {}, 0, ""
    rundir.mkdir(parents=True, exist_ok=True)
    while first < ncases:
        launch = [*mpitest.launcher(impl, 1), exe, str(first)]
        cmd = (mpitest.mpiscope_cmd("run", "--dir", str(rundir), "--mpi", impl, "--", *launch)
               if profiled else launch)
        rc, out, err = run_killable(cmd, rundir, mpitest.mpi_env(), timeout=120)
        log += err[-2000:]
        for m in CASE.finditer(out):
            outcome[int(m[1])] = int(m[4])
        if "cases done" in out:
            assert rc == 0, err[-3000:]
            break
        tried = [int(t) for t in TRY.findall(out)]
        assert tried, f"no case started from {first} (rc {rc}):\n{err[-3000:]}"
        last = tried[-1]
        assert last not in outcome, f"rc {rc} after case {last} ended:\n{err[-3000:]}"
        outcome[last] = "crash" if rc != mpitest_hung() else "hang"
        first = last + 1
    return outcome, log


def mpitest_hung() -> int:
    from profile_expect import HUNG
    return HUNG


def test_erroneous_calls_same_errors_and_readable_profiles(impl, source, tmp_path):
    src, listed = source
    exe = _build(impl, src, tmp_path / f"error_calls_{impl}")
    plain, _ = sweep(impl, exe, len(listed), tmp_path / "plain", profiled=False)
    prof_dir = tmp_path / "profiled"
    profiled, log = sweep(impl, exe, len(listed), prof_dir, profiled=True)
    assert set(plain) == set(range(len(listed)))
    differ = [f"{i} {listed[i][0]} {listed[i][1]}: without {plain[i]}, with {profiled.get(i)}"
              for i in range(len(listed)) if plain[i] != profiled.get(i)]
    assert not differ, "\n".join(differ)
    # Every case is really erroneous for at least one of the two MPIs' checks;
    # most fail here (an MPI may accept, e.g., MPI_PROC_NULL's count unchecked).
    failed = sum(1 for v in plain.values() if v != 0)
    assert failed > len(listed) // 2, plain
    files = sorted(prof_dir.glob("*.mpiscope"))
    assert files, log
    for path in files:
        prof = read(path)
        assert not len(prof.peers), prof.peers
        assert not prof.funcs["bytes_sent"].any() and not prof.funcs["bytes_recv"].any()
        rep = subprocess.run(mpitest.mpiscope_cmd("report", str(path)), capture_output=True,
                             text=True, env=mpitest.mpi_env(), timeout=120)
        assert rep.returncode == 0, rep.stderr
    crashes = sorted(f"{listed[i][0]} {listed[i][1]}" for i, v in plain.items() if v == "crash")
    print(f"{impl}: {len(listed)} cases, {failed} errors, crashes without the runtime too: "
          f"{crashes}")
