"""Issue 29's truth benchmark (perf/truth/truth.py) turned into cost models: what each fix can
gain, on profiles with exactly known numbers (tests/costprofiles.py; no MPI run, no timing).

- openmp-oversubscribed: a core per thread only gives a rank the CPU time its node left idle
  (other processes free to move even out the run queues: at load 2 and 20 a core per thread
  lost 23-46 % while the rule claimed 50 % from the run-queue wait);
- cpu-starved: the wait is what CPUs of the job's own give back at most ("up to");
- late-arrival without --sync: the spread of a collective's time is lateness or the
  operation's own, "up to", settled by the --sync rerun."""

from __future__ import annotations

import pytest

import costprofiles as cp
from mpiscope.diagnose import diagnose
from mpiscope.report import build_report

OMP = "mpirun.openmpi --bind-to core -n 1 /bin/omp"


def findings(prof) -> dict[str, dict]:
    return {f["rule"]: f for f in diagnose(prof, build_report(prof))["findings"]}


def _omp(tmp_path, name: str, **env):
    # 1 rank x 2 OpenMP threads on 1 core of a 2-CPU node, 1 s of its 10 in MPI
    base = {"threads": 2, "ncpus": 1, "load": 2.0}
    return cp.make(tmp_path, n=1, wall=10.0, mpi=1.0, cpus=["0"], env={**base, **env},
                   launch=OMP, name=name)


def test_openmp_core_per_thread_on_a_busy_node_is_silent(tmp_path):
    # the run-queue wait (6 s over 2 threads) says 3 s, but no CPU of the node sat idle:
    # the other processes would share the new core as they shared this one
    found = findings(_omp(tmp_path, "busy", cpu_time=7.0, run_delay=6.0, node_idle=0.0))
    assert "openmp-oversubscribed" not in found


def test_openmp_core_per_thread_gains_what_the_node_left_idle(tmp_path):
    # alone on the node: the 2 threads shared one core (CPU time 10 s, wait 10 s), the other
    # CPU sat idle 10 s: a core per thread halves the compute: 9 x 10 / (10 + 10) = 4.5 s
    f = findings(_omp(tmp_path, "alone", cpu_time=10.0, run_delay=10.0,
                      node_idle=10.0))["openmp-oversubscribed"]
    assert f["cost_s"] == pytest.approx(4.5) and f["bound"] == "upper"
    assert "core per thread" in f["settle"] and f["cost_max_s"] is None
    ev = {e["label"]: e["value"] for e in f["evidence"]}
    assert ev["CPU-seconds its node's CPUs sat idle during the run (what CPUs of its own can "
              "give it)"] == 10.0
    # the other CPU idle 2 s only: 9 x 2 / (10 + 2) = 1.5 s, below the wait's 5 s
    f = findings(_omp(tmp_path, "some", cpu_time=10.0, run_delay=10.0,
                      node_idle=2.0))["openmp-oversubscribed"]
    assert f["cost_s"] == pytest.approx(9.0 * 2.0 / 12.0)


def test_openmp_ranks_of_a_node_share_its_idle_time(tmp_path):
    # 2 ranks x 2 threads, a core each, on a 4-CPU node whose 2 other CPUs sat idle 10 s
    # (20 CPU-s): each rank gets half, 9 x 10 / (10 + 10) = 4.5 s
    env = {"threads": 2, "ncpus": 1, "load": 2.0, "cpu_time": 10.0, "run_delay": 10.0,
           "node_idle": 20.0, "node_cpus": 4}
    prof = cp.make(tmp_path, n=2, wall=10.0, mpi=1.0, cpus=["0", "1"], env=env,
                   launch="mpirun.openmpi --bind-to core -n 2 /bin/omp")
    assert findings(prof)["openmp-oversubscribed"]["cost_s"] == pytest.approx(4.5)


