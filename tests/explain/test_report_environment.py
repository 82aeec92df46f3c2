"""The report's environment section on synthetic profiles (no MPI): full mode against summary
mode of the same ranks, the per-node rows at scale, and a malformed ENV section or META
"environment" (the file is input)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope import read, testing
from mpiscope.diagnose import diagnose
from mpiscope.errors import UserError
from mpiscope.report import build_report
from mpiscope.report.environment import NODE_ROWS

N, PPN = 4096, 64


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("env")
    full = testing.write_synthetic(d / "full.mpiscope", N, ppn=PPN, with_env=True)
    summ = testing.write_synthetic(d / "summ.mpiscope", N, mode="summary", ppn=PPN, with_env=True)
    return read(full), read(summ)


def test_full_and_summary_agree(profiles):
    full, summ = profiles
    a, b = build_report(full)["environment"], build_report(summ)["environment"]
    assert (a["source"], b["source"]) == ("ranks", "summary")
    for key in ("init", "init_own", "finalize", "cpu_time", "ncpus", "threads", "load"):
        for stat in ("min", "max", "min_pe", "max_pe", "nonzero"):
            assert a[key][stat] == pytest.approx(b[key][stat]), (key, stat)
        assert a[key]["avg"] == pytest.approx(b[key]["avg"])
    assert a["variables"] == b["variables"] == {
        "all_ranks": {"OMPI_MCA_btl": "self,vader,tcp", "OMP_NUM_THREADS": "1"}, "differing": []}
    assert sorted(a["cpu_lists"], key=int) == [str(c) for c in range(PPN)] == \
        sorted(b["cpu_lists"], key=int)
    # full mode: per node, each of its 64 ranks on its own core (first NODE_ROWS nodes)
    assert a["nodes_total"] == N // PPN and len(a["nodes"]) == NODE_ROWS
    node = a["nodes"][0]
    assert node["ranks"] == PPN and node["groups_total"] == PPN and node["hostname"] == "nid00000"
    assert node["groups"][0] == {"ranks": "0", "count": 1, "cpus": "0", "ncpus": 1, "threads": 1,
                                 "unbound": False, "overlap": 0, "load": 1.0}
    assert b["nodes"] == [] and b["nodes_total"] is None


def test_ranks_with_a_problem_come_first_and_differing_variables_are_counted(tmp_path):
    s = testing.synthetic(256, ppn=16, with_env=True)
    env = s["env"]
    env["overlap"][200:202], env["overlap_rank"][200:202] = 1, [201, 200]
    env["cpus"][201] = env["cpus"][200]
    variables = {"OMP_NUM_THREADS": "2"}
    other = fmt.fnv1a64("OMP_NUM_THREADS=2\n")
    env["vars"][:3] = other
    s["meta"]["environment"]["variables"][f"{other:016x}"] = variables
    path = testing.write_profile(tmp_path / "p.mpiscope", nranks=256, meta=s["meta"],
                                 ranks=s["ranks"], funcs=s["funcs"], nodes=s["nodes"], env=env)
    e = build_report(read(path))["environment"]
    assert e["nodes"][0]["node"] == 192 and e["nodes"][0]["overlap"] == 2  # the problem first
    assert e["overlap_ranks"] == 2
    assert e["variables"]["all_ranks"] == {}
    by_name = {d["name"]: d["values"] for d in e["variables"]["differing"]}
    assert by_name["OMP_NUM_THREADS"] == {"1": 253, "2": 3}
    assert by_name["OMPI_MCA_btl"] == {"self,vader,tcp": 253, "(unset)": 3}


def test_malformed_environment_is_reported_not_a_crash(tmp_path):
    s = testing.synthetic(16, ppn=16, with_env=True)
    meta = dict(s["meta"], environment={"cpus": 5, "variables": {"zz": {"A": "1"}}})
    path = testing.write_profile(tmp_path / "m.mpiscope", nranks=16, meta=meta, ranks=s["ranks"],
                                 nodes=s["nodes"], env=s["env"])
    e = build_report(read(path))["environment"]
    assert e["available"] and e["variables"]["all_ranks"] == {}
    cpus = e["nodes"][0]["groups"][0]["cpus"]
    assert len(cpus) == 16 and int(cpus, 16) == int(s["env"]["cpus"][0])  # its id, in hex
    out = mpitest.run(mpitest.mpiscope_cmd("report", "--json", str(path))).stdout
    assert json.loads(out)["environment"]["available"]


def test_env_records_not_one_per_rank_are_a_one_line_error(tmp_path):
    s = testing.synthetic(16, ppn=16, with_env=True)
    path = testing.write_profile(tmp_path / "bad.mpiscope", nranks=16, meta=s["meta"],
                                 ranks=s["ranks"], env=s["env"][:15])
    with pytest.raises(UserError, match="ENV has 15 records for 16 ranks"):
        read(path)
    env = s["env"].copy()
    env["rank"] = np.arange(16)[::-1]
    path = testing.write_profile(tmp_path / "order.mpiscope", nranks=16, meta=s["meta"],
                                 ranks=s["ranks"], env=env)
    proc = mpitest.run(mpitest.mpiscope_cmd("diagnose", str(path)), check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("mpiscope: error:") and "not one per rank in rank order" in line


def test_older_profiles_say_the_environment_is_missing(tmp_path):
    path = testing.write_synthetic(tmp_path / "old.mpiscope", 16, ppn=16)
    prof = read(path)
    rep = build_report(prof)
    assert not rep["environment"]["available"] and "older runtime" in rep["environment"]["why_not"]
    diag = diagnose(prof, rep)
    assert any("no environment records" in line for line in diag["limits"])
    assert not {"mpi-init", "finalize-wait", "cpu-overlap", "unbound-ranks"} & {
        f["rule"] for f in diag["findings"]}


def test_compare_keeps_no_record_array_of_the_file(profiles):
    # compare unmaps A before reading B; an ENV view left behind kept the whole file mapped
    # (peak 2.5 GiB instead of 1.6 at 1,048,576 ranks, docs/performance.md)
    import dataclasses

    from mpiscope.compare.build import kept_for_compare

    full, _ = profiles
    kept = kept_for_compare(full)
    for f in dataclasses.fields(kept):
        arr = getattr(kept, f.name)
        if isinstance(arr, np.ndarray):
            assert arr.flags.owndata or len(arr) == 0, f.name
            assert len(arr) == 0 or f.name in ("ranks", "summary"), f.name
