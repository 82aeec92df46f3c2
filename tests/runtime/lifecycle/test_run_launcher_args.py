"""`mpiscope run` touches only the launcher's own options (never the program's
arguments), merges a user's LD_PRELOAD set on the launcher's command line, reads
every spelling of srun's options, and passes job-ending signals on to the
launcher so that no process of the job is left behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid

import pytest

import mpitest
from mpiscope import native, read
from mpiscope.run import launch
from mpiscope.errors import UserError
from mpiscope.run.launcher_args import parse
from mpiscope.place.output.launchers import apply_order
from test_run_launch import _compile_marker

# Program arguments that look like launcher options (a host list, a host file,
# a ranking policy); they must reach the program untouched.
APP_ARGS = ["-H", "5", "--map-by", "foo", "-f", "input.dat", "--rank-by", "7", "xyz",
            "-n", "9", "-m", "block", "--distribution=cyclic"]


def test_program_arguments_are_not_launcher_options(tmp_path):
    order = tmp_path / "o"
    order.write_text("1\n0\n")
    for argv, impl in ((["mpirun.openmpi", "-n", "2", "--map-by", "core", "./app"], "openmpi"),
                       (["mpiexec.mpich", "-n", "2", "-ppn", "1", "./app"], "mpich"),
                       (["mpirun", "-np", "2", "-mca", "btl", "self", "./app"], "openmpi")):
        new, _ = apply_order(argv + APP_ARGS, str(order), impl)
        assert new[-len(APP_ARGS) - 1:] == ["./app", *APP_ARGS], new
        launcher_part = new[:-len(APP_ARGS) - 1]
        assert not {"--map-by", "-ppn"} & set(launcher_part)  # the launcher's own: replaced
    # The rank count is the launcher's -n, not the program's.
    with pytest.raises(UserError, match="lists 2 ranks but the launch starts 4"):
        apply_order(["mpirun.openmpi", "-n", "4", "./app", "-n", "2"], str(order), "openmpi")
    hosts = tmp_path / "hosts"
    hosts.write_text("a\nb\n")
    new, env = apply_order(["srun", "-n", "2", "./app", *APP_ARGS], str(hosts), "mpich")
    assert new == ["srun", "--distribution=arbitrary", "-n", "2", "./app", *APP_ARGS]


@pytest.mark.parametrize("argv", [
    ["srun", "-m", "block", "-n", "2", "./app"],
    ["srun", "-mblock", "-n2", "./app"],
    ["srun", "--distribution", "block", "--ntasks", "2", "./app"],
    ["srun", "--distribution=block:cyclic", "--ntasks=2", "./app"],
    ["srun", "--distrib=block", "-ln", "2", "./app"],
    ["srun", "-lmplane=2", "-n", "2", "--", "./app"],
])
def test_srun_distribution_every_spelling(argv, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("a\nb\n")
    new, env = apply_order(argv + ["-m", "x"], str(hosts), "mpich")
    assert new[:2] == ["srun", "--distribution=arbitrary"]
    app = new.index("./app")
    assert new[app:] == ["./app", "-m", "x"]
    launcher_part = new[2:app]
    assert "block" not in launcher_part and not any(
        a.startswith(("-m", "--distrib")) or "plane" in a for a in launcher_part), new
    assert "2" in "".join(launcher_part)  # the rank count stayed
    assert open(env["SLURM_HOSTFILE"]).read() == "a\nb\n"


def test_parse_each_launcher():
    cmd = parse(["mpirun.openmpi", "-np", "4", "-x", "A=1", "--mca", "btl", "self,vader",
                 "--oversubscribe", "./a", "-np", "8"], "openmpi")
    assert cmd.value("np") == "4" and cmd.program == ("./a", "-np", "8")
    assert [o.name for o in cmd.options] == ["np", "x", "mca", "oversubscribe"]
    cmd = parse(["mpiexec", "-n=3", "-genv", "A", "1", "-hosts", "h:3", "./a", "-f", "x"], "mpich")
    assert (cmd.value("np"), cmd.value("host"), cmd.value("hostfile")) == ("3", "h:3", None)
    assert cmd.program == ("./a", "-f", "x")
    cmd = parse(["srun", "-N2", "--ntasks-per-node", "4", "-K", "--export=ALL", "./a", "-N", "9"])
    assert cmd.value("nodes") == "2" and cmd.value("ntasks-per-node") == "4"
    assert cmd.program == ("./a", "-N", "9")
    # A launcher we do not know: everything is the program, nothing is touched.
    assert parse(["sh", "-c", "x", "-n", "2"]).program == ("-c", "x", "-n", "2")
    with pytest.raises(UserError, match="-n needs a value"):
        parse(["srun", "-n"])


def test_forwarding_merges_a_users_preload_from_the_command_line():
    env = {"LD_PRELOAD": "/rt/libmpiscope.so:/env/e.so", "MPISCOPE_DIR": "/o"}
    out = launch.forward_args(["mpirun.openmpi", "-x", "LD_PRELOAD=/u/a.so:/u/b.so", "-n", "2",
                               "./a", "-x", "LD_PRELOAD=/app/arg"], "openmpi", env)
    assert out == ["mpirun.openmpi", "-x", "MPISCOPE_DIR",
                   "-x", "LD_PRELOAD=/rt/libmpiscope.so:/u/a.so:/u/b.so", "-n", "2",
                   "./a", "-x", "LD_PRELOAD=/app/arg"]
    out = launch.forward_args(["mpiexec.mpich", "-genv", "LD_PRELOAD", "/u/a.so", "-n", "2",
                               "./a"], "mpich", env)
    assert out == ["mpiexec.mpich", "-genv", "LD_PRELOAD", "/rt/libmpiscope.so:/u/a.so",
                   "-n", "2", "./a"]
    out = launch.forward_args(["srun", "--export=HOME,LD_PRELOAD=/u/a.so", "./a"], "mpich", env)
    assert out == ["srun", "--export=HOME,LD_PRELOAD=/rt/libmpiscope.so:/u/a.so,MPISCOPE_DIR",
                   "./a"]
    assert launch.forward_args(["srun", "--export=NONE", "./a"], "mpich", env) == \
        ["srun", "--export=LD_PRELOAD,MPISCOPE_DIR", "./a"]
    assert launch.forward_args(["srun", "--export", "ALL", "./a"], "mpich", env) == \
        ["srun", "--export=ALL", "./a"]


def test_users_preload_option_keeps_profiling_on(tmp_path, impl):
    """-x LD_PRELOAD=... (Open MPI) / -genv LD_PRELOAD ... (hydra): both libraries load."""
    lib = _compile_marker(tmp_path)
    markers = tmp_path / "markers"
    markers.mkdir()
    base = mpitest.launcher(impl, 2)
    user = ["-x", f"LD_PRELOAD={lib}"] if impl == "openmpi" else ["-genv", "LD_PRELOAD", str(lib)]
    hello = str(native.program(impl, "tests/hello"))
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--dir", str(tmp_path), "--",
                                            base[0], *user, *base[1:], hello),
                       cwd=tmp_path, env={"MARKER_DIR": str(markers)}, timeout=180)
    assert "hello from 2 ranks" in proc.stdout
    (profile,) = tmp_path.glob("*.mpiscope")
    assert read(profile).nranks == 2
    assert len([m for m in markers.iterdir() if m.read_text().endswith("/hello")]) == 2


def test_order_run_with_option_like_program_arguments(tmp_path, impl):
    """Before: Open MPI took the program's -H 5 as a host list (ssh to "5", hang);
    hydra took -f input.dat as a host file."""
    order = tmp_path / "MPICH_RANK_ORDER"
    order.write_text("1\n0\n")
    whereami = str(native.program(impl, "tests/place_whereami"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--order", str(order), "--",
                                            *mpitest.launcher(impl, 2), whereami, *APP_ARGS),
                       cwd=tmp_path, timeout=120, env={"TMPDIR": str(tmp)})
    seen = {int(l.split()[1]): (l.split()[2], int(l.split()[3])) for l in proc.stdout.splitlines()
            if l.startswith("whereami ")}
    here = socket.gethostname()
    assert seen == {0: (here, 1), 1: (here, 0)}
    # The launcher's rankfile / machine file lived only as long as the run.
    assert list(tmp.glob("mpiscope-order-*")) == []


def _job_processes(mark: str) -> list[str]:
    """Processes whose environment carries the job's mark (launcher, proxies, ranks)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"JOBMARK={mark}".encode() in f.read().split(b"\0"):
                    with open(f"/proc/{pid}/cmdline", "rb") as c:
                        words = c.read().split(b"\0")
                    found.append(f"{pid} {b' '.join(words).decode()[:80]}")
        except OSError:
            pass
    return found