def test_cpu_starved_is_a_bound(tmp_path):
    # rank 1 waited 6 s of its 10 for its CPU: CPUs of the job's own give back up to 6 s
    f = findings(cp.make(tmp_path, cpus=["0", "1"],
                         env={"ncpus": 1, "run_delay": [0.2, 6.0], "cpu_time": [9.8, 4.0]}))
    f = f["cpu-starved"]
    assert f["cost_s"] == pytest.approx(6.0) and f["bound"] == "upper"
    assert "at most" in f["method"]


def _late(tmp_path, name: str, t0: float, t1: float):
    # 2 ranks, 40 MPI_Allreduce each, no --sync; rank 0 spent t0 s in them, rank 1 t1 s
    funcs = [(0, "MPI_Allreduce", 40, t0, 1e-5), (1, "MPI_Allreduce", 40, t1, 1e-5)]
    return cp.make(tmp_path, wall=1.6, mpi=[t0, t1], funcs=funcs, name=name,
                   env={"ncpus": 1}, cpus=["0", "1"],
                   launch="mpirun.openmpi --bind-to core -n 2 /bin/steps")


def test_late_arrival_without_sync_is_an_up_to_with_the_sync_rerun(tmp_path):
    # diag_steps 40 20000: rank 0 waits 20 ms per step for rank 1 (0.8 s); rank 1 hardly waits
    f = findings(_late(tmp_path, "late", 0.8, 0.01))["late-arrival"]
    assert f["cost_s"] == pytest.approx((0.8 + 0.01) / 2 - 0.01)
    assert f["bound"] == "upper" and "--sync" in f["settle"]
    assert f["command"] == "mpiscope run --sync -- mpirun.openmpi --bind-to core -n 2 /bin/steps"
    # at load 11-20 both ranks' collectives were stretched alike (1.11 vs 1.14 s): no spread,
    # nothing to price without --sync
    assert "late-arrival" not in findings(_late(tmp_path, "even", 1.11, 1.14))


def test_ranks_pinned_together_on_a_busy_node_gain_only_idle_cpu(tmp_path):
    # both ranks under taskset -c 0 on a 2-CPU node also running other work: each got a tenth
    # of the core. Fair sharing alone says CPUs of their own give 1/9 instead of 1/10 (1 s);
    # but the other processes move to even out the run queues: with no idle CPU, nothing.
    env = {"ncpus": 1, "load": 2.0, "overlap": 1, "overlap_rank": [1, 0], "cpu_time": 1.0,
           "run_delay": 9.0, "node_idle": 0.0}
    launch = "mpirun.openmpi --bind-to none -n 2 taskset -c 0 /bin/app 3"
    assert "cpu-overlap" not in findings(cp.make(tmp_path, cpus=["0", "0"], env=env,
                                                 launch=launch))
    # alone on the node (each had half the core, the other CPU idle 10 s): 5 s each of it,
    # wall x 5 / (5 + 5) = 5 s, as the fair-sharing model says
    env.update(cpu_time=5.0, run_delay=5.0, node_idle=10.0)
    f = findings(cp.make(tmp_path, cpus=["0", "0"], env=env, launch=launch,
                         name="alone"))["cpu-overlap"]
    assert f["cost_s"] == pytest.approx(5.0) and f["bound"] == "upper"
    # the other CPU idle 2 s only: 1 s each: 10 x 1 / (5 + 1)
    env.update(node_idle=2.0)
    f = findings(cp.make(tmp_path, cpus=["0", "0"], env=env, launch=launch,
                         name="some"))["cpu-overlap"]
    assert f["cost_s"] == pytest.approx(10.0 / 6.0)


def test_cpu_starved_never_claims_more_than_the_run(tmp_path):
    # the run-queue wait is read over a window a little wider than the run: on a tiny run
    # under load it can pass the run's own time (CI: 100.7 % of a 38 ms ping-pong)
    f = findings(cp.make(tmp_path, cpus=["0", "1"],
                         env={"ncpus": 1, "run_delay": [0.2, 12.0], "cpu_time": [9.8, 1.0]}))
    f = f["cpu-starved"]
    assert f["cost_s"] == pytest.approx(10.0) and f["cost_pct"] <= 100.0
