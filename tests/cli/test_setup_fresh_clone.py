"""scripts/setup.sh from a fresh clone, as a new user runs it: a minimal
environment (env -i, the system PATH only, so /usr/bin/python3 with PEP 668),
no ../shared. It must make .venv inside the clone, build, and run the demo,
which writes and reports a profile; a second run finds everything in place.

What is cloned is the committed HEAD of this checkout (CI tests main). pip's
cache in $HOME keeps the downloads to the first run on a machine.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import mpitest


def _setup(clone: Path, *args: str) -> subprocess.CompletedProcess:
    tmp = clone.parent / "tmp"  # TMPDIR: what is left there was left behind
    tmp.mkdir(exist_ok=True)
    env = ["env", "-i", f"HOME={os.environ.get('HOME', '/root')}",
           "PATH=/usr/sbin:/usr/bin:/sbin:/bin", f"TMPDIR={tmp}"]
    return subprocess.run([*env, "./scripts/setup.sh", *args], cwd=clone, capture_output=True,
                          text=True, timeout=3600)


def test_setup_from_a_fresh_clone(tmp_path):
    clone = tmp_path / "mpiscope"
    subprocess.run(["git", "clone", "-q", str(mpitest.REPO), str(clone)], check=True, timeout=300)
    # mpi4py built against MPICH (for the call-site tests, not for users) is ten minutes of
    # compiling on a small machine: the clone gets this checkout's build of it. CI's own
    # setup.sh on its fresh clone builds it for real.
    mpich_mpi4py = mpitest.REPO / "build" / "mpi4py-mpich"
    if mpich_mpi4py.is_dir():
        (clone / "build").mkdir()
        (clone / "build" / "mpi4py-mpich").symlink_to(mpich_mpi4py)
    proc = _setup(clone)
    log = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, log
    assert (clone / ".venv" / "bin" / "mpiscope").is_file()
    venv_cfg = (clone / ".venv" / "pyvenv.cfg").read_text()
    assert re.search(r"^home = /usr/bin$", venv_cfg, re.M), venv_cfg  # the system's Python
    # The demo: a profile written and named, then reported, and kept where it says.
    written = re.findall(r"^mpiscope: profile: (\S+\.mpiscope)$", proc.stderr, re.M)
    assert len(written) == 1 and Path(written[0]).is_file(), log
    assert Path(written[0]).parent == clone / "build" / "demo", log
    assert f"({written[0]})" in proc.stdout and "Number of processes 4" in proc.stdout, log
    assert "MPI_Waitall" in proc.stdout, log
    assert f"demo: the profile is kept in {clone / 'build' / 'demo'} " in proc.stdout, log
    assert list((tmp_path / "tmp").iterdir()) == [], log  # nothing else left behind
    # Twice: nothing reinstalled, nothing rebuilt.
    again = _setup(clone, "--no-demo")
    assert again.returncode == 0, again.stderr
    assert "mpiscope in" in again.stdout and "is up to date" in again.stdout, again.stdout
    assert "pip install" not in again.stdout and "apt-get" not in again.stdout
    # The installed command works outside the checkout, by its path.
    version = subprocess.run([str(clone / ".venv" / "bin" / "mpiscope"), "--version"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert version.stdout.strip().startswith("mpiscope ") and version.returncode == 0
