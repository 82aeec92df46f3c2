"""A suite nobody here wrote: mpi4py's own point-to-point and status tests
(from the sdist of the installed mpi4py, which scripts/setup.sh fetches into
build/mpi4py-tests/) at 2 Open MPI ranks, without the runtime and under
`mpiscope run` with the default settings, --sync and --mode summary: every
test has the same outcome on every rank, the same exit code, and each run
leaves exactly one readable profile of 2 ranks. The whole suite on both MPIs
at 1-4 ranks is perf/reliability/mpi4py_matrix.py (docs/reliability.md)."""

from __future__ import annotations

import importlib.metadata
import sys

import mpitest

sys.path.insert(0, str(mpitest.REPO / "perf" / "reliability"))
import mpi4py_matrix  # noqa: E402


def test_mpi4py_suite_same_outcomes_under_runtime(tmp_path):
    src = mpi4py_matrix.suite_source()
    version = importlib.metadata.version("mpi4py")
    assert (src / "test" / "main.py").is_file(), (
        f"mpi4py {version}'s test suite is not in {src}: run scripts/setup.sh, or fetch it "
        f"with: {mpi4py_matrix.fetch_command(version)}")
    rows = {config: mpi4py_matrix.run_one("openmpi", 2, config, sys.executable, src, tmp_path,
                                          ["-i", r"test_(p2p_obj|status)\.py"], 600)
            for config in mpi4py_matrix.CONFIGS}
    base = rows["none"]
    assert base["rc"] == 0, base.get("stderr_tail")
    tally = mpi4py_matrix.tally(base["outcomes"])
    assert tally.get("pass", 0) > 100 and set(tally) <= {"pass", "skip"}, tally
    for config in ("default", "sync", "summary"):
        row = rows[config]
        assert mpi4py_matrix.compare(base, row) == [], (config, row.get("stderr_tail"))
        assert row["profile_ok"], (config, row["profile_note"])
