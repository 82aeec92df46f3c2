"""Dynamic processes under the runtime (tests/programs/spawn.c): a job that
spawns child jobs one after the other. With and without `mpiscope run` the
program prints the same lines and exits 0; the parent job writes one profile
(its MPI_Comm_spawn and MPI_Comm_disconnect counted on every rank), each
child job writes its own (the child's MPI_Send of one int to the parent
counted), and no file is written twice or over another."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np

import mpitest
from mpiscope import read
from profile_expect import HUNG, program_path, run_killable

ROUNDS, CHILDREN = 3, 2
# MPICH busy-polls: the parent job and a child job share the 2 cores, so 1 rank each.
PARENT_RANKS = {"openmpi": 2, "mpich": 1}


def _lines(out: str) -> list[str]:
    """The program's own lines, without the spawn times."""
    return sorted(re.sub(r"spawn [0-9.]+ s", "spawn", ln) for ln in out.splitlines()
                  if ln.startswith(("rank ", "ok:", "FAILED")))


def _calls(prof, func: str) -> np.ndarray:
    """Calls of func per rank, over every region."""
    out = np.zeros(prof.nranks, np.int64)
    if func in prof.functions:
        sel = prof.funcs[prof.funcs["func"] == prof.func_id(func)]
        np.add.at(out, sel["rank"].astype(np.int64), sel["calls"].astype(np.int64))
    return out


def _hang_retried(cmd: list, tmp_path, out_name: str) -> tuple:
    """Run cmd (timeout 120 s: a run takes 2-7 s here, loaded); a hang is run once more.

    Open MPI 4.1's own spawn hangs now and then (open-mpi/ompi#9713, #8958; once in
    CI here, in a profiled run, not reproduced in 52 loaded runs since): its stacks
    are shown as a warning, and a second hang fails the test with them.
    """
    rc, out, err = run_killable(cmd, tmp_path, mpitest.mpi_env(), 120)
    if rc == HUNG:
        warnings.warn(f"hung once, run again: {' '.join(cmd)}\n{err[-20000:]}")
        if (tmp_path / out_name).exists():  # what the hung run wrote is not counted
            (tmp_path / out_name).rename(tmp_path / f"{out_name}.hung")
        rc, out, err = run_killable(cmd, tmp_path, mpitest.mpi_env(), 120)
    assert rc != HUNG, err[-20000:]  # with the stacks of every process
    return rc, out, err


def test_spawned_jobs_write_their_own_profiles(impl, tmp_path):
    n = PARENT_RANKS[impl]
    children = CHILDREN if impl == "openmpi" else 1
    launch = [*mpitest.launcher(impl, n), program_path(impl, "spawn"), str(ROUNDS), str(children)]
    plain = _hang_retried(launch, tmp_path, "none")
    out = tmp_path / "profiles"
    cmd = mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(out), "--", *launch)
    rc, stdout, stderr = _hang_retried(cmd, tmp_path, "profiles")
    if impl == "mpich":
        # MPICH 4.0.2's hydra here refuses every spawn, with or without the
        # runtime (docs/runtime.md "Dynamic processes"): the same error, an exit
        # code the job also ends with without the runtime, no profile of a job that
        # never reached MPI_Finalize. The job usually exits 15 (the error class MPI_Abort
        # passes on); once in CI the run without the runtime exited 1 instead, so the
        # profiled run's code must be one of up to three plain runs' codes.
        refused = "MPID_Comm_spawn_multiple(86): Error in spawn call"
        assert refused in plain[2] and refused in stderr, (plain[2][-3000:], stderr[-3000:])
        codes = [plain[0]]
        while rc not in codes and len(codes) < 3:
            codes.append(run_killable(launch, tmp_path, mpitest.mpi_env(), 300)[0])
        assert rc in codes and 0 not in codes, (rc, codes, plain[2][-3000:], stderr[-3000:])
        assert not list(out.glob("*.mpiscope"))
        return
    assert plain[0] == 0, plain[2][-3000:]
    assert rc == 0, stderr[-3000:]
    assert _lines(stdout) == _lines(plain[1])
    assert f"ok: {ROUNDS} rounds of {children} children from {n} ranks" in stdout

    files = sorted(out.glob("*.mpiscope"))
    named = re.findall(r"^mpiscope: profile: (\S+)$", stderr, re.M)
    assert sorted(named) == [str(f) for f in files], stderr[-3000:]
    profs = [read(f) for f in files]
    parents = [p for p in profs if "child" not in (p.meta.get("argv") or [])]
    kids = [p for p in profs if "child" in (p.meta.get("argv") or [])]
    assert len(parents) == 1 and len(kids) == ROUNDS, [p.meta.get("argv") for p in profs]
    parent = parents[0]
    assert parent.nranks == n
    np.testing.assert_array_equal(_calls(parent, "MPI_Comm_spawn"), ROUNDS)
    np.testing.assert_array_equal(_calls(parent, "MPI_Comm_disconnect"), ROUNDS)
    for kid in kids:
        assert kid.nranks == children
        sent = _calls(kid, "MPI_Send")
        assert list(sent) == [1] + [0] * (children - 1)
        # issue 27 item 11: the message to the parent job has no world rank to file it
        # under: no peer record, and the profile says so (overflow bit 7)
        assert not len(kid.peers)
        assert [bool(o & (1 << 7)) for o in kid.ranks["overflow"]] == [True] + [False] * (children - 1)
        warnings = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json",
                                                               kid.path)).stdout)["warnings"]
        assert any("another job" in w for w in warnings), warnings
        np.testing.assert_array_equal(_calls(kid, "MPI_Comm_disconnect"), 1)
