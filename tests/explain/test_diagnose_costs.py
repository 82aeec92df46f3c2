"""The cost models of mpiscope diagnose (docs/diagnose.md "Costs") on profiles with exactly
known numbers (tests/costprofiles.py), and the next command each finding builds from the
launch the profile recorded: no MPI run, no timing, every number checked to the formula.

Real runs of the same rules are in test_diagnose_environment.py and test_diagnose_rules.py;
that every printed next command starts and finishes is test_next_commands.py."""

from __future__ import annotations

import shlex

import pytest

import costprofiles as cp
from mpiscope.diagnose import diagnose, rerun
from mpiscope.report import build_report


def findings(prof) -> dict[str, dict]:
    diag = diagnose(prof, build_report(prof))
    out = {f["rule"]: f for f in diag["findings"]}
    for f in diag["findings"]:  # the additive keys every finding has
        assert {"bound", "cost_max_s", "cost_max_pct", "settle", "method", "change"} <= set(f)
        assert f["bound"] in (None, "upper", "lower")
    return out


def evidence(f: dict) -> dict:
    return {e["label"]: e["value"] for e in f["evidence"]}


# --- CPU rules --------------------------------------------------------------------------

def test_oversubscribed_node_is_its_own_finding_priced_from_cpu_time(tmp_path):
    # 4 ranks on a 2-CPU node, unbound, busy-polling: each had half a CPU, half its run in MPI
    launch = "mpirun.openmpi --oversubscribe --bind-to none -n 4 /bin/app 10"
    env = {"cpu_time": 5.0, "flags": 1, "ncpus": 2, "load": 2.0, "run_delay": 5.0}
    found = findings(cp.make(tmp_path, n=4, wall=10.0, mpi=5.0, launch=launch, env=env))
    f = found["oversubscribed"]
    # W = 4 x 5 s x 0.5 = 10 CPU-s on the 2 CPUs the job had (no other work): 5 s; gain 5 s
    assert f["cost_s"] == pytest.approx(5.0) and f["bound"] == "upper"
    assert "More threads than CPUs: 4 threads on 2 CPUs" in f["title"]
    assert f["change"]["nranks"] == 2 and f["change"]["kind"] == "launch"
    # the user's own launch, only the rank count changed (--oversubscribe kept)
    assert f["command"] == "mpiscope run -- mpirun.openmpi --oversubscribe --bind-to none -n 2 /bin/app 10"
    assert not {"unbound-ranks", "cpu-overlap", "cpu-starved"} & set(found)  # one finding, not three


def test_oversubscribed_node_busy_with_other_work_gains_little_from_fewer_ranks(tmp_path):
    # the same 4 ranks, but they got 0.03 CPU each: other processes held the CPUs. Fewer ranks
    # would get fewer turns; the rule's cost (3 %) is below the bar, cpu-starved says why.
    env = {"cpu_time": 0.3, "flags": 1, "ncpus": 2, "load": 2.0, "run_delay": 9.7}
    found = findings(cp.make(tmp_path, n=4, wall=10.0, mpi=5.0, env=env,
                             launch="mpirun.openmpi --oversubscribe -n 4 /bin/app"))
    assert "oversubscribed" not in found
    f = found["cpu-starved"]
    # run-queue wait 9.7 s, of which 1 - 1/2 of the run is waiting for the job's own threads
    assert f["cost_s"] == pytest.approx(9.7 - 5.0) and f["command"] is None


