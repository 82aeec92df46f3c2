"""The environment rules of mpiscope diagnose on real runs with the problem and the same run
fixed, where the rule must stay silent: cpu-overlap (taskset -c 0 under --bind-to none vs
--bind-to core), openmp-oversubscribed (OMP_NUM_THREADS=4 on a one-core mask vs 1),
unbound-ranks (no binding vs core binding, Open MPI and MPICH), eager-limit (ping-pong just
above the eager limit vs below it, and with the limit raised as the fix says), mpi-init and
finalize-wait. 2 ranks each (tests/envruns.py)."""

from __future__ import annotations

import explainruns as er
import envruns
from mpiscope.diagnose.rules import eager_limit
from mpiscope.diagnose.common import MIN_COST_PCT, job_time
from mpiscope.report import build_report
from test_diagnose_rules import rules_of

BINDING_RULES = {"cpu-overlap", "openmp-oversubscribed", "unbound-ranks"}


def evidence(f: dict) -> dict:
    return {e["label"]: e["value"] for e in f["evidence"]}


def test_ranks_pinned_together_vs_bound():
    found = rules_of(envruns.pinned_together("openmpi")[0])
    f = found["cpu-overlap"][0]
    assert f["ranks"]["list"] == [0, 1] and f["cost_s"] > 0
    assert evidence(f)["threads per CPU on their CPUs (max)"] == 2.0
    assert "--bind-to core" in f["command"] and "taskset" in f["fix"]
    assert "unbound-ranks" not in found and "openmp-oversubscribed" not in found
    assert not BINDING_RULES & set(rules_of(envruns.bound("openmpi")[0]))


def test_openmp_threads_beyond_one_core_vs_one_thread():
    for mode in ("full", "summary"):
        found = rules_of(envruns.bound("openmpi", threads=4, mode=mode)[0])
        f = found["openmp-oversubscribed"][0]
        ev = evidence(f)
        assert ev["OpenMP threads per rank"] == 4 and ev["CPUs in its affinity mask"] == 1
        assert ev["ranks running more threads than CPUs"] == 2
        assert "--map-by slot:PE=4 --bind-to core" in f["command"]
        assert "OMP_NUM_THREADS=1" in f["fix"]
        assert not {"cpu-overlap", "unbound-ranks"} & set(found)
    assert not BINDING_RULES & set(rules_of(envruns.bound("openmpi", threads=1)[0]))


def test_unbound_ranks_vs_bound(impl):
    found = rules_of(envruns.unbound(impl)[0])
    f = found["unbound-ranks"][0]
    assert f["ranks"]["list"] == [0, 1] and f["cost_s"] == 0  # 2 threads on 2 CPUs: not priced
    assert evidence(f)["rank 0 may run on CPUs"] == "0-1"
    assert envruns.BIND_CORE[impl][1] in f["command"]
    assert not BINDING_RULES & set(rules_of(envruns.bound(impl)[0]))


def _pingpong(impl: str, nbytes: int, env=()):
    return er.run_program(impl, 2, ("pingpong", str(nbytes), "2000"), env=env)[0]


def test_messages_just_above_the_eager_limit(impl):
    probe = _pingpong(impl, 64)
    rep = build_report(probe)
    var, default, _ = eager_limit.LIMITS[eager_limit.library_key(probe, rep, {})]
    above, below = default + default // 2, default // 2
    found = rules_of(_pingpong(impl, above))
    f = found["eager-limit"][0]
    ev = evidence(f)
    (limit,) = [v for k, v in ev.items() if k.startswith(f"eager limit ({var.removeprefix('OMPI_MCA_')},")]
    assert limit == default
    assert ev["their share of all point-to-point messages"] == 100.0
    top = 1 << above.bit_length()  # the top of the messages' log2 bucket
    value = -(-(top + eager_limit.HEADER_ROOM) // 1024) * 1024
    assert f"{var}={value}" in f["fix"] and f["command"].startswith(f"{var}={value} mpiscope run")
    assert "eager-limit" not in rules_of(_pingpong(impl, below))
    # the fix: the same messages with the limit raised as the finding says
    assert "eager-limit" not in rules_of(_pingpong(impl, above, env=((var, str(value)),)))


def test_mpi_init_share_of_a_tiny_job(impl):
    # 10 round trips of 8 bytes: MPI_Init is most of the job
    found = rules_of(er.run_program(impl, 2, ("pingpong", "8", "10"))[0])
    f = found["mpi-init"][0]
    assert f["cost_pct"] >= MIN_COST_PCT and f["pct_of"] == "job"
    ev = evidence(f)  # the cost is MPI_Init without the runtime's own setup
    assert ev["of it mpiscope's own setup (max)"] > 0
    assert f["cost_s"] == ev["longest MPI_Init without mpiscope's setup"] < ev[
        [k for k in ev if k.startswith("longest MPI_Init: rank")][0]]
    # silent: the same start-up before 20 s of work (sleep: no CPU taken from the other tests;
    # Open MPI's MPI_Init took up to 0.45 s here at load 18)
    er.first_run_where(lambda p: "mpi-init" not in rules_of(p), er.run_program, impl, 2,
                       ("sleeper", "20"), tries=2)


def test_waiting_in_mpi_finalize(impl):
    # the odd rank spins 400 ms more after the last collective
    prof, _ = er.run_program(impl, 2, envruns.OMP_STEPS + ("400",), env=envruns.omp_env(1))
    found = rules_of(prof)
    f = found["finalize-wait"][0]
    assert f["ranks"]["list"] == [0] and "rank 1" in f["title"]
    assert prof.env["finalize"][0] > 0.3 > prof.env["finalize"][1]
    rep = build_report(prof)
    assert f["cost_pct"] == 100.0 * f["cost_s"] / job_time(rep)
    # the same run without the skew: the wait stays below the bar in one of three runs
    er.first_run_where(lambda p: "finalize-wait" not in rules_of(p), er.run_program, impl, 2,
                       envruns.OMP_STEPS + ("0",), env=envruns.omp_env(1))
