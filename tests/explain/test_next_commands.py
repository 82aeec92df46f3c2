"""Every "next:" command mpiscope diagnose prints runs, on the case that produced it, and
finishes: exit 0 and, for a rerun, one readable profile written (issue 29 item 4: the
commands it printed failed: Open MPI's mpirun for an MPICH program, --oversubscribe dropped,
four cores asked of a two-core node).

The cases: real runs (a late arrival without --sync, unbound ranks on both MPIs, a hot rank,
a scrambled rank order modelled as nodes of 4) and profiles with known numbers whose recorded
launch is a real program here (tests/costprofiles.py), for the rules whose firing depends on
the machine's load (oversubscription, ranks pinned together, OpenMP threads, the eager limit
on both MPIs, small collectives). The commands run as a user would run them, in a shell with
`mpiscope` on the PATH and only what this machine itself needs in the environment (root may
run Open MPI, no CMA in the container): not the test suite's Open MPI oversubscription
default, so a command that drops --oversubscribe fails here as it would for the user.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import costprofiles as cp
import envruns
import explainruns as er
import mpitest
from mpiscope import native, read

MACHINE_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
               "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


def printed_commands(path: str, *extra: str) -> list[str]:
    """The "next:" lines of `mpiscope diagnose PATH` (the text a user reads)."""
    out = mpitest.run(mpitest.mpiscope_cmd("diagnose", *extra, path)).stdout
    return [m.group(1).strip() for m in re.finditer(r"^   next: (.+)$", out, re.M)]


def run_command(cmd: str, cwd: Path) -> None:
    """Run one printed command as a user would; assert it finishes and writes its profile."""
    out = cwd / "out"
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_MCA_", "MPISCOPE_"))}
    env.update(MACHINE_ENV)
    env["MPISCOPE_DIR"] = str(out)
    env["PYTHONPATH"] = str(mpitest.REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    shell = f'mpiscope() {{ {shlex.quote(sys.executable)} -m mpiscope.cli "$@"; }}\n{cmd}\n'
    before = set(out.glob("*.mpiscope"))
    proc = subprocess.run(["bash", "-c", shell], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"{cmd}\nexited {proc.returncode}\n{proc.stderr[-3000:]}"
    if "mpiscope run" in cmd:
        new = sorted(set(out.glob("*.mpiscope")) - before)
        assert len(new) == 1, (cmd, proc.stderr[-2000:])
        assert read(str(new[0])).nranks > 0


def prog(impl: str, name: str) -> str:
    return str(native.program(impl, name))


def test_next_commands_of_real_runs(tmp_path):
    ran = []
    # late arrival without --sync (the odd rank spins 20 ms more per step): a --sync rerun
    prof, _ = er.first_run_where(
        lambda p: "late-arrival" in {f["rule"] for f in _diag(p)}, er.run_program, "openmpi", 2,
        ("diag_steps", "40", "20000", "allreduce"))
    ran += _run_all(prof.path, tmp_path / "late")
    # unbound ranks, both MPIs: reported whatever they cost, with the bound rerun
    for impl in mpitest.impls():
        _, path = envruns.unbound(impl)
        cmds = printed_commands(path)
        assert any(envruns.BIND_CORE[impl][1] in c for c in cmds), cmds
        ran += _run_all(path, tmp_path / f"unbound-{impl}")
    # a hot rank: the region report
    _, path = er.run("openmpi", 2, er.STENCIL_HOT)
    ran += _run_all(path, tmp_path / "hot")
    # neighbours on other nodes (modelled as 4 ranks per node): the order, then the rerun
    _, path = er.run("openmpi", 16, er.stencil_order("scrambled"))
    cmds = printed_commands(path, "--ppn", "4")
    assert any(c.startswith("mpiscope place from-profile") for c in cmds), cmds
    for c in cmds:
        run_command(c, tmp_path / "order")
    ran += cmds
    assert any("--sync" in c for c in ran) and any("report --region" in c for c in ran)


def _diag(prof) -> list[dict]:
    from mpiscope.diagnose import diagnose
    from mpiscope.report import build_report
    return diagnose(prof, build_report(prof))["findings"]


def _run_all(path: str, cwd: Path) -> list[str]:
    cmds = printed_commands(path)
    for c in cmds:
        run_command(c, cwd)
    return cmds


# (case, the rule whose command it is, make(tmp_path) -> profile): profiles with known
# numbers, launched as real programs here
def _cases():
    o, m = "openmpi", "mpich"
    work_o, work_m = prog(o, "tests/omp_truth_work"), prog(m, "tests/omp_truth_work")
    pp_o, pp_m = prog(o, "tests/pingpong"), prog(m, "tests/pingpong")
    pingpong = lambda bucket, t: dict(  # noqa: E731
        funcs=[(r, nm, 1000, t, t / 1000) for r in (0, 1) for nm in ("MPI_Send", "MPI_Recv")],
        hist=[(r, nm, bucket, 1000, t) for r in (0, 1) for nm in ("MPI_Send", "MPI_Recv")],
        wall=2.5 * t, mpi=2 * t)
    return [
        ("oversubscribed", "oversubscribed", lambda d: cp.make(
            d, n=4, wall=10.0, mpi=5.0, argv=(work_o, "2", "1e5"),
            env={"cpu_time": 5.0, "flags": 1, "ncpus": 2, "load": 2.0, "run_delay": 5.0},
            launch=f"mpirun.openmpi --oversubscribe --bind-to none -n 4 {work_o} 2 1e5")),
        ("pinned-together", "cpu-overlap", lambda d: cp.make(
            d, cpus=["0", "0"], argv=(work_o, "2", "1e5"),
            env={"ncpus": 1, "load": 2.0, "overlap": 1, "cpu_time": 5.0, "run_delay": 5.0,
                 "node_idle": 10.0},
            launch=f"mpirun.openmpi --bind-to none -n 2 taskset -c 0 {work_o} 2 1e5")),
        ("openmp-mask", "openmp-oversubscribed", lambda d: cp.make(
            d, n=1, mpi=1.0, cpus=["0"], argv=(work_o, "2", "1e5"),
            env={"threads": 2, "ncpus": 1, "load": 2.0, "run_delay": 4.0,
                 "node_idle": 10.0},
            launch=f"mpirun.openmpi --bind-to core -n 1 {work_o} 2 1e5")),
        ("openmp-node", "oversubscribed", lambda d: cp.make(
            d, n=2, mpi=5.0, cpus=["0", "1"], argv=(work_m, "2", "1e5"), library=cp.MPICH,
            env={"threads": 2, "ncpus": 1, "load": 2.0, "cpu_time": 9.0, "run_delay": 9.0},
            launch=f"mpirun.mpich -bind-to core -n 2 {work_m} 2 1e5")),
        ("unbound-mpich", "unbound-ranks", lambda d: cp.make(
            d, library=cp.MPICH, argv=(work_m, "2", "1e5"),
            env={"flags": 1, "ncpus": 2, "run_delay": 2.0, "node_idle": 2.0},
            launch=f"mpirun.mpich -n 2 {work_m} 2 1e5")),
        ("eager-openmpi", "eager-limit", lambda d: cp.make(
            d, argv=(pp_o, "6000", "20"), launch=f"mpirun.openmpi -n 2 {pp_o} 6000 20",
            **pingpong(13, 0.005))),
        ("eager-mpich", "eager-limit", lambda d: cp.make(
            d, argv=(pp_m, "12000", "20"), library=cp.MPICH,
            launch=f"mpirun.mpich -n 2 {pp_m} 12000 20", **pingpong(14, 0.005))),
        ("eager-mpich-rebuilt", "eager-limit", lambda d: cp.make(
            d, argv=(pp_m, "12000", "20"), library=cp.MPICH, launch=None, **pingpong(14, 0.005))),
        ("small-collectives", "small-collectives", lambda d: cp.make(
            d, wall=3.5, mpi=2.1, argv=(prog(o, "tests/truth_coll"), "100", "split"),
            funcs=[(r, "MPI_Allreduce", 6000, 2.1, 0.27e-6) for r in (0, 1)],
            hist=[(r, "MPI_Allreduce", 4, 6000, 2.1) for r in (0, 1)],
            launch=f"mpirun.openmpi -n 2 {prog(o, 'tests/truth_coll')} 100 split")),
    ]


@pytest.mark.parametrize("case,rule,make", _cases(), ids=[c[0] for c in _cases()])
def test_next_command_of_each_rule_runs(tmp_path, case, rule, make):
    if "mpich" in case and "mpich" not in mpitest.impls():
        raise AssertionError("both MPIs are built by scripts/setup.sh")
    prof = make(tmp_path)
    (f,) = [f for f in _diag(prof) if f["rule"] == rule]
    assert f["command"] and f["change"]
    assert f["command"] in printed_commands(prof.path)
    run_command(f["command"], tmp_path / "run")