def test_openmp_threads_beyond_the_node_are_cut_not_bound(tmp_path):
    # 2 ranks x 2 OpenMP threads, a core each, on a 2-CPU node: no binding gives 4 threads
    # 4 CPUs; the fix sets OMP_NUM_THREADS to the CPUs per rank. Half the run in MPI.
    env = {"threads": 2, "ncpus": 1, "load": 2.0, "cpu_time": 9.0, "run_delay": 9.0}
    prof = cp.make(tmp_path, n=2, wall=10.0, mpi=5.0, cpus=["0", "1"], env=env,
                   launch="mpirun.openmpi --bind-to core -n 2 /bin/omp")
    found = findings(prof)
    f = found["oversubscribed"]
    # W = 2 x 5 s x 0.9 = 9 CPU-s; the job got 1.8 of 2 CPUs: O = 4 x 0.2 / 1.8 others, and 2
    # threads would get 2 x 2 / (2 + O) CPUs
    others = 4 * 0.2 / 1.8
    assert f["cost_s"] == pytest.approx(10.0 - 9.0 / (4 / (2 + others)))
    assert f["change"]["env"] == {"OMP_NUM_THREADS": "1"} and f["change"]["nranks"] is None
    assert f["command"] == ("mpiscope run -- mpirun.openmpi --bind-to core -n 2 "
                            "-x OMP_NUM_THREADS=1 /bin/omp")
    assert "openmp-oversubscribed" not in found
    # threads that share the work and use every CPU (no MPI time to speak of): fewer threads
    # do the same work on the same CPUs, the model says nothing to gain (issue 29 item 5)
    assert "oversubscribed" not in findings(cp.make(tmp_path, n=2, wall=10.0, mpi=0.2,
                                                    cpus=["0", "1"], env=env, name="busy"))


def test_openmp_threads_beyond_the_mask_on_a_node_with_cpus_to_spare(tmp_path):
    # 1 rank x 2 threads on 1 core of a 2-CPU node whose other CPU sat idle: the threads waited
    # 4 s for the core; one CPU per thread saves 4 / 2 = 2 s (at most compute x (1 - 1/2) =
    # 4.5 s; the idle CPU could give 9 x 10 / (10 + 10) = 4.5 s)
    env = {"threads": 2, "ncpus": 1, "load": 2.0, "cpu_time": 10.0, "run_delay": 4.0,
           "node_idle": 10.0}
    f = findings(cp.make(tmp_path, n=1, wall=10.0, mpi=1.0, cpus=["0"], env=env,
                         launch="mpirun.openmpi --bind-to core -n 1 /bin/omp"))["openmp-oversubscribed"]
    assert f["cost_s"] == pytest.approx(2.0) and f["bound"] == "upper"
    assert f["change"]["threads"] == 2
    # other processes on its core too: it got 0.5 CPU (O = 2 x 0.5 / 0.5 = 2 threads of
    # others), waited 7 s; a core per thread shares with them as well: 9 x 1/(2 + 2) = 2.25 s
    env.update(cpu_time=5.0, run_delay=7.0)
    f = findings(cp.make(tmp_path, n=1, wall=10.0, mpi=1.0, cpus=["0"], env=env, name="busy",
                         launch="mpirun.openmpi --bind-to core -n 1 /bin/omp"))["openmp-oversubscribed"]
    assert f["cost_s"] == pytest.approx(2.25)
    assert f["command"] == ("mpiscope run -- mpirun.openmpi -n 1 --map-by slot:PE=2 --bind-to core "
                            "/bin/omp")


def test_ranks_pinned_together_gain_the_share_the_other_rank_took(tmp_path):
    # both ranks under taskset -c 0 on a 2-CPU node: each had half the core (nothing else ran)
    env = {"ncpus": 1, "load": 2.0, "overlap": 1, "overlap_rank": [1, 0], "cpu_time": 5.0,
           "run_delay": 5.0, "node_idle": 10.0}
    launch = "mpirun.openmpi --bind-to none -n 2 taskset -c 0 /bin/app 3"
    found = findings(cp.make(tmp_path, cpus=["0", "0"], env=env, launch=launch))
    f = found["cpu-overlap"]
    assert f["cost_s"] == pytest.approx(10.0 * 0.5 * (2 - 1))  # wall x share x (load - 1)
    # binding by the launcher, the wrapper that pinned both ranks dropped, nothing else changed
    assert f["command"] == "mpiscope run -- mpirun.openmpi -n 2 --bind-to core --map-by core /bin/app 3"
    assert f["change"]["unwrap"] and "bind-to" in f["change"]["launcher_remove"]
    assert not {"oversubscribed", "unbound-ranks", "cpu-starved"} & set(found)
    # with other processes on the machine each rank got a tenth of the core: CPUs of their own
    # would give them 1/(1 + 8) instead of 1/10: a 1 s gain, not 5 (the node's CPUs idle 4 s)
    env.update(cpu_time=1.0, run_delay=9.0, node_idle=4.0)
    f = findings(cp.make(tmp_path, cpus=["0", "0"], env=env, launch=launch, name="busy"))["cpu-overlap"]
    assert f["cost_s"] == pytest.approx(10.0 * 0.1 * 1) and f["bound"] == "upper"


