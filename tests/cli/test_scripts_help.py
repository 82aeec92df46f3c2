"""Every Python script in perf/ and bench/ starts: `--help` exits 0 and prints its usage.

The scripts import test modules and the package from the source tree; when the
tests were grouped into folders, two of them (threads_repeat.py, everything_on.py)
lost their imports and no test noticed. This runs each one's argument parsing,
which needs every import at the top of the script.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def scripts() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "perf/*.py", "bench/*.py"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.split()
    # modules other scripts import, not commands
    return [p for p in listed if "if __name__" in (REPO / p).read_text()]


def test_the_scripts_are_found():
    found = scripts()
    assert "perf/reliability/threads_repeat.py" in found and len(found) >= 10, found


@pytest.mark.parametrize("script", scripts())
def test_help_exits_zero(script):
    out = subprocess.run([sys.executable, script, "--help"], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1500:]
    assert "usage" in out.stdout.lower() or "python3" in out.stdout, out.stdout[:500]
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("script", ["perf/explain/bench_explain.py", "perf/html/bench_html.py"])
def test_missing_output_directory_is_a_usage_error(script, tmp_path):
    """Issue 27 item 14: --dir that does not exist: one line naming it, exit 2, no traceback
    (and nothing generated first)."""
    missing = tmp_path / "no" / "such"
    out = subprocess.run([sys.executable, script, "--ranks", "16", "--dir", str(missing)],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr[-1500:]
    assert "Traceback" not in out.stderr and f"--dir {missing}: not a directory" in out.stderr
    assert not missing.parent.exists()
