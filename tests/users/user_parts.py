"""The suite's parts that depend on who runs it, run by test_other_user.py as a second user:
a user created for the test when the suite runs as root (CI), root through sudo when it
runs as a user with sudo. Each part broke for a user who was not root (issue 34), or for
the next user after root: a lock file of a fixed name in /tmp, a tiny filesystem only root
could mount, a Slurm test cluster only root could start, files left where a killed job
left them, temporary files of ``mpiscope run --order``. Not collected by the suite itself (the name does not start with ``test_``).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import mpitest
import slurmcluster
import tinyfs
from profile_expect import program_path


def test_the_lock_is_this_users_own(user_lock):
    """test_other_user.py holds its own user's lock of the same name meanwhile."""
    with user_lock("big-message"):
        d = user_lock.directory
        st = d.stat()
        assert st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700, d
        # held: another process of this user waits for it
        probe = subprocess.run(
            [sys.executable, "-c", "import fcntl, sys\n"
             "fcntl.flock(open(sys.argv[1]), fcntl.LOCK_EX | fcntl.LOCK_NB)",
             str(d / "mpiscope-big-message.lock")], capture_output=True, text=True, timeout=60)
        assert probe.returncode != 0 and "BlockingIOError" in probe.stderr, probe.stderr


def _ways() -> list[str]:
    if os.getuid() == 0:
        return ["mount", "userns"]
    sudo = subprocess.run(["sudo", "-n", "true"], capture_output=True) \
        if any(Path(d, "sudo").exists() for d in os.get_exec_path()) else None
    return ["userns"] + (["sudo"] if sudo and sudo.returncode == 0 else [])


def test_tiny_filesystem(tmp_path):
    """Every way this user has (root: mount, and a namespace; a user: the namespace, and
    sudo if it has it) gives a filesystem that is full after 8 KiB, for the test and the
    job alike, and that is gone afterwards."""
    for way in _ways():
        mnt = tmp_path / way
        with tinyfs.tiny_fs(mnt, method=way) as fs:
            (fs.view / "a").write_bytes(b"x" * 4000)
            with pytest.raises(OSError) as full:
                (fs.view / "b").write_bytes(b"x" * 8192)
            assert full.value.errno == 28, way  # ENOSPC
            # the job sees the same full filesystem, as this user
            job = subprocess.run([*fs.prefix, sys.executable, "-c", "import os, sys\n"
                                  "print(os.getuid(), sorted(os.listdir(sys.argv[1])))\n"
                                  "open(os.path.join(sys.argv[1], 'c'), 'wb').write(b'x' * 8192)",
                                  str(fs.job)], capture_output=True, text=True, timeout=60,
                                 cwd=tmp_path)
            assert job.stdout.splitlines()[0] == f"{os.getuid()} ['a', 'b']", (way, job.stdout)
            assert "No space left on device" in job.stderr, (way, job.stderr)
        assert list(mnt.iterdir()) == [], way  # gone with the mount


def test_slurm_cluster_runs_jobs_as_this_user(tmp_path):
    with slurmcluster.cluster(tmp_path / "slurm") as env:
        out = subprocess.run(["srun", "-n", "2", "id", "-u"], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.stdout.split() == [str(os.getuid())] * 2, out.stderr


def test_killed_open_mpi_job_leaves_its_files_where_the_suite_removes_them(tmp_path):
    """conftest.py points Open MPI's session directory and shared-memory segments into
    directories of the test process's own; a job killed with SIGKILL leaves them there."""
    session_base = Path(os.environ["OMPI_MCA_orte_tmpdir_base"])
    segments = Path(os.environ["OMPI_MCA_btl_vader_backing_directory"])
    assert session_base.name.startswith("mpiscope-tests-"), session_base
    assert segments.name.startswith("mpiscope-tests-"), segments
    cmd = [*mpitest.launcher("openmpi", 2), program_path("openmpi", "faults"), "wait_forever"]
    proc = subprocess.Popen(cmd, env=mpitest.mpi_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            cwd=tmp_path)
    try:
        for _ in range(2):
            line = proc.stdout.readline()
            assert line.endswith(" ready\n"), (line, proc.stderr.read())
        ranks = mpitest._children().get(proc.pid, [])
        assert len(ranks) == 2, ranks  # mpirun's children: the ranks
    finally:
        mpitest.kill_tree(proc.pid)
        proc.communicate()
    assert not [r for r in ranks if mpitest.running(r)], ranks
    uid = os.getuid()
    assert list(session_base.glob(f"ompi.*.{uid}/pid.{proc.pid}")), \
        sorted(str(p) for p in session_base.rglob("*"))[:20]
    assert list(segments.glob("vader_segment.*")), list(segments.iterdir())
    host = socket.gethostname()
    assert not Path(f"/tmp/ompi.{host}.{uid}/pid.{proc.pid}").exists()


def test_mpiscope_run_with_an_order_leaves_nothing_in_tmpdir(tmp_path):
    """The launcher's rank file of ``--order`` lives in TMPDIR for the run only."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    order = tmp_path / "MPICH_RANK_ORDER"
    order.write_text("1\n0\n")
    mpitest.run(mpitest.mpiscope_cmd("run", "--dir", str(tmp_path), "--order", str(order), "--",
                                     *mpitest.launcher("openmpi", 2),
                                     program_path("openmpi", "hello")),
                env={"TMPDIR": str(tmp)}, cwd=tmp_path, timeout=120)
    assert len(list(tmp_path.glob("hello.*.mpiscope"))) == 1
    assert list(tmp.iterdir()) == []