def test_unbound_ranks_priced_by_the_wait_an_idle_cpu_could_have_ended(tmp_path):
    # 2 unbound ranks on 2 CPUs waited 2.4 s and 1 s while the node's CPUs sat idle 2 CPU-s
    env = {"flags": 1, "ncpus": 2, "run_delay": [2.4, 1.0], "node_idle": 2.0, "cpu_time": [7, 9]}
    found = findings(cp.make(tmp_path, env=env, launch="mpirun.mpich -n 2 /bin/app",
                             library=cp.MPICH))
    f = found["unbound-ranks"]
    assert f["cost_s"] == pytest.approx(2.0) and f["bound"] == "upper" and f["settle"]
    assert f["command"] == "mpiscope run -- mpirun.mpich -n 2 -bind-to core /bin/app"
    # the rest of rank 0's wait (2.4 - 2 s) is other processes' doing, below the bar here
    assert "cpu-starved" not in found
    # every CPU busy meanwhile: binding would give them nothing; other processes held them
    env["node_idle"] = 0.0
    found = findings(cp.make(tmp_path, env=env, launch="mpirun.mpich -n 2 /bin/app",
                             library=cp.MPICH, name="busy"))
    assert found["unbound-ranks"]["cost_s"] == 0.0
    assert found["cpu-starved"]["cost_s"] == pytest.approx(2.4)


def test_cpu_taken_by_other_processes(tmp_path):
    # 2 ranks bound apart; rank 1 waited 6 s of its 10 for its CPU (issue 29: LU at 26 % CPU)
    env = {"ncpus": 1, "run_delay": [0.2, 6.0], "cpu_time": [9.8, 4.0]}
    f = findings(cp.make(tmp_path, cpus=["0", "1"], env=env))["cpu-starved"]
    assert f["cost_s"] == pytest.approx(6.0) and f["ranks"]["list"] == [1]
    assert "rank 1 waited 60% of its run" in f["title"]
    # an older profile (no run-queue wait): compute time - CPU time, an upper bound
    old = {**env, "node_cpus": 0, "run_delay": 0.0}
    f = findings(cp.make(tmp_path, cpus=["0", "1"], env=old, mpi=1.0, name="v1"))["cpu-starved"]
    assert f["cost_s"] == pytest.approx(9.0 - 4.0) and f["bound"] == "upper"


def test_limits_say_when_times_are_stretched_by_other_work(tmp_path):
    prof = cp.make(tmp_path, cpus=["0", "1"], env={"ncpus": 1, "run_delay": [0.0, 6.0]})
    limits = diagnose(prof, build_report(prof))["limits"]
    assert any(line.startswith("ranks waited up to 60% of the run for a CPU") for line in limits)


# --- waiting vs latency ------------------------------------------------------------------

def _pingpong(tmp_path, avg_us: float, floor_us: float, wall: float, name: str, **kw):
    # per rank: 1000 MPI_Send and 1000 MPI_Recv of 6000 B (bucket 13), just over Open MPI's
    # 4 KiB on-node eager limit
    calls, t = 1000, 1000 * avg_us * 1e-6
    funcs = [(r, nm, calls, t, floor_us * 1e-6) for r in (0, 1) for nm in ("MPI_Send", "MPI_Recv")]
    hist = [(r, nm, 13, calls, t) for r in (0, 1) for nm in ("MPI_Send", "MPI_Recv")]
    return cp.make(tmp_path, wall=wall, mpi=2 * t, funcs=funcs, hist=hist, name=name, **kw)


