"""Erroneous calls under MPI_ERRORS_RETURN (issue 21, "Erroneous calls").

tests/error_calls.py generates, from runtime/wrappers/functions.py, one C program that
calls every wrapped function once per erroneous argument (null handle, rank
P + 5, count -1, tag -5). It runs on one rank without the runtime and with it
(mpiscope run). Each case must end the same way in both runs: the same error
class, or a crash of the MPI library itself in both ("crashes without too").
Without the runtime the driver restarts the program after a case that
crashed it; with the runtime, one run makes every other case (so one profile
covers them), then each crashing case runs alone. The profile must be
readable, `mpiscope report` must accept it, and it must hold no peer and no
byte but those of the few calls an MPI accepts (their peers are
MPI_PROC_NULL): a call that failed is counted, never its bytes or its
message (MPI_Send to rank P + 5 used to record peer P + 5, and the report
then rejected the profile; MPI_Send on MPI_COMM_NULL went through the
runtime's rank translation of the null communicator, which crashed).
"""

from __future__ import annotations

import re
import subprocess

import pytest

import error_calls
import mpitest
from mpiscope import read
from profile_expect import HUNG, Expect, check_program, run_killable, runner  # noqa: F401

CASE = re.compile(r"^case (\d+) (\S+) (\S+) (-?\d+)$", re.M)
TRY = re.compile(r"^try (\d+)$", re.M)


MPICC = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}


def source(impl: str, tmp_path):
    """The sweep over what the runtime built for impl wraps: the MPI-4 functions
    (large-count MPI_X_c, MPI_Isendrecv, partitioned, persistent collectives)
    only where that MPI's mpi.h declares them (MPICH 4.0, not Open MPI 4.1)."""
    src, listed = error_calls.program(error_calls.load_functions(MPICC[impl]))
    path = tmp_path / "error_calls.c"
    path.write_text(src)
    return path, listed


def _build(impl: str, src, out) -> str:
    subprocess.run([MPICC[impl], "-w", "-O0", str(src), "-o", str(out)], check=True, timeout=300,
                   capture_output=True)
    return str(out)


def launch(impl: str, exe: str, args: list, rundir, profiled: bool):
    rundir.mkdir(parents=True, exist_ok=True)
    cmd = [*mpitest.launcher(impl, 1), exe, *map(str, args)]
    if profiled:
        cmd = mpitest.mpiscope_cmd("run", "--dir", str(rundir), "--mpi", impl, "--", *cmd)
    return run_killable(cmd, rundir, mpitest.mpi_env(), timeout=120)


def outcomes(out: str) -> dict:
    return {int(m[1]): int(m[4]) for m in CASE.finditer(out)}


def sweep(impl: str, exe: str, ncases: int, rundir) -> dict:
    """{case: error class or "crash"} over all cases without the runtime,
    restarting the program after a case that crashed it."""
    outcome, first = {}, 0
    while first < ncases:
        rc, out, err = launch(impl, exe, [first], rundir, profiled=False)
        outcome.update(outcomes(out))
        if "cases done" in out:
            assert rc == 0, err[-3000:]
            break
        tried = [int(t) for t in TRY.findall(out)]
        assert tried, f"no case started from {first} (rc {rc}):\n{err[-3000:]}"
        last = tried[-1]
        assert last not in outcome, f"rc {rc} after case {last} ended:\n{err[-3000:]}"
        outcome[last] = "hang" if rc == HUNG else "crash"
        first = last + 1
    return outcome


def test_erroneous_calls_same_errors_and_readable_profiles(impl, tmp_path):
    src, listed = source(impl, tmp_path)
    mpi4 = {f for f, _ in listed if f.endswith("_c") or f.startswith("MPI_P") and "init" in f}
    # the MPI-4 functions are in the sweep exactly where the runtime wraps them
    assert bool(mpi4) == (impl == "mpich"), sorted(mpi4)[:5]
    exe = _build(impl, src, tmp_path / f"error_calls_{impl}")
    plain = sweep(impl, exe, len(listed), tmp_path / "plain")
    assert set(plain) == set(range(len(listed)))
    broken = sorted(i for i, v in plain.items() if not isinstance(v, int))
    # Under the runtime: every case that does not break the MPI itself, in one
    # run (so one profile covers them all), then each breaking case alone.
    prof_dir = tmp_path / "profiled"
    rc, out, err = launch(impl, exe, [0, len(listed), *broken], prof_dir, profiled=True)
    assert rc == 0 and "cases done" in out, f"rc {rc}\n{out[-1000:]}\n{err[-3000:]}"
    profiled = outcomes(out)
    for i in broken:
        rc, out, err = launch(impl, exe, [i, i], tmp_path / f"alone{i}", profiled=True)
        assert i not in outcomes(out) and rc != 0, f"case {i} {listed[i]} ran under the runtime"
        profiled[i] = plain[i]
    differ = [f"{i} {listed[i][0]} {listed[i][1]}: without {plain[i]}, with {profiled.get(i)}"
              for i in range(len(listed)) if plain[i] != profiled.get(i)]
    assert not differ, "\n".join(differ)
    # Most cases are errors (an MPI may accept a few, e.g. MPI_Wait on MPI_REQUEST_NULL).
    failed = sum(1 for v in plain.values() if v != 0)
    assert failed > len(listed) * 9 // 10, plain
    files = sorted(prof_dir.glob("*.mpiscope"))
    assert len(files) == 1, err[-3000:]
    prof = read(files[0])
    assert prof.funcs["calls"].sum() >= len(listed) - len(broken)  # every case is counted
    assert not len(prof.peers), prof.peers
    # A failed call moves nothing; only a function with a case the MPI
    # accepted (Open MPI's MPI_Scatter ignores the send type on one rank) may.
    accepted = {listed[i][0] for i, v in profiled.items() if v == 0}
    moved = {prof.functions[int(r["func"])] for r in prof.funcs
             if r["bytes_sent"] or r["bytes_recv"]}
    assert moved <= accepted, moved - accepted
    rep = subprocess.run(mpitest.mpiscope_cmd("report", str(files[0])), capture_output=True,
                         text=True, env=mpitest.mpi_env(), timeout=120)
    assert rep.returncode == 0, rep.stderr
    print(f"{impl}: {len(listed)} cases, {failed} errors, crash the MPI without the runtime "
          f"too: {[listed[i] for i in broken]}")


def erroneous_p2p(P: int, polls: dict) -> Expect:
    """Three failed sends per rank: counted, in bucket 0, no bytes, no peer."""
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Send", calls=2).call(r, "MPI_Isend")
    return e


def test_failed_sends_to_real_peers(runner, impl):  # noqa: F811
    """At the test's full rank count, to a real neighbour: the case of the issue."""
    prof = check_program(runner, impl, "erroneous_p2p", erroneous_p2p)
    rep = subprocess.run(mpitest.mpiscope_cmd("report", str(runner.run(impl, "erroneous_p2p")
                                                            .profiles[0])),
                         capture_output=True, text=True, env=mpitest.mpi_env(), timeout=120)
    assert rep.returncode == 0, rep.stderr
    assert not len(prof.peers)
