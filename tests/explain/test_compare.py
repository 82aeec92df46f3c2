"""`mpiscope compare` on real runs: before/after, across rank counts, bad input."""

from __future__ import annotations

import json

import pytest

import explainruns as er
import mpitest
from exampleapps import assert_one_line_error, per_rank
from mpiscope.compare import SCHEMA, compare
from mpiscope.errors import UserError
from mpiscope.report import build_report

# what got worse is judged from timings of real runs: run alone (conftest._machine_share)
pytestmark = pytest.mark.alone


def cmp(pa, pb, **kw):
    return compare(pa, build_report(pa), pb, build_report(pb), **kw)


def test_gather_vs_distributed_bytes_and_worse_first(impl, nranks):
    n = min(nranks, 4)
    a, _ = er.run(impl, n, er.ZONAL_GATHER)
    b, _ = er.run(impl, n, er.ZONAL_DISTRIBUTED)
    c = cmp(a, b)
    assert c["schema"] == SCHEMA and not c["different_rank_counts"]
    g = {f["name"]: f for f in c["functions"]}["MPI_Gatherv"]
    for side, prof in (("a", a), ("b", b)):
        expect = (per_rank(prof, "bytes_sent", "MPI_Gatherv")
                  + per_rank(prof, "bytes_recv", "MPI_Gatherv")).mean()
        assert g["bytes"][side] == pytest.approx(expect)
    assert g["bytes"]["b"] < g["bytes"]["a"] / 50
    assert {f["name"] for f in c["functions"] if f["in"] == "b"} >= {"MPI_Comm_split"}
    deltas = [f["time"]["delta"] for f in c["functions"]]
    assert deltas == sorted(deltas, reverse=True)  # biggest growth first
    assert any("different arguments" in w for w in c["warnings"])
    lb = c["pop"]["whole"]["load_balance"]
    assert lb["a"] == build_report(a)["pop"]["whole"]["load_balance"]


def test_hot_rank_moves_the_max_pe(impl, nranks):
    n = min(nranks, 4)
    a, _ = er.run(impl, n, er.STENCIL_FLAT)
    b, _ = er.run(impl, n, er.STENCIL_HOT)
    c = cmp(a, b)
    comp = next(m for m in c["summary"] if m["metric"] == "compute")
    assert comp["max_pe"]["b"] == 1
    assert comp["max"]["b"] > comp["max"]["a"]
    assert len(c["ranks"]["mpi_grew"]) >= 1 or c["ranks"]["why_not"] is None
    assert any("compute imbalance grew" in s or "load balance fell" in s for s in c["worse"]), \
        c["worse"]


def test_across_rank_counts_uses_per_rank_averages(impl, nranks):
    if nranks < 4:
        n_a, n_b = 1, 2
    else:
        n_a, n_b = 2, 4
    a, _ = er.run(impl, n_a, er.PCG_CLASSIC)
    b, _ = er.run(impl, n_b, er.PCG_CLASSIC)
    c = cmp(a, b)
    assert c["different_rank_counts"]
    assert any("per-rank averages" in n for n in c["notes"])
    ar = {f["name"]: f for f in c["functions"]}["MPI_Allreduce"]
    assert ar["calls"]["a"] == ar["calls"]["b"] == pytest.approx(per_rank(a, "calls", "MPI_Allreduce")[0])
    assert c["ranks"]["mpi_grew"] == [] and "different rank counts" in c["ranks"]["why_not"]


def test_different_programs_warn_and_strict_refuses(impl, nranks):
    n = min(nranks, 2)
    a, pa = er.run(impl, n, er.ZONAL_GATHER)
    b, pb = er.run(impl, n, er.PCG_CG)
    c = cmp(a, b)
    assert any("different programs" in w for w in c["warnings"])
    with pytest.raises(UserError, match="--strict"):
        cmp(a, b, strict=True)
    proc = mpitest.run(mpitest.mpiscope_cmd("compare", "--strict", pa, pb), check=False)
    assert_one_line_error(proc, "mpiscope", "different programs")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_region_in_one_profile_only_and_summary_vs_full(impl, nranks):
    n = min(nranks, 2)
    a, pa = er.run(impl, n, er.STENCIL_FLAT)
    b, pb = er.run(impl, n, er.stencil_io("rank0"), mode="summary")
    c = cmp(a, b)
    assert any(w == "region 'io' is only in B: compared against nothing" for w in c["warnings"])
    assert any("summary-mode" in w for w in c["warnings"])
    assert "full-mode" in c["ranks"]["why_not"]
    proc = mpitest.run(mpitest.mpiscope_cmd("compare", pa, pb))
    assert "region 'io' is only in B" in proc.stdout and "Worse in B" in proc.stdout
    out = json.loads(mpitest.run(mpitest.mpiscope_cmd("compare", "--json", pa, pb)).stdout)
    assert out["schema"] == SCHEMA and out["b"]["mode"] == "summary"


def test_bad_input_is_one_line(tmp_path, impl):
    _, pa = er.run(impl, 2, er.ZONAL_GATHER)
    bad = tmp_path / "v2.mpiscope"
    data = bytearray(open(pa, "rb").read())
    data[8:12] = (2).to_bytes(4, "little")  # format version 2
    bad.write_bytes(bytes(data))
    for cmd in (("compare", pa, str(bad)), ("diagnose", str(bad)),
                ("compare", pa, str(tmp_path / "missing.mpiscope"))):
        proc = mpitest.run(mpitest.mpiscope_cmd(*cmd), check=False)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