def test_eager_limit_prices_the_handshake_not_the_wait(tmp_path):
    launch = "mpirun.openmpi --bind-to core -n 2 /bin/pingpong 6000 1000"
    f = findings(_pingpong(tmp_path, 6.0, 5.0, 0.013, "hit", launch=launch))["eager-limit"]
    # the sends at their average (6 us: by rendezvous a send waits for its receiver), the
    # receives at their fastest (5 us, the handshake included): 1000 x (6 + 5) us
    assert f["cost_s"] == pytest.approx(0.011) and f["bound"] == "upper"
    ev = evidence(f)
    # sends and receives both counted (issue 29 item 7: MPI_Recv was left out)
    assert ev["point-to-point messages of 4096 B up to 16383 B (sends and receives)"] == 4000
    assert ev["their calls' time per rank (avg)"] == pytest.approx(0.012)
    # past the top of the messages' bucket (8 KiB) with 1 KiB for the header
    assert f["command"] == ("mpiscope run -- mpirun.openmpi --bind-to core -n 2 "
                            "--mca btl_vader_eager_limit 9216 /bin/pingpong 6000 1000")
    assert f["change"]["env"] == {"OMPI_MCA_btl_vader_eager_limit": "9216"}
    # BT-like: MPI_Isend/MPI_Irecv of those sizes, then MPI_Waitall waiting 200 us per
    # message for late partners (a higher limit does not make late data come sooner): the
    # posts cost 2 x 1000 x 5 us, 4 % of the 0.25 s run: silent (issue 29 item 2)
    funcs = [(r, nm, 1000, 0.005, 4e-6) for r in (0, 1) for nm in ("MPI_Isend", "MPI_Irecv")]
    funcs += [(r, "MPI_Waitall", 1000, 0.2, 5e-6) for r in (0, 1)]
    hist = [(r, nm, 13, 1000, 0.005) for r in (0, 1) for nm in ("MPI_Isend", "MPI_Irecv")]
    assert "eager-limit" not in findings(cp.make(tmp_path, wall=0.25, mpi=0.21, funcs=funcs,
                                                 hist=hist, name="wait", launch=launch))
    # a blocking send held by its late receiver (tune's late_receiver): that wait is the
    # rendezvous's, eager returns at once: up to the sends' whole time
    f = findings(_pingpong(tmp_path, 100.0, 5.0, 0.25, "late", launch=launch))["eager-limit"]
    assert f["cost_s"] == pytest.approx(0.1 + 0.005)


def test_eager_limit_on_mpich_sets_ucx_through_hydra(tmp_path):
    funcs = [(r, nm, 1000, 0.02, 10e-6) for r in (0, 1) for nm in ("MPI_Send", "MPI_Recv")]
    hist = [(r, nm, 14, 1000, 0.02) for r in (0, 1) for nm in ("MPI_Send", "MPI_Recv")]
    f = findings(cp.make(tmp_path, wall=0.05, mpi=0.04, funcs=funcs, hist=hist,
                         library=cp.MPICH, launch="mpirun.mpich -n 2 /bin/pingpong 12000"))["eager-limit"]
    assert f["command"] == ("mpiscope run -- mpirun.mpich -n 2 -genv UCX_RNDV_THRESH 17408 "
                            "/bin/pingpong 12000")


def test_small_messages_price_each_call_unhindered(tmp_path):
    # per rank 10,000 MPI_Isend (0.5 us each) and MPI_Irecv (0.2 us) of 64 B, and 5,000
    # MPI_Recv of 64 B that waited 100 us on average but took 1 us at the fastest
    funcs = [(r, "MPI_Isend", 10000, 0.005, 0.1e-6) for r in (0, 1)] + \
            [(r, "MPI_Irecv", 10000, 0.002, 0.1e-6) for r in (0, 1)] + \
            [(r, "MPI_Recv", 5000, 0.5, 1e-6) for r in (0, 1)]
    hist = [(r, "MPI_Isend", 7, 10000, 0.005) for r in (0, 1)] + \
           [(r, "MPI_Irecv", 7, 10000, 0.002) for r in (0, 1)] + \
           [(r, "MPI_Recv", 7, 5000, 0.5) for r in (0, 1)]
    f = findings(cp.make(tmp_path, wall=0.1, mpi=0.507, funcs=funcs, hist=hist))["small-messages"]
    # posting calls at their average, the blocking receive at its fastest: 5 + 2 + 5 ms
    assert f["cost_s"] == pytest.approx(0.012) and f["bound"] == "upper"
    ev = evidence(f)
    assert ev["of it, waiting for partners (not removed by packing)"] == pytest.approx(0.495)