def _start_sleeper(tmp_path, impl, mark):
    """mpiscope run of a 2-rank job that sleeps; every process of it carries JOBMARK=mark."""
    sleeper = str(native.program(impl, "tests/sleeper"))
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(tmp_path), "--", *mpitest.launcher(impl, 2),
                               sleeper, "120")
    # stderr to a file: a pipe would be held open by a launcher left running.
    with open(tmp_path / "stderr", "w") as err_file:
        return subprocess.Popen(cmd, env=mpitest.mpi_env({"JOBMARK": mark}),
                                stdout=subprocess.PIPE, stderr=err_file, text=True,
                                start_new_session=True)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"])
def test_signal_to_mpiscope_run_ends_the_whole_job(tmp_path, impl, sig):
    mark = uuid.uuid4().hex
    proc = _start_sleeper(tmp_path, impl, mark)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert len(_job_processes(mark)) >= 4  # mpiscope, launcher, 2 ranks
        proc.send_signal(getattr(signal, sig))
        rc = proc.wait(timeout=60)
        left = _job_processes(mark)
        for _ in range(20):  # ranks may take a moment to die after the launcher ends
            if not left:
                break
            time.sleep(0.25)
            left = _job_processes(mark)
    finally:
        for entry in _job_processes(mark):  # never leave a job behind, even on failure
            os.kill(int(entry.split()[0]), signal.SIGKILL)
    err = (tmp_path / "stderr").read_text()
    assert left == [], err
    # mpiscope exits with the launcher's status (hydra may end 0 when signalled).
    assert rc == 0 or f"exited with code {rc}" in err, err
    assert "Traceback" not in err


def test_snapshot_signal_is_passed_on_not_fatal(tmp_path, impl):
    """SIGUSR1 (the runtime's snapshot signal) to mpiscope run reaches the launcher;
    before, its default action killed mpiscope and left the job running."""
    mark = uuid.uuid4().hex
    proc = _start_sleeper(tmp_path, impl, mark)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        assert proc.poll() is None, (tmp_path / "stderr").read_text()
        assert len(_job_processes(mark)) >= 4
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        for entry in _job_processes(mark):
            os.kill(int(entry.split()[0]), signal.SIGKILL)
