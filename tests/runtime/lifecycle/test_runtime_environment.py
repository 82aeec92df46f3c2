"""The ENV section on real runs: affinity masks compared per node, OpenMP threads, the MPI and
OpenMP variables, MPI_Init / MPI_Finalize / CPU time, in full and summary mode; and the
report's environment block (text and --json)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import envruns
import mpitest
from mpiscope import format as fmt
from mpiscope.errors import UserError
from mpiscope.report import build_report


def cpu_lists(prof) -> list[str]:
    cpus = prof.environment["cpus"]
    return [cpus[int(c)] for c in prof.env["cpus"]]


def test_bound_ranks_each_on_its_core(impl):
    prof, path = envruns.bound(impl)
    e = prof.env
    assert e["rank"].tolist() == [0, 1]
    assert sorted(cpu_lists(prof)) == ["0", "1"]          # one core each, not the same one
    assert e["ncpus"].tolist() == [1, 1] and e["threads"].tolist() == [1, 1]
    assert (e["flags"] & fmt.ENV_OPENMP).all() and not (e["flags"] & fmt.ENV_UNBOUND).any()
    assert e["overlap"].tolist() == [0, 0] and (e["overlap_rank"] == fmt.ENV_NO_RANK).all()
    assert e["load"].tolist() == [1.0, 1.0]
    # times: MPI_Init includes the runtime's own setup; the run used CPU
    assert ((e["init"] > 0) & (e["init_own"] > 0) & (e["init_own"] <= e["init"])).all()
    assert (e["finalize"] >= 0).all() and (e["cpu_time"] > 0).all()
    assert (e["cpu_time"] <= prof.ranks["wall"] * 1.5 + 0.05).all()  # one thread, one core
    # one variable set for both ranks: the launchers' per-process variables are left out
    assert len(np.unique(e["vars"])) == 1
    (variables,) = prof.environment["variables"].values()
    assert variables["OMP_NUM_THREADS"] == "1"
    if impl == "openmpi":  # set by tests/mpitest.py for every run
        assert variables["OMPI_MCA_btl_vader_single_copy_mechanism"] == "none"
    assert not [v for v in variables if v.startswith(("OMPI_MCA_ess", "OMPI_MCA_orte_",
                                                      "OMPI_MCA_pmix"))]
    env = build_report(prof)["environment"]
    assert env["available"] and env["source"] == "ranks" and env["openmp_ranks"] == 2
    assert env["unbound_ranks"] == env["overlap_ranks"] == env["oversub_ranks"] == 0
    assert env["variables"]["all_ranks"]["OMP_NUM_THREADS"] == "1"
    (node,) = env["nodes"]
    assert node["ranks"] == 2 and node["hostname"] == prof.meta["hostname"]
    assert sorted((g["ranks"], g["cpus"]) for g in node["groups"]) in (
        [("0", "0"), ("1", "1")], [("0", "1"), ("1", "0")])
    text = mpitest.run(mpitest.mpiscope_cmd("report", path)).stdout
    assert "CPU affinity per node" in text and "OMP_NUM_THREADS=1" in text
    assert "MPI_Init (entry to exit)" in text
    out = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", path)).stdout)
    assert out["environment"]["nodes"][0]["ranks"] == 2


def test_unbound_ranks_share_every_cpu(impl):
    prof, _ = envruns.unbound(impl)
    e = prof.env
    assert cpu_lists(prof) == ["0-1", "0-1"] and e["ncpus"].tolist() == [2, 2]
    assert (e["flags"] & fmt.ENV_UNBOUND).all()
    assert e["overlap"].tolist() == [0, 0]      # unbound ranks are not "overlapping bound" ones
    assert e["load"].tolist() == [1.0, 1.0]     # 2 threads on 2 CPUs
    assert e["node_cpus"].tolist() == [2, 2]    # the node's CPUs (the test machine has 2)
    assert build_report(prof)["environment"]["unbound_ranks"] == 2


def test_profiles_of_older_env_layouts_read_with_the_new_fields_unknown(tmp_path):
    # ENV layout 1 (80-byte records, before node_cpus / run_delay) and 2 (96, before node_idle)
    prof, path = envruns.bound("openmpi")
    from mpiscope import reader, testing
    for version, dtype in ((1, fmt.ENV_V1), (2, fmt.ENV_V2)):
        old = np.zeros(2, dtype)
        for name in dtype.names:
            old[name] = prof.env[name]
        data = testing.encode({fmt.SEC_META: json.dumps(prof.meta).encode(),
                               fmt.SEC_RANKS: prof.ranks, fmt.SEC_FUNCS: prof.funcs,
                               fmt.SEC_HIST: prof.hist, fmt.SEC_PEERS: prof.peers,
                               fmt.SEC_REGIONS: prof.regions, fmt.SEC_NODES: prof.nodes,
                               fmt.SEC_ENV: old}, nranks=2)
        path = tmp_path / f"v{version}.mpiscope"
        path.write_bytes(data)
        back = reader.read(str(path))
        assert back.env.dtype == fmt.ENV and back.env["node_idle"].tolist() == [0, 0]
        assert back.env["cpu_time"].tolist() == prof.env["cpu_time"].tolist()
        assert back.env["node_cpus"].tolist() == ([0, 0] if version == 1 else [os.cpu_count()] * 2)
        env = build_report(back)["environment"]
        assert env["available"] and env["node_idle"]["max"] == 0


def test_taskset_pins_both_ranks_to_core_0():
    prof, _ = envruns.pinned_together("openmpi")
    e = prof.env
    assert cpu_lists(prof) == ["0", "0"]
    assert not (e["flags"] & fmt.ENV_UNBOUND).any()   # one CPU: bound, to the same core
    assert e["overlap"].tolist() == [1, 1] and e["overlap_rank"].tolist() == [1, 0]
    assert e["load"].tolist() == [2.0, 2.0]
    # measured: two busy ranks on one core each get about half of it, and wait for it the
    # rest of the time (runnable all along: an MPI rank busy-polls), while the node has more
    assert (e["cpu_time"] < 0.8 * prof.ranks["wall"]).any()
    wall = prof.ranks["wall"]
    assert (e["run_delay"] > 0.25 * wall).all() and (e["cpu_time"] + e["run_delay"] > 0.7 * wall).all()
    assert e["node_cpus"].tolist() == [os.cpu_count()] * 2
    # the node's idle CPU time over the run: at most every CPU for the whole run (10 ms ticks)
    assert ((e["node_idle"] >= 0) & (e["node_idle"] <= os.cpu_count() * wall + 0.05)).all()
    df = prof.to_pandas("env")  # the same, as a pandas view
    assert df["cpus"].tolist() == ["0", "0"] and df["overlap_rank"].tolist() == [1, 0]
    assert not df["unbound"].any() and df["load"].tolist() == [2.0, 2.0]


def test_openmp_threads_beyond_the_mask_full_and_summary():
    prof, _ = envruns.bound("openmpi", threads=4)
    e = prof.env
    assert e["threads"].tolist() == [4, 4] and e["ncpus"].tolist() == [1, 1]
    assert e["load"].tolist() == [4.0, 4.0]
    env = build_report(prof)["environment"]
    assert env["oversub_ranks"] == 2 and env["variables"]["all_ranks"]["OMP_NUM_THREADS"] == "4"
    summ, path = envruns.bound("openmpi", threads=4, mode="summary")
    assert len(summ.env) == 0
    with pytest.raises(UserError, match="summary-mode"):
        summ.to_pandas("env")
    env = build_report(summ)["environment"]
    assert env["source"] == "summary" and env["nodes"] == []
    assert env["threads"]["max"] == 4 and env["ncpus"]["min"] == 1 and env["load"]["max"] == 4
    assert env["oversub_ranks"] == 2 and env["unbound_ranks"] == env["overlap_ranks"] == 0
    assert env["init"]["max"] > 0 and env["init"]["min_pe"] in (0, 1)
    assert env["node_cpus"]["min"] == env["node_cpus"]["max"] == os.cpu_count()
    assert env["run_delay"]["max"] > 0  # 4 threads on one core each wait for it
    assert sorted(env["cpu_lists"]) == ["0", "1"]
    assert env["variables"]["all_ranks"]["OMP_NUM_THREADS"] == "4"
    text = mpitest.run(mpitest.mpiscope_cmd("report", path)).stdout
    assert "Summary mode: CPU lists seen 0, 1" in text
    assert "2 rank(s) running more OpenMP threads than CPUs in their mask" in text
