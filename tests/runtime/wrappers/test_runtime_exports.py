"""The wrapped functions against what each installed MPI exports (issue 22, item 4).

runtime/wrappers/exports_diff.py lists every MPI_ function a libmpi exports (nm -D) that
is neither wrapped (runtime/wrappers/functions.py) nor left out on purpose by a
category of runtime/wrappers/unwrapped.py (rendered in docs/runtime.md). A new MPI
version that exports a function nobody looked at fails here. The functions
wrapped after the first comparison are counted like any other.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mpiscope import native
from profile_expect import Expect, check_program, runner  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[3]
NEW = ["MPI_Win_attach", "MPI_Win_detach", "MPI_File_seek_shared", "MPI_File_get_size",
       "MPI_File_seek", "MPI_File_get_position", "MPI_File_get_position_shared",
       "MPI_File_set_atomicity", "MPI_File_set_info"]


def test_every_exported_function_is_wrapped_or_left_out_on_purpose(impl):
    lib = native.runtime_library(impl)
    proc = subprocess.run([sys.executable, str(REPO / "runtime" / "wrappers" / "exports_diff.py"), str(lib)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "UNEXPLAINED" not in proc.stdout
    head = proc.stdout.splitlines()[0]
    assert " 0 unexplained" in head and "libmpi" in head, head
    exported = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                              text=True, check=True).stdout.split()
    for name in NEW + ["MPI_Comm_spawn", "MPI_Comm_accept", "MPI_Comm_connect", "MPI_Comm_join"]:
        assert name in exported, f"libmpiscope does not wrap {name}"


def test_docs_list_every_category():
    sys.path.insert(0, str(REPO / "runtime" / "wrappers"))
    import unwrapped
    doc = (REPO / "docs" / "runtime.md").read_text()
    for name, _, _ in unwrapped.CATEGORIES:
        assert name in doc, f"docs/runtime.md does not name the category {name!r}"


def rma_io_extras(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for func in ["MPI_Win_create_dynamic", "MPI_Win_free", "MPI_File_open", "MPI_File_close",
                 *NEW]:
        e.every(func)
    return e


def test_new_wrappers_count_their_calls(runner, impl, monkeypatch):  # noqa: F811
    # Open MPI 4.1's default one-sided component (rdma) cannot make a dynamic
    # window over the shared-memory transport without single copy; pt2pt can.
    monkeypatch.setenv("OMPI_MCA_osc", "pt2pt")
    check_program(runner, impl, "rma_io_extras", rma_io_extras)
