"""Faults of the profiled program (tests/programs/faults.c), each with and
without the runtime: a rank dying of SIGSEGV, a return without MPI_Finalize,
MPI calls before MPI_Init and after MPI_Finalize, MPI_Finalize twice, SIGTERM
to the launcher. Each: the same exit code and output as without mpiscope, no
hang beyond the launcher's own, and `mpiscope run`'s last line says whether a
profile was written (and the profile it names is complete). MPI_Abort and
SIGKILL are in test_runtime_failures.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

import mpitest
from mpiscope import read
from profile_expect import HUNG, program_path, runner  # noqa: F401  (fixture)

HANG_LIMIT = 60  # seconds a failing job may take to end

# The last line `mpiscope run` prints: it says whether a profile was written.
WROTE = re.compile(r"^mpiscope: (profile: (?P<path>\S+)|error: \S+ exited with code \d+; "
                   r"(?P<n>\d+) profile\(s\) written \(above\))$")
NONE = re.compile(r"^mpiscope: (error: \S+ exited with code \d+; no profile was written in \S+"
                  r"|warning: no profile was written in \S+ .*)$")


def program_lines(run) -> list[str]:
    return [line for line in run.results if line.startswith("faults ")]


def last_line(run) -> str:
    return run.stderr.strip().splitlines()[-1]


def assert_same_end(plain, run, what):
    assert plain.rc != HUNG and run.rc != HUNG, (what, plain.stderr[-500:], run.stderr[-500:])
    assert run.rc == plain.rc, (what, run.rc, plain.rc, run.stderr[-2000:])
    assert run.elapsed < HANG_LIMIT, f"{what} took {run.elapsed:.1f} s under the runtime"


def allreduce_calls(prof) -> list[int]:
    rows = prof.funcs[prof.funcs["func"] == prof.func_id("MPI_Allreduce")]
    return [int(rows["calls"][rows["rank"] == r].sum()) for r in range(prof.nranks)]


# (fault, does the profile get written). Exit codes and outputs are whatever
# the MPI does without the runtime (Open MPI and MPICH differ).
FAULTS = [("segv", False), ("no_finalize", False), ("before_init", False),
          ("after_finalize", True), ("finalize_twice", True)]


@pytest.mark.parametrize("fault,writes", FAULTS, ids=[f for f, _ in FAULTS])
def test_fault_keeps_exit_code_output_and_says_if_profiled(runner, impl, fault,  # noqa: F811
                                                           writes):
    plain = runner.run(impl, "faults", fault, how="plain", timeout=HANG_LIMIT)
    run = runner.run(impl, "faults", fault, how="mpiscope", timeout=HANG_LIMIT)
    assert_same_end(plain, run, fault)
    n = run.nranks
    if fault in ("no_finalize", "segv"):
        # A job that ends without MPI_Finalize, or of a dead rank, may lose a
        # rank's last output (MPICH's hydra does, with or without the runtime):
        # every line printed is right, and no other line appears.
        expect = ({f"faults rank {r} checksum {n} ok" for r in range(n)} if fault == "no_finalize"
                  else {f"faults rank {int(n > 1)} raises SIGSEGV"})
        assert set(program_lines(run)) <= expect, run.stdout
        assert set(program_lines(plain)) <= expect, plain.stdout
    else:
        assert program_lines(run) == program_lines(plain), run.stdout
    line = last_line(run)
    if writes:
        assert WROTE.match(line), run.stderr[-2000:]
        assert len(run.profiles) == 1 and str(run.profiles[0]) in run.stderr
        prof = read(run.profiles[0])
        assert prof.nranks == run.nranks and allreduce_calls(prof) == [1] * run.nranks
    else:
        assert NONE.match(line), run.stderr[-2000:]
        assert run.profiles == []


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def sigterm_launcher(impl: str, n: int, outdir, how: str) -> tuple[int, float, str]:
    """Start faults wait_forever, wait until every rank is ready, SIGTERM the
    launcher (mpirun, not mpiscope): its exit code, seconds to end, stderr."""
    cmd = [*mpitest.launcher(impl, n), program_path(impl, "faults"), "wait_forever"]
    if how == "mpiscope":
        cmd = mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(outdir), "--", *cmd)
    proc = subprocess.Popen(cmd, env=mpitest.mpi_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        ready = 0
        while ready < n:
            line = proc.stdout.readline()
            assert line, f"the job ended before all ranks were ready: {proc.stderr.read()}"
            ready += line.endswith(" ready\n")
        target = proc.pid if how == "plain" else _children(proc.pid)[0]
        start = time.monotonic()
        os.kill(target, signal.SIGTERM)
        _, err = proc.communicate(timeout=HANG_LIMIT)
        return proc.returncode, time.monotonic() - start, err
    finally:
        if proc.poll() is None:
            mpitest.kill_tree(proc.pid)
            proc.wait()


def test_sigterm_to_launcher_ends_like_without_runtime(impl, tmp_path):
    n = 4 if impl == "openmpi" else mpitest.NRANKS[impl]
    plain_rc, plain_s, _ = sigterm_launcher(impl, n, tmp_path, "plain")
    rc, seconds, err = sigterm_launcher(impl, n, tmp_path, "mpiscope")
    if impl == "mpich":
        # Hydra's own exit code after SIGTERM races its children's: 15 or 0, with
        # the runtime or without (5 plain runs here: 15, 15, 15, 15, 0).
        assert {rc, plain_rc} <= {0, 15}, (rc, plain_rc, err)
    else:
        assert rc == plain_rc and rc != 0, (rc, plain_rc, err)
    assert seconds < plain_s + 15, (seconds, plain_s)
    line = err.strip().splitlines()[-1]
    profiles = sorted(tmp_path.glob("*.mpiscope"))
    if profiles:  # a partial profile at SIGTERM is complete as a file and says so
        assert WROTE.match(line), err
        for path in profiles:
            read(path)
    else:
        assert NONE.match(line), err
    time.sleep(1)
    leftover = subprocess.run(["pgrep", "-f", program_path(impl, "faults") + " wait_forever"],
                              capture_output=True, text=True).stdout.split()
    assert not leftover, f"ranks left running after SIGTERM: {leftover}"
