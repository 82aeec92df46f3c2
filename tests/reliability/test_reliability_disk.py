"""The profile directory full, limited or gone (tests/programs/faults.c,
p2p_blocking): the application finishes with its own exit code and output, the
runtime says in one line that the profile is incomplete or was not written, a
partial file never reads as valid (the reader says "incomplete", the magic
number is written last), and the other files of the directory are untouched."""

from __future__ import annotations

import pytest

import tinyfs
from mpiscope import read
from mpiscope.errors import UserError
from profile_expect import runner  # noqa: F401  (fixture)


@pytest.fixture
def tiny_fs(tmp_path):
    """An 8 KiB tmpfs holding one 4 KiB file of someone else's: 4 KiB left. Root mounts
    it; a user gets it in a user namespace or through sudo (tests/tinyfs.py)."""
    with tinyfs.tiny_fs(tmp_path / "tiny") as fs:
        other = fs.view / "someone-elses.txt"
        other.write_bytes(b"x" * 4000)
        yield fs, other


def _untouched(path, before):
    st = path.stat()
    return (path.read_bytes(), st.st_mtime_ns, st.st_size) == before


def _snapshot(path):
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_size


def _assert_incomplete(path):
    with pytest.raises(UserError, match="incomplete mpiscope profile"):
        read(path)


def _one_warning(stderr: str, *words: str) -> str:
    """The runtime's one line about the profile (mpiscope run adds its own last line)."""
    lines = [line for line in stderr.splitlines()
             if line.startswith("mpiscope: warning:") and all(w in line for w in words)]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


@pytest.mark.privileged
def test_full_disk_keeps_the_run_and_marks_the_file(runner, impl, tiny_fs):  # noqa: F811
    fs, other = tiny_fs
    before = _snapshot(other)
    plain = runner.run(impl, "p2p_blocking", how="plain")
    run = runner.run(impl, "p2p_blocking", how="mpiscope", outdir=str(fs.job), fresh=True,
                     prefix=tuple(fs.prefix))
    assert (run.rc, plain.rc) == (0, 0), run.stderr[-3000:]
    run.assert_ok()
    assert run.results == plain.results
    (partial,) = [p for p in fs.view.iterdir() if p.suffix == ".mpiscope"]
    named = fs.job / partial.name  # the path as the job saw it
    _one_warning(run.stderr, str(named), "failed", "incomplete")
    _assert_incomplete(partial)
    assert run.stderr.strip().splitlines()[-1].startswith(
        f"mpiscope: warning: incomplete profile {named}: incomplete mpiscope profile")
    assert _untouched(other, before)
    assert sorted(p.name for p in fs.view.iterdir()) == sorted([other.name, partial.name])


def test_file_size_limit_mid_write(runner, impl, tmp_path):  # noqa: F811
    """RLIMIT_FSIZE of 3000 bytes set by the program after MPI_Init: the write is
    cut (SIGXFSZ ignored while the runtime writes, so nobody dies of it)."""
    other = tmp_path / "keep.txt"
    other.write_text("mine\n")
    before = _snapshot(other)
    plain = runner.run(impl, "faults", "fsize", "3000", how="plain")
    run = runner.run(impl, "faults", "fsize", "3000", how="mpiscope", outdir=str(tmp_path))
    assert (run.rc, plain.rc) == (0, 0), run.stderr[-3000:]
    run.assert_ok()
    assert run.results == plain.results
    (partial,) = tmp_path.glob("*.mpiscope")
    assert partial.stat().st_size <= 3000
    _one_warning(run.stderr, str(partial), "failed", "incomplete")
    _assert_incomplete(partial)
    assert _untouched(other, before)


def test_directory_removed_during_the_run(runner, impl, tmp_path):  # noqa: F811
    gone = tmp_path / "gone"
    gone.mkdir()
    plain = runner.run(impl, "faults", "remove_dir", str(tmp_path / "plain-gone"), how="plain")
    run = runner.run(impl, "faults", "remove_dir", str(gone), how="mpiscope", outdir=str(gone))
    assert not gone.exists()
    assert run.rc == plain.rc == 0, run.stderr[-3000:]
    run.assert_ok()
    assert [r for r in run.results if "checksum" in r] == [r for r in plain.results
                                                           if "checksum" in r]
    _one_warning(run.stderr, str(gone), "cannot write the profile", "no profile written")
    assert run.stderr.strip().splitlines()[-1].startswith(
        f"mpiscope: warning: no profile was written in {gone}")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