def test_small_messages_price_their_share_of_the_completions(tmp_path):
    # per rank 10,000 MPI_Isend and 10,000 MPI_Irecv of 64 B, 4,000 MPI_Isend of 8 KiB, and
    # 1,000 MPI_Waitall that took 50 us on average, 2 us at the fastest: the small messages
    # are 20,000 of the 24,000 requests, so packing them can save up to that share of the
    # completions at their fastest call, on top of the posting calls' own time
    funcs = [(r, "MPI_Isend", 14000, 0.009, 0.1e-6) for r in (0, 1)] + \
            [(r, "MPI_Irecv", 10000, 0.002, 0.1e-6) for r in (0, 1)] + \
            [(r, "MPI_Waitall", 1000, 0.05, 2e-6) for r in (0, 1)]
    hist = [(r, "MPI_Isend", 7, 10000, 0.005) for r in (0, 1)] + \
           [(r, "MPI_Isend", 14, 4000, 0.004) for r in (0, 1)] + \
           [(r, "MPI_Irecv", 7, 10000, 0.002) for r in (0, 1)]
    f = findings(cp.make(tmp_path, wall=0.1, mpi=0.061, funcs=funcs, hist=hist))["small-messages"]
    done = 20000 / 24000 * 1000 * 2e-6
    assert f["cost_s"] == pytest.approx(0.005 + 0.002 + done) and f["bound"] == "upper"
    ev = evidence(f)
    assert ev["of the cost, completing their requests (MPI_Wait*, fastest calls)"] == \
        pytest.approx(done)
    # their share of the Waitall time beyond its fastest calls is waiting
    assert ev["of it, waiting for partners (not removed by packing)"] == \
        pytest.approx(20000 / 24000 * 0.05 - done)


def test_small_collectives_waiting_is_not_latency(tmp_path):
    # 6,000 8-byte allreduces per rank, 2.1 s of them, the fastest 0.27 us (issue 29: the
    # average call 1,300 times the fastest is waiting, not latency)
    funcs = [(r, "MPI_Allreduce", 6000, 2.1, 0.27e-6) for r in (0, 1)]
    hist = [(r, "MPI_Allreduce", 4, 6000, 2.1) for r in (0, 1)]
    f = findings(cp.make(tmp_path, wall=3.5, mpi=2.1, funcs=funcs, hist=hist,
                         launch="mpirun.openmpi --bind-to core -n 2 /bin/pcg"))["small-collectives"]
    assert f["cost_s"] == pytest.approx(0.5 * 6000 * 0.27e-6)      # half the calls' own cost
    assert f["cost_max_s"] == pytest.approx(0.5 * 2.1) and f["cost_pct"] < 5
    assert "--sync" in f["settle"] and f["change"]["kind"] == "measure"
    assert f["command"] == "mpiscope run --sync -- mpirun.openmpi --bind-to core -n 2 /bin/pcg"
    # the average call within twice the fastest: hardly any waiting, half their time
    lat = [(r, "MPI_Allreduce", 6000, 0.006, 0.75e-6) for r in (0, 1)]
    f = findings(cp.make(tmp_path, wall=0.05, mpi=0.006, funcs=lat, hist=[
        (r, "MPI_Allreduce", 4, 6000, 0.006) for r in (0, 1)], name="lat"))["small-collectives"]
    assert f["cost_s"] == pytest.approx(0.003) and f["cost_max_s"] is None
    assert f["settle"] is None and f["command"] is None
    # with --sync data the collective's own time is apart from the waiting
    funcs += [(r, "MPI_Allreduce:sync", 6000, 1.9, 0.1e-6) for r in (0, 1)]
    funcs = [x if x[1] != "MPI_Allreduce" else (x[0], x[1], 6000, 0.4, 0.27e-6) for x in funcs]
    f = findings(cp.make(tmp_path, wall=2.5, mpi=2.3, funcs=funcs, hist=hist, flags=4,
                         name="sync"))["small-collectives"]
    assert f["cost_s"] == pytest.approx(0.2) and f["settle"] is None and f["command"] is None


