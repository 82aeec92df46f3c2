"""`mpiscope run`: the runtime preloaded for the launcher's MPI, settings forwarded, profile named."""

from __future__ import annotations

import re
import subprocess

import pytest

import mpitest
from mpiscope import native, read
from mpiscope.run import launch

PRELOAD_MARKER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* A user's own preload: records every process it was loaded into. */
__attribute__((constructor)) static void marker(void)
{
    char exe[4096], path[4200];
    const char *dir = getenv("MARKER_DIR");
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (!dir || n <= 0) return;
    exe[n] = 0;
    snprintf(path, sizeof path, "%s/%d", dir, (int)getpid());
    FILE *f = fopen(path, "w");
    if (f) { fputs(exe, f); fclose(f); }
}
"""


def test_preload_is_prepended_and_users_kept():
    env = launch.run_environment("/x/libmpiscope.so", {"LD_PRELOAD": "/u/a.so:/u/b.so"},
                                 "summary", True, "/out")
    assert env["LD_PRELOAD"] == "/x/libmpiscope.so:/u/a.so:/u/b.so"
    assert (env["MPISCOPE_MODE"], env["MPISCOPE_SYNC"], env["MPISCOPE_DIR"]) == \
        ("summary", "1", "/out")
    again = launch.run_environment("/x/libmpiscope.so", env, None, False, "/out")
    assert again["LD_PRELOAD"] == env["LD_PRELOAD"]  # never listed twice
    assert launch.run_environment("/x/l.so", {}, None, False, "/o")["LD_PRELOAD"] == "/x/l.so"


def test_forwarding_per_launcher():
    env = {"LD_PRELOAD": "l", "MPISCOPE_DIR": "/o", "MPISCOPE_MODE": "full", "HOME": "/h"}
    assert launch.forward_args(["mpirun.openmpi", "-n", "2", "a"], "openmpi", env) == \
        ["mpirun.openmpi", "-x", "LD_PRELOAD", "-x", "MPISCOPE_DIR", "-x", "MPISCOPE_MODE",
         "-n", "2", "a"]
    assert launch.forward_args(["mpirun.mpich", "-n", "2", "a"], "mpich", env) == \
        ["mpirun.mpich", "-n", "2", "a"]
    assert launch.forward_args(["srun", "-n", "2", "a"], "openmpi", env) == ["srun", "-n", "2", "a"]


def test_new_profiles_are_found_by_snapshot():
    before = {"a.mpiscope": (1, 10), "b.mpiscope": (2, 10)}
    after = {"a.mpiscope": (1, 10), "b.mpiscope": (2, 11), "c.mpiscope": (3, 12)}
    assert launch.new_profiles(before, after) == ["b.mpiscope", "c.mpiscope"]


def test_order_calls_placement_or_says_not_available(tmp_path, monkeypatch):
    import sys
    import types

    from mpiscope.errors import UserError

    monkeypatch.setitem(sys.modules, "mpiscope.place.output.launchers", None)  # import fails
    with pytest.raises(UserError, match="--order is not available"):
        launch._apply_order(["mpirun", "a"], str(tmp_path / "order"), "openmpi")
    calls = []
    fake = types.ModuleType("mpiscope.place.output.launchers")
    fake.apply_order = lambda argv, order, impl, directory=None: (
        calls.append((argv, order, impl)) or (["mpirun", "--rankfile", order, "a"], {"X": "1"}))
    monkeypatch.setitem(sys.modules, "mpiscope.place.output.launchers", fake)
    assert launch._apply_order(["mpirun", "a"], "ord", "mpich") == \
        (["mpirun", "--rankfile", "ord", "a"], {"X": "1"})
    assert calls == [(["mpirun", "a"], "ord", "mpich")]


def _compile_marker(tmp_path):
    src = tmp_path / "marker.c"
    src.write_text(PRELOAD_MARKER)
    lib = tmp_path / "libmarker.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, timeout=60)
    return lib


def test_run_hello_profile_and_users_preload(tmp_path, impl, nranks):
    hello = native.program(impl, "tests/hello")
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    lib = _compile_marker(tmp_path)
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--dir", str(out), "--",
                                            *mpitest.launcher(impl, nranks), str(hello)),
                       cwd=tmp_path, env={"LD_PRELOAD": str(lib), "MARKER_DIR": str(markers)},
                       timeout=180)
    assert f"hello from {nranks} ranks" in proc.stdout
    profiles = sorted(out.glob("*.mpiscope"))
    assert len(profiles) == 1, (proc.stderr, profiles)
    assert re.search(rf"^mpiscope: profile: {re.escape(str(profiles[0]))}$", proc.stderr, re.M)
    prof = read(profiles[0])
    assert prof.nranks == nranks and prof.mode == "full"
    barrier = prof.func_id("MPI_Barrier")
    sel = prof.funcs[prof.funcs["func"] == barrier]
    assert sorted(sel["rank"].tolist()) == list(range(nranks))
    assert sel["calls"].tolist() == [1] * nranks
    # The user's preload reached every rank too.
    ranks_marked = [m for m in markers.iterdir() if m.read_text().endswith("/hello")]
    assert len(ranks_marked) == nranks


def test_run_summary_mode(tmp_path, impl, nranks):
    hello = native.program(impl, "tests/hello")
    mpitest.run(mpitest.mpiscope_cmd("run", "--mode", "summary", "--dir", str(tmp_path), "--",
                                     *mpitest.launcher(impl, nranks), str(hello)), timeout=180)
    (path,) = tmp_path.glob("*.mpiscope")
    prof = read(path)
    assert prof.mode == "summary" and prof.nranks == nranks
    rec = prof.summary[(prof.summary["func"] == prof.func_id("MPI_Barrier"))
                       & (prof.summary["metric"] == 0)]
    assert rec["sum"].tolist() == [nranks] and rec["min"].tolist() == [1.0]


def test_run_failing_and_missing_launcher(tmp_path, impl):
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--",
                                            "false"), check=False, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == \
        f"mpiscope: error: false exited with code 1; no profile was written in {tmp_path}"
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--", "/nonexistent/mpirun",
                                            "-n", "2", "a"), check=False, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "mpiscope: error: launcher not found: /nonexistent/mpirun"


def test_misspelt_launcher_is_not_found_before_any_mpi_guess(tmp_path):
    """Without --mpi, a launcher that does not exist is named as not found (it used to
    be "cannot tell which MPI 'mpirunn' launches", misleading for a typo), before the
    output directory is made; one that is not executable says so."""
    out = tmp_path / "out"
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--dir", str(out), "--", "mpirunn", "-n", "2",
                                            "./app"), check=False, timeout=60)
    assert (proc.returncode, proc.stderr.strip()) == (2, "mpiscope: error: launcher not found: mpirunn")
    assert not out.exists()
    script = tmp_path / "launcher.sh"
    script.write_text("#!/bin/sh\n")
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--", str(script)), check=False, timeout=60)
    assert (proc.returncode, proc.stderr.strip()) == \
        (2, f"mpiscope: error: launcher not executable: {script}")


def test_exit_code_env_and_preload_order_without_mpi(tmp_path):
    """The plumbing on a plain command, with a stand-in runtime library (no MPI needed)."""
    fake_root = tmp_path / "native"
    (fake_root / "openmpi" / "lib").mkdir(parents=True)
    stand_in = _compile_marker(tmp_path)
    runtime = fake_root / "openmpi" / "lib" / "libmpiscope.so"
    runtime.write_bytes(stand_in.read_bytes())
    env = {"MPISCOPE_NATIVE": str(fake_root), "LD_PRELOAD": "/usr/lib/user-tool.so"}
    script = 'echo "$LD_PRELOAD|$MPISCOPE_MODE|$MPISCOPE_SYNC|$MPISCOPE_DIR"; exit 3'
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", "openmpi", "--mode", "summary",
                                            "--sync", "--dir", str(tmp_path), "--",
                                            "sh", "-c", script),
                       env=env, check=False, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout.strip() == f"{runtime}:/usr/lib/user-tool.so|summary|1|{tmp_path}"
    assert proc.stderr.strip().splitlines()[-1] == \
        f"mpiscope: error: sh exited with code 3; no profile was written in {tmp_path}"
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", "openmpi", "--", "sh", "-c",
                                            "kill -9 $$"), env=env, check=False, timeout=60)
    assert proc.returncode == 137
    # A missing --dir is created; one that cannot be refuses before the launch.
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", "openmpi", "--dir",
                                            str(tmp_path / "new" / "dir"), "--", "true"),
                       env=env, check=False, timeout=60)
    assert proc.returncode == 0 and (tmp_path / "new" / "dir").is_dir(), proc.stderr
    (tmp_path / "a-file").write_text("")
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", "openmpi", "--dir",
                                            str(tmp_path / "a-file" / "sub"), "--", "sh", "-c",
                                            "echo started"), env=env, check=False, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == (f"mpiscope: error: cannot create the output directory "
                                   f"{tmp_path / 'a-file' / 'sub'}: Not a directory")


def test_a_program_of_another_mpi_is_refused_before_the_launch(tmp_path):
    # Open MPI's runtime preloaded into an MPICH program kills every rank in its first MPI
    # call ("Invalid communicator"): mpiscope run reads the program's DT_NEEDED and refuses
    # in one line, before anything starts (no profile directory is even written to).
    if not {"openmpi", "mpich"} <= set(native.available_impls()):
        raise AssertionError("this test needs both MPIs built (scripts/setup.sh builds both)")
    for impl, other, soname in (("mpich", "openmpi", "libmpich.so.12"),
                                ("openmpi", "mpich", "libmpi.so.40")):
        prog = str(native.program(impl, "tests/hello"))
        assert native.linkage(prog) == (impl, soname)
        for how in (["--", f"mpirun.{other}", "-n", "2", prog],
                    ["--mpi", other, "--", f"mpirun.{other}", "-n", "2", "taskset", "-c", "0",
                     prog]):
            proc = mpitest.run(mpitest.mpiscope_cmd("run", "--dir", str(tmp_path / "out"), *how),
                               check=False, timeout=60)
            assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
            (line,) = proc.stderr.strip().splitlines()
            names = {"openmpi": "Open MPI", "mpich": "MPICH"}
            assert line == (f"mpiscope: error: hello is linked against {names[impl]} ({soname}) "
                            f"but {'--mpi ' + other if how[0] == '--mpi' else 'the runtime for the launcher mpirun.' + other} "
                            f"is {names[other]}: run it with {names[impl]}'s launcher and "
                            f"--mpi {impl}")
            assert not (tmp_path / "out").exists()


def test_the_launch_is_recorded_for_diagnose(tmp_path, impl, nranks):
    # MPISCOPE_LAUNCH: the user's own command, before mpiscope adds its -x forwarding
    hello = str(native.program(impl, "tests/hello"))
    cmd = [*mpitest.launcher(impl, nranks), hello]
    mpitest.run(mpitest.mpiscope_cmd("run", "--dir", str(tmp_path), "--", *cmd), timeout=180)
    (path,) = tmp_path.glob("*.mpiscope")
    assert read(path).meta["settings"]["MPISCOPE_LAUNCH"] == " ".join(cmd)
