"""The runtime's own MPI-IO ignores the application's file error handler
(issue 22, item 2).

An application may set MPI_File_set_errhandler(MPI_FILE_NULL,
MPI_ERRORS_ARE_FATAL), which every later MPI_File_open uses. When the profile
cannot be written, the runtime's open must still fail with its own one-line
warning, and the job must end with the program's exit code (it used to end
with 42 on Open MPI, a segmentation fault on MPICH). The application's handler
on MPI_FILE_NULL is put back after the runtime's open.
"""

from __future__ import annotations

from profile_expect import runner  # noqa: F401  (fixture)


def test_fatal_file_handler_does_not_abort_the_profile_write(runner, impl):  # noqa: F811
    outdir = "/proc"  # refuses new files even to root
    run = runner.run(impl, "file_errors_fatal", how="preload", env={"MPISCOPE_DIR": outdir})
    plain = runner.run(impl, "file_errors_fatal", how="plain")
    assert (run.rc, plain.rc) == (3, 3), run.stderr[-3000:]
    assert run.results == plain.results and len(run.results) == run.nranks
    assert all(line.endswith(" ok") for line in run.results)  # handler still the app's
    warnings = [line for line in run.stderr.splitlines() if "mpiscope: warning" in line]
    assert len(warnings) == 1, run.stderr[-3000:]
    assert warnings[0].startswith(f"mpiscope: warning: cannot write the profile {outdir}/")
    assert "no profile written" in warnings[0]
    assert "MPI_ERRORS_ARE_FATAL" not in run.stderr and "Segmentation" not in run.stderr


def test_fatal_file_handler_profile_still_written(runner, impl):  # noqa: F811
    """The same program with a writable directory: a complete profile, exit 3."""
    run = runner.run(impl, "file_errors_fatal")
    assert run.rc == 3, run.stderr[-3000:]
    prof = run.profile
    assert prof.nranks == run.nranks
