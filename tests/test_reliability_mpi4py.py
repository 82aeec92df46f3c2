"""A suite nobody here wrote: mpi4py's own point-to-point and status tests
(tests/mpi4py_suite/, a slice of mpi4py 4.1.2's test/) at 2 Open MPI ranks,
without the runtime and under `mpiscope run` with the default settings,
--sync and --mode summary: every test has the same outcome on every rank,
the same exit code, and each run leaves exactly one readable profile of 2
ranks. The whole suite on both MPIs at 1-4 ranks is
perf/reliability/mpi4py_matrix.py (docs/reliability.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import mpitest

sys.path.insert(0, str(mpitest.REPO / "perf" / "reliability"))
import mpi4py_matrix  # noqa: E402

SUITE = Path(__file__).resolve().parent / "mpi4py_suite"


def test_mpi4py_suite_same_outcomes_under_runtime(tmp_path):
    rows = {config: mpi4py_matrix.run_one("openmpi", 2, config, sys.executable, SUITE,
                                          tmp_path, [r"test_(p2p_obj|status)\.py"], 600)
            for config in mpi4py_matrix.CONFIGS}
    base = rows["none"]
    assert base["rc"] == 0, base.get("stderr_tail")
    tally = mpi4py_matrix.tally(base["outcomes"])
    assert tally.get("pass", 0) > 100 and set(tally) <= {"pass", "skip"}, tally
    for config in ("default", "sync", "summary"):
        row = rows[config]
        assert mpi4py_matrix.compare(base, row) == [], (config, row.get("stderr_tail"))
        assert row["profile_ok"], (config, row["profile_note"])
