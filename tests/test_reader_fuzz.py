"""Corrupted profiles never crash the reader or the report: a UserError or a report, nothing else."""

from __future__ import annotations

import numpy as np

from mpiscope import read, testing
from mpiscope.errors import UserError
from mpiscope.report import build_report


def test_random_corruption_gives_user_error_or_report(tmp_path):
    good = testing.write_synthetic(tmp_path / "good.mpiscope", 16, ppn=4, steps=3)
    data = np.frombuffer(good.read_bytes(), np.uint8)
    rng = np.random.default_rng(7)
    bad = tmp_path / "bad.mpiscope"
    outcomes = {"error": 0, "report": 0}
    for trial in range(300):
        mutated = data.copy()
        # Half the trials hit the header and section table, where structure lives.
        limit = 64 + 32 * 8 if trial % 2 else len(data)
        for pos in rng.integers(0, limit, size=int(rng.integers(1, 6))):
            mutated[pos] = rng.integers(0, 256)
        if trial % 7 == 0:
            mutated = mutated[:int(rng.integers(0, len(mutated)))]
        bad.write_bytes(mutated.tobytes())
        try:
            rep = build_report(read(bad), ppn=None, top=3)
        except UserError as err:
            assert "\n" not in str(err) and str(bad) in str(err)
            outcomes["error"] += 1
        else:
            assert rep["profile"]["nranks"] >= 0
            outcomes["report"] += 1
    assert outcomes["error"] > 50 and outcomes["report"] > 50, outcomes
