"""The timeline's analyses and diagnose rules on planted timelines (no MPI: exact inputs).

Each profile is written by mpiscope.testing with a timeline whose phases are known bin by
bin, in full mode and reduced to summary mode as the runtime does; the real runs of
tests/programs/phases.c are in test_timeline_runs.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import timelineruns
from timelineruns import NB, P, W

TIMELINE_RULES = {"periodic-bursts", "drift", "slow-start", "slow-end", "jitter"}


def timeline_findings(diag: dict) -> dict:
    return {f["rule"]: f for f in diag["findings"] if f["rule"] in TIMELINE_RULES}


@pytest.mark.parametrize("mode", ["full", "summary"])
def test_steady_raises_no_timeline_finding(tmp_path, mode):
    _, rep, diag = timelineruns.planted_profile(tmp_path, "steady", mode)
    assert timeline_findings(diag) == {}
    assert [p["label"] for p in rep["timeline"]["phases"]] == ["main"]
    assert rep["timeline"]["bursts"] is None


@pytest.mark.parametrize("mode", ["full", "summary"])
def test_wait_at_every_step_is_no_burst(tmp_path, mode):
    """The last rank late at every step, the others waiting in each step's one call: the
    report sees rises every step, but a wait at every call is a steady imbalance."""
    _, rep, diag = timelineruns.planted_profile(tmp_path, "lag", mode)
    assert rep["timeline"]["bursts"]["period"] == pytest.approx(5 * timelineruns.W)
    assert "periodic-bursts" not in timeline_findings(diag)
    assert {"load-imbalance", "late-arrival"} & {f["rule"] for f in diag["findings"]}


@pytest.mark.parametrize("mode", ["full", "summary"])
def test_bursts_found_with_period_duration_and_ranks(tmp_path, mode):
    _, rep, diag = timelineruns.planted_profile(tmp_path, "bursts", mode)
    b = rep["timeline"]["bursts"]
    assert b["period"] == pytest.approx(0.2) and b["duration"] == pytest.approx(0.06)
    assert b["count"] == 10 and b["first"] == pytest.approx(0.14)
    f = timeline_findings(diag)
    assert set(f) == {"periodic-bursts"}
    f = f["periodic-bursts"]
    assert f["ranks"]["list"] == [0]
    assert "every 0.2 s rank 0 works 0.06 s while 3 rank(s) wait in MPI_Allreduce" in f["title"]
    # cost: the waiting above the share between bursts, per rank: 10 bursts of 6 bins where
    # 3 of 4 ranks wait 0.95 of a bin instead of ~0.06
    between = b["mpi_share_out"]
    want = 60 * W * ((3 * 0.95 + 0.01) / 4 - between)
    assert f["cost_s"] == pytest.approx(want, rel=0.02)


@pytest.mark.parametrize("mode", ["full", "summary"])
def test_drift_found_and_names_the_rank_behind(tmp_path, mode):
    _, rep, diag = timelineruns.planted_profile(tmp_path, "drift", mode)
    f = timeline_findings(diag)
    assert set(f) == {"drift"}, f.keys()      # the phases of a ramp are no slow end
    assert f["drift"]["ranks"]["list"] == [P - 1]
    # the imbalance (avg - least MPI share) grows linearly by 3/4 x 0.6 of a bin over the
    # 2 s run: the cost is the triangle above its start
    assert f["drift"]["cost_s"] == pytest.approx(0.75 * 0.6 * NB * W / 2, rel=0.02)


@pytest.mark.parametrize("mode", ["full", "summary"])
def test_slow_start_and_slow_end(tmp_path, mode):
    _, rep, diag = timelineruns.planted_profile(tmp_path, "start", mode)
    f = timeline_findings(diag)
    assert set(f) == {"slow-start"}
    start = rep["timeline"]["phases"][0]
    assert start["label"] == "start" and start["end"] == pytest.approx(0.4)
    assert f["slow-start"]["ranks"]["list"] == [0]
    assert f["slow-start"]["cost_s"] == pytest.approx(
        0.4 * (start["mpi_share"] - rep["timeline"]["phases"][1]["mpi_share"]))
    _, rep, diag = timelineruns.planted_profile(tmp_path, "end", mode)
    f = timeline_findings(diag)
    assert set(f) == {"slow-end"}
    assert f["slow-end"]["ranks"]["list"] == [2]
    assert rep["timeline"]["phases"][-1]["start"] == pytest.approx(1.7)


@pytest.mark.parametrize("mode", ["full", "summary"])
def test_jitter_found(tmp_path, mode):
    _, rep, diag = timelineruns.planted_profile(tmp_path, "jitter", mode)
    f = timeline_findings(diag)
    assert set(f) == {"jitter"}
    c = np.asarray(rep["timeline"]["share"]["coll"])
    assert f["jitter"]["cost_s"] == pytest.approx(((c - np.median(c)).clip(0) * W).sum())
    # the rerun keeps the profile's mode (mpiscope run --mode summary --sync -- ...)
    run_opts = f["jitter"]["command"].split(" -- ")[0].split()
    assert run_opts[:2] == ["mpiscope", "run"] and "--sync" in run_opts
