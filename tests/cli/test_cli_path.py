"""`mpiscope path`: where the runtime and the compiled programs are."""

import os

import mpitest


def test_path_of_runtime_and_program(impl):
    lib = mpitest.run(mpitest.mpiscope_cmd("path", "--mpi", impl)).stdout.strip()
    assert lib.endswith(f"{impl}/lib/libmpiscope.so") and os.path.isfile(lib)
    prog = mpitest.run(mpitest.mpiscope_cmd("path", "--mpi", impl, "examples/stencil")).stdout.strip()
    assert os.access(prog, os.X_OK)
    hello = mpitest.run(mpitest.mpiscope_cmd("path", "--mpi", impl, "tests/hello")).stdout.strip()
    assert os.access(hello, os.X_OK)


def test_path_of_unknown_program_is_one_line_error():
    proc = mpitest.run(mpitest.mpiscope_cmd("path", "examples/no-such-app"), check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no-such-app" in proc.stderr
    assert "Traceback" not in proc.stderr