# --- the next command: the user's own launch ----------------------------------------------

def test_a_rebuilt_launch_uses_the_profiles_mpi_and_keeps_oversubscribe(tmp_path):
    # no recorded launch (a profile made with LD_PRELOAD by hand): the launcher of the
    # profile's MPI found here, -n, --oversubscribe where the node ran more ranks than CPUs
    env = {"flags": 1, "ncpus": 2, "load": 2.0, "cpu_time": 5.0, "run_delay": 5.0}
    prof = cp.make(tmp_path, n=4, wall=10.0, mpi=5.0, env=env, launch=None, argv=("/bin/app", "7"))
    words, recorded = rerun.user_launch(prof, build_report(prof))
    assert not recorded and words[1:] == ["--oversubscribe", "-n", "4", "/bin/app", "7"]
    assert rerun._impl_by_name(words[0]) == "openmpi"
    prof = cp.make(tmp_path, launch=None, library=cp.MPICH, name="mpich")
    words, _ = rerun.user_launch(prof, build_report(prof))
    assert rerun._impl_by_name(words[0]) == "mpich"  # not mpirun: Open MPI's on this machine
    cmd = rerun.command(prof, build_report(prof), rerun.change("measure", run_options=["--sync"]))
    assert shlex.split(cmd)[:4] == ["mpiscope", "run", "--sync", "--"]


def test_changes_in_each_launchers_syntax(tmp_path):
    prof = cp.make(tmp_path, launch="srun -n4 --cpu-bind=none ./app -n 3")
    rep = build_report(prof)
    ch = rerun.change("launch", launcher_add=["--cpu-bind=cores"],
                      launcher_remove=rerun.BINDING["srun"], nranks=2, env={"OMP_NUM_THREADS": "1"})
    assert rerun.apply(prof, rep, ch) == ["srun", "-n2", "--export=ALL,OMP_NUM_THREADS=1",
                                          "--cpu-bind=cores", "./app", "-n", "3"]
    prof = cp.make(tmp_path, launch="mpiexec.hydra -np 8 -genv UCX_RNDV_THRESH 4k ./app",
                   library=cp.MPICH, name="hydra")
    ch = rerun.change("launch", env={"UCX_RNDV_THRESH": "9216"})
    assert rerun.apply(prof, build_report(prof), ch) == [
        "mpiexec.hydra", "-np", "8", "-genv", "UCX_RNDV_THRESH", "9216", "./app"]
    prof = cp.make(tmp_path, launch="mpirun.openmpi --mca btl_vader_eager_limit 8192 -x A=1 "
                                    "-n 2 numactl -C 0 --localalloc ./app", name="ompi")
    ch = rerun.change("launch", env={"OMPI_MCA_btl_vader_eager_limit": "17408"}, unwrap=True)
    assert rerun.apply(prof, build_report(prof), ch) == [
        "mpirun.openmpi", "-x", "A=1", "-n", "2", "--mca", "btl_vader_eager_limit", "17408",
        "./app"]


def test_ppn_that_leaves_a_partial_last_node(tmp_path):
    # issue 29 item 8: diagnose --ppn 3 and html --ppn 3 refused 4 ranks ("ranks per node 3
    # does not divide the profile's 4 ranks") while report and compare modelled 2 nodes
    import mpitest
    from mpiscope import testing

    path = str(testing.write_synthetic(tmp_path / "four.mpiscope", 4, ppn=2))
    out = mpitest.run(mpitest.mpiscope_cmd("diagnose", "--ppn", "3", path)).stdout
    assert "--ppn 3 leaves the last node with 1 rank(s)" in out
    mpitest.run(mpitest.mpiscope_cmd("html", "--ppn", "3", path, "-o", str(tmp_path / "4.html")))
    assert (tmp_path / "4.html").stat().st_size > 0
