"""scripts/setup.sh, the README's first command, as a new user runs it: a minimal
environment (env -i, the system PATH only, so /usr/bin/python3 with PEP 668).

From a fresh clone: CI clones the repository and runs scripts/test.sh, whose first step is
scripts/setup.sh (without the demo) on that clone, so a missing install step fails CI
before any test runs. This test runs it again in the same checkout, as the README's
first command with its demo: nothing is reinstalled or rebuilt, the demo writes, names
and reports a profile and keeps it where it says, nothing is left in TMPDIR, and the
installed command works outside the checkout.

RATIONALE: a second clone built everything again inside the suite (462 s of one worker in
CI's phase 1, the suite's longest test) to check what CI's own setup.sh run checks.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import mpitest


def _setup(repo: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    tmp.mkdir(exist_ok=True)     # TMPDIR: what is left there was left behind
    env = ["env", "-i", f"HOME={os.environ.get('HOME', '/root')}",
           "PATH=/usr/sbin:/usr/bin:/sbin:/bin", f"TMPDIR={tmp}"]
    return subprocess.run([*env, "./scripts/setup.sh", *args], cwd=repo, capture_output=True,
                          text=True, timeout=1800)


def test_setup_again_with_the_demo(tmp_path):
    repo = mpitest.REPO
    proc = _setup(repo, tmp_path / "tmp")
    log = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, log
    # Installed by scripts/test.sh's own setup.sh moments ago: nothing to redo.
    assert "mpiscope in" in proc.stdout and "is up to date" in proc.stdout, log
    assert "pip install" not in proc.stdout and "apt-get" not in proc.stdout, log
    venv_cfg = (repo / ".venv" / "pyvenv.cfg").read_text()
    assert re.search(r"^home = /usr/bin$", venv_cfg, re.M), venv_cfg  # the system's Python
    # The demo: a profile written and named, then reported, and kept where it says.
    written = re.findall(r"^mpiscope: profile: (\S+\.mpiscope)$", proc.stderr, re.M)
    assert len(written) == 1 and Path(written[0]).is_file(), log
    assert Path(written[0]).parent == repo / "build" / "demo", log
    assert f"({written[0]})" in proc.stdout and "Number of processes 4" in proc.stdout, log
    assert "MPI_Waitall" in proc.stdout, log
    assert f"demo: the profile is kept in {repo / 'build' / 'demo'} " in proc.stdout, log
    assert list((tmp_path / "tmp").iterdir()) == [], log  # nothing else left behind
    # The installed command works outside the checkout, by its path.
    version = subprocess.run([str(repo / ".venv" / "bin" / "mpiscope"), "--version"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert version.stdout.strip().startswith("mpiscope ") and version.returncode == 0
