"""The whole chain on real runs: runtime -> file -> reader -> `mpiscope report --json`.

The report's per-function totals, point-to-point totals and region sections
must be the exact sums of what the program is known to do, from a full-mode
file and from a summary-mode file of the same program.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

import mpitest
from profile_expect import OUTSIDE, p2p_blocking, regions, runner  # noqa: F401  (fixture)

PROGRAMS = {"regions": regions, "p2p_blocking": p2p_blocking}


def report_json(path) -> dict:
    proc = mpitest.run(mpitest.mpiscope_cmd("report", "--json", str(path)), timeout=120)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("mode", ["full", "summary"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_report_totals_are_exact(runner, impl, program, mode):  # noqa: F811
    run = runner.run(impl, program, mode=None if mode == "full" else mode)
    run.assert_ok()
    path = run.profiles[0]
    rep = report_json(path)
    P = run.nranks
    e = PROGRAMS[program](P, {})
    assert rep["profile"]["nranks"] == P and rep["profile"]["mode"] == mode

    want = Counter()
    for (rank, func, region), (calls, sent, recv) in e.funcs.items():
        want[(func, "calls")] += calls
        want[(func, "bytes_sent")] += sent
        want[(func, "bytes_recv")] += recv
    got = {(f["name"], k): f[k] for f in rep["functions"] for k in ("calls", "bytes_sent",
                                                                     "bytes_recv")}
    for key, value in want.items():
        assert got.get(key, 0) == value, key

    msgs = sum(m for m, _ in e.peers.values())
    nbytes = sum(b for _, b in e.peers.values())
    p2p = rep["p2p"]
    assert (p2p["total_msgs"], p2p["total_bytes"]) == (msgs, nbytes)
    assert (p2p["on_node_msgs"], p2p["off_node_msgs"]) == (msgs, 0)

    # Per region: the calls of each function charged to it, summed over ranks.
    per_region = Counter()
    for (rank, func, region), (calls, _, _) in e.funcs.items():
        if region != OUTSIDE:
            per_region[(region, func)] += calls
    got_regions = {(r["name"], f["name"]): f["calls"] for r in rep["regions"]
                   for f in r["functions"] if f["name"] != "MPI_Pcontrol"}
    assert got_regions == dict(per_region)
    if program == "regions" and mode == "full":
        shape = {r["name"]: (r["depth"], r["parent"], r["ranks"], r["entries"])
                 for r in rep["regions"]}
        assert shape == {"outer": (1, None, P, P), "inner": (2, "outer", P, 2 * P),
                         "solo": (1, None, P, 3 * P),
                         "evens": (1, None, (P + 1) // 2, (P + 1) // 2)}
