"""POP efficiency metrics (rep["pop"], docs/metrics.md) on real mini-app runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import explainruns as er
import mpitest
from mpiscope import testing
from mpiscope.report import build_report
from mpiscope.report.pop import KEYS, metrics

# load balance and efficiencies are timings of real runs: run alone (conftest._machine_share)
pytestmark = pytest.mark.alone


def test_metrics_formula():
    m = metrics(np.array([1.0, 2.0, 3.0, 2.0]), 4.0)
    assert m["load_balance"] == pytest.approx(2.0 / 3.0)
    assert m["communication_efficiency"] == pytest.approx(0.75)
    assert m["parallel_efficiency"] == pytest.approx(0.5)
    assert m["serialisation"] is None and m["transfer"] is None
    m = metrics(np.array([1.0, 2.0, 3.0, 2.0]), 4.0, transfer_time=0.5)
    assert m["transfer"] == pytest.approx(3.5 / 4.0)
    assert m["serialisation"] == pytest.approx(3.0 / 3.5)
    assert m["serialisation"] * m["transfer"] == pytest.approx(m["communication_efficiency"])
    # negative useful time (MPI summed over threads): nothing is claimed
    assert all(v is None for v in metrics(np.array([-1.0, 2.0]), 4.0).values())


def test_hot_rank_lowers_load_balance(impl, nranks):
    n = min(nranks, 4)
    flat = build_report(er.run(impl, n, er.STENCIL_FLAT)[0])["pop"]
    hot = build_report(er.run(impl, n, er.STENCIL_HOT)[0])["pop"]
    assert flat["available"] and hot["available"]
    for pop in (flat, hot):
        w = pop["whole"]
        assert set(w) == set(KEYS)
        assert w["parallel_efficiency"] == pytest.approx(
            w["load_balance"] * w["communication_efficiency"])
        assert w["serialisation"] is None  # no --sync
    # rank 1 sweeps F times: the 'compute' region's load balance is (F + n - 1) / n / F
    f = er.HOT_FACTOR
    comp = {r["name"]: r for r in hot["regions"]}["compute"]
    assert comp["load_balance"] < (f + n - 1) / n / f * 1.6

    def flat_enough(prof):
        regions = {r["name"]: r for r in build_report(prof)["pop"]["regions"]}
        return comp["load_balance"] < regions["compute"]["load_balance"] - 0.2

    er.first_run_where(flat_enough, er.run, impl, n, er.STENCIL_FLAT)


def test_sync_splits_communication_efficiency(impl, nranks):
    prof, _ = er.run(impl, min(nranks, 4), er.PCG_CLASSIC, sync=True)
    pop = build_report(prof)["pop"]
    w = pop["whole"]
    assert w["serialisation"] is not None and w["transfer"] is not None
    assert w["serialisation"] * w["transfer"] == pytest.approx(w["communication_efficiency"],
                                                                rel=1e-9)
    assert 0 < w["transfer"] <= 1
    solve = {r["name"]: r for r in pop["regions"]}["solve"]
    assert solve["transfer"] is not None


def test_summary_mode_matches_full_arrays(impl, nranks):
    prof, _ = er.run(impl, min(nranks, 4), er.STENCIL_HOT)
    full = build_report(prof)["pop"]
    summ, hist = testing.summarize(prof.ranks, prof.funcs, prof.hist)
    sprof = type(prof)(path="", meta=prof.meta, nranks=prof.nranks, mode="summary",
                       flags=prof.flags, start_time=0.0, summary=summ, hist=hist)
    spop = build_report(sprof)["pop"]
    assert spop["available"]
    for k in ("load_balance", "communication_efficiency", "parallel_efficiency"):
        assert spop["whole"][k] == pytest.approx(full["whole"][k], rel=1e-9)
    assert all(r[k] is None for r in spop["regions"] for k in KEYS)
    assert any("summary mode" in n for n in spop["notes"])


def test_report_prints_and_json_has_pop(impl, nranks):
    _, path = er.run(impl, min(nranks, 4), er.STENCIL_HOT, mode="summary")
    proc = mpitest.run(mpitest.mpiscope_cmd("report", "--json", path))
    pop = json.loads(proc.stdout)["pop"]
    assert pop["available"] and 0 < pop["whole"]["load_balance"] < 1
    proc = mpitest.run(mpitest.mpiscope_cmd("report", path))
    assert "POP efficiency metrics" in proc.stdout
    lb = f"{100 * pop['whole']['load_balance']:.1f}%"
    assert any(line.split()[:2] == ["whole", "run"] and lb in line
               for line in proc.stdout.splitlines())
