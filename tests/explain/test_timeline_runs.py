"""The timeline rules on real runs of tests/programs/phases.c (planted with sleeps).

2 ranks, each bound to its own core, on both MPIs. The scheduler of a shared machine can
stretch a sleep or hold a rank back, so, as for the other rules (docs/diagnose.md
"Tests"), a problem must be found in one of a few fresh runs and a steady program must
raise no timeline finding in one of a few: one run serves every assertion about it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import mpitest
import timelineruns
from mpiscope.diagnose import diagnose
from mpiscope.report import build_report

pytestmark = pytest.mark.alone
TIMELINE_RULES = {"periodic-bursts", "drift", "slow-start", "slow-end", "jitter"}
TRIES = 3


def findings(prof) -> tuple[dict, dict]:
    rep = build_report(prof)
    return rep, {f["rule"]: f for f in diagnose(prof, rep)["findings"]
                 if f["rule"] in TIMELINE_RULES}


def first_run(impl: str, args: tuple[str, ...], holds) -> tuple:
    """(profile, stdout, report, findings, holds' value) of the first of TRIES fresh runs
    where holds(profile, stdout, findings) is true."""
    seen = []
    for attempt in range(TRIES):
        prof, out = timelineruns.run(impl, args, n=2, bind=True, attempt=attempt)
        rep, f = findings(prof)
        got = holds(prof, out, f)
        if got:
            return prof, out, rep, f, got
        seen.append({k: v["title"] for k, v in f.items()})
    raise AssertionError(f"no run of phases {' '.join(args)} out of {TRIES}: {seen}")


def test_bursts_and_slow_start_found(impl):
    def holds(prof, out, f):
        b = f.get("periodic-bursts")
        period = timelineruns.burst_period(out)
        return b and "slow-start" in f and b["ranks"]["list"] == [0] and \
            abs(b["evidence"][0]["value"] - period) <= 0.15 * period
    prof, out, rep, f, _ = first_run(impl, timelineruns.BURSTS, holds)
    b = f["periodic-bursts"]
    assert "rank 0 works" in b["title"] and "1 rank(s) wait in MPI_Allreduce" in b["title"]
    # 150 ms of work per burst, the bins quantize it (plus a loaded machine's stretch)
    assert 0.1 <= rep["timeline"]["bursts"]["duration"] <= 0.3
    start = f["slow-start"]
    # the bins know the kind waited in (MPI_Bcast is a collective), not the function
    assert start["ranks"]["list"] == [0] and "wait in coll calls" in start["title"]
    assert 0.35 <= rep["timeline"]["phases"][0]["end"] <= 0.75
    # the same numbers on every view: --json, the terminal's lines
    text = mpitest.run(mpitest.mpiscope_cmd("report", prof.path)).stdout
    assert "bursts: every" in text and "phase 1 (start)" in text
    doc = json.loads(mpitest.run(mpitest.mpiscope_cmd("diagnose", "--json", prof.path)).stdout)
    assert {x["rule"] for x in doc["findings"]} >= {"periodic-bursts", "slow-start"}


def test_drift_found(impl):
    def holds(prof, out, f):
        d = f.get("drift")
        return d and d["ranks"]["list"] == [1]
    prof, _, rep, f, _ = first_run(impl, timelineruns.DRIFT, holds)
    # the last rank is 1.2 ms further behind each step of 40 ms: its partner waits ever longer
    imb = np.asarray(rep["timeline"]["share"]["mpi"]) - np.asarray(rep["timeline"]["mpi_min"])
    third = len(imb) // 3
    assert imb[-third:].mean() > 2 * imb[:third].mean()


def test_steady_raises_no_timeline_finding(impl):
    first_run(impl, timelineruns.STEADY, lambda prof, out, f: not f)


def test_slow_end_found_and_no_drift(impl):
    def holds(prof, out, f):
        e = f.get("slow-end")
        return e and e["ranks"]["list"] == [0] and "drift" not in f
    prof, _, rep, f, _ = first_run(impl, timelineruns.SLOW_END, holds)
    assert "wait in coll calls" in f["slow-end"]["title"]
    end = rep["timeline"]["phases"][-1]
    assert end["label"] == "end" and 0.3 <= end["seconds"] <= 0.7


def test_jitter_found(impl):
    def holds(prof, out, f):
        return "jitter" in f and "periodic-bursts" not in f
    prof, _, rep, f, _ = first_run(impl, timelineruns.JITTER, holds)
    j = f["jitter"]
    ev = {e["label"]: e["value"] for e in j["evidence"]}
    assert ev["95th percentile"] >= 5 * ev[next(k for k in ev if k.startswith("collective share"))]
    assert j["cost_s"] > 0
