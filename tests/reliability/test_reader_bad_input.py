"""Bad profile files: one-line `mpiscope: error:` naming the file and the problem, exit 2."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope import read, testing
from mpiscope.errors import UserError


def _good(path):
    ranks = np.zeros(2, fmt.RANK)
    ranks["rank"] = [0, 1]
    funcs = testing.records(fmt.FUNC, [dict(rank=0, func=0, calls=1, time=0.5),
                                       dict(rank=1, func=0, calls=1, time=0.25)])
    peers = testing.records(fmt.PEER, [dict(rank=0, peer=1, msgs=1, bytes=8)])
    return testing.write_profile(path, nranks=2, functions=["MPI_Send"], ranks=ranks,
                                 funcs=funcs, peers=peers)


def _patch(path, offset, fmt_, value):
    data = bytearray(path.read_bytes())
    struct.pack_into(fmt_, data, offset, value)
    path.write_bytes(bytes(data))


def _section_entry(path, kind):
    """Byte offset of the section-table entry of `kind`."""
    data = path.read_bytes()
    table = np.frombuffer(data, fmt.SECTION, count=int(np.frombuffer(data, fmt.HEADER, 1)[0]
                                                        ["nsections"]), offset=64)
    return 64 + 32 * int(np.flatnonzero(table["kind"] == kind)[0])


def missing(p):
    return p


def empty(p):
    p.write_bytes(b"")
    return p


def directory(p):
    p.mkdir()
    return p


def fifo(p):
    import os
    os.mkfifo(p)
    return p


def png(p):
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 200)
    return p


def text(p):
    p.write_text("hello, I am a text file\n" * 10)
    return p


def truncated(p):
    _good(p)
    data = p.read_bytes()
    p.write_bytes(data[:len(data) // 2])
    return p


def truncated_header(p):
    _good(p)
    p.write_bytes(p.read_bytes()[:20])
    return p


def trailing_garbage(p):
    _good(p)
    p.write_bytes(p.read_bytes() + b"junk")
    return p


def wrong_version(p):
    _good(p)
    _patch(p, 8, "<I", 7)
    return p


def table_out_of_file(p):
    _good(p)
    _patch(p, 32, "<I", 1_000_000)  # nsections
    return p


def section_out_of_file(p):
    _good(p)
    _patch(p, _section_entry(p, fmt.SEC_FUNCS) + 8, "<Q", 1 << 40)  # offset
    return p


def section_bad_length(p):
    _good(p)
    _patch(p, _section_entry(p, fmt.SEC_FUNCS) + 24, "<Q", 3)  # count 3 for 2 records
    return p


def bad_meta(p):
    _good(p)
    off = int(np.frombuffer(p.read_bytes(), fmt.SECTION, 1,
                            _section_entry(p, fmt.SEC_META))[0]["offset"])
    _patch(p, off, "<B", ord("}"))
    return p


def bad_func_index(p):
    _good(p)
    off = int(np.frombuffer(p.read_bytes(), fmt.SECTION, 1,
                            _section_entry(p, fmt.SEC_FUNCS))[0]["offset"])
    _patch(p, off + 4, "<H", 9)  # func 9, META lists 1
    return p


def bad_peer_rank(p):
    _good(p)
    off = int(np.frombuffer(p.read_bytes(), fmt.SECTION, 1,
                            _section_entry(p, fmt.SEC_PEERS))[0]["offset"])
    _patch(p, off + 4, "<I", 5)  # peer 5 of 2 ranks
    return p


def bad_rank_index(p):
    _good(p)
    off = int(np.frombuffer(p.read_bytes(), fmt.SECTION, 1,
                            _section_entry(p, fmt.SEC_RANKS))[0]["offset"])
    _patch(p, off + 128 + 72, "<I", 100)  # rank 1: func_count 100
    return p


CASES = [
    (missing, "no such file"),
    (empty, "empty file"),
    (directory, "is a directory"),
    (fifo, "not a regular file"),
    (png, "not an mpiscope profile"),
    (text, "not an mpiscope profile"),
    (truncated, "incomplete mpiscope profile: truncated"),
    (truncated_header, "incomplete mpiscope profile: truncated"),
    (trailing_garbage, "but the header says"),
    (wrong_version, "format version 7"),
    (table_out_of_file, "section table"),
    (section_out_of_file, "outside the file"),
    (section_bad_length, "section FUNCS is 128 bytes, expected 3 records"),
    (bad_meta, "META is not valid UTF-8 JSON"),
    (bad_func_index, "names function 9"),
    (bad_peer_rank, "names peer 5"),
    (bad_rank_index, "rank 1's FUNCS records end at 101, past the 2"),
]


@pytest.mark.parametrize("make,problem", CASES, ids=[c[0].__name__ for c in CASES])
def test_library_raises_user_error(tmp_path, make, problem):
    path = make(tmp_path / "bad.mpiscope")
    with pytest.raises(UserError) as err:
        read(path)
    msg = str(err.value)
    assert problem in msg and str(path) in msg and "\n" not in msg


CLI_CASES = [c for c in CASES if c[0] in (missing, empty, directory, fifo, png, text, truncated,
                                          wrong_version, table_out_of_file, bad_meta)]


@pytest.mark.parametrize("make,problem", CLI_CASES, ids=[c[0].__name__ for c in CLI_CASES])
def test_cli_one_line_error(tmp_path, make, problem):
    # --json for every other case: both output paths fail the same way before printing.
    extra = ["--json"] if CLI_CASES.index((make, problem)) % 2 else []
    path = make(tmp_path / "bad.mpiscope")
    proc = mpitest.run(mpitest.mpiscope_cmd("report", *extra, str(path)), check=False,
                       timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("mpiscope: error: ") and problem in lines[0]
    assert "Traceback" not in proc.stderr


def test_good_file_reads_back_exactly(tmp_path):
    path = _good(tmp_path / "good.mpiscope")
    prof = read(path)
    assert prof.nranks == 2 and prof.mode == "full" and prof.functions == ["MPI_Send"]
    assert prof.funcs["time"].tolist() == [0.5, 0.25]
    assert prof.ranks["func_first"].tolist() == [0, 1]
    assert prof.ranks["func_count"].tolist() == [1, 1]
    assert prof.ranks["peer_count"].tolist() == [1, 0]
    assert len(prof.hist) == 0 and len(prof.summary) == 0


def test_unknown_section_kind_is_skipped(tmp_path):
    meta = testing.default_meta(["MPI_Send"])
    ranks = np.zeros(1, fmt.RANK)
    sections = {fmt.SEC_META: json.dumps(meta).encode(), 99: b"future data!",
                fmt.SEC_RANKS: ranks}
    path = tmp_path / "future.mpiscope"
    path.write_bytes(testing.encode(sections, nranks=1))
    prof = read(path)
    assert prof.nranks == 1 and len(prof.ranks) == 1
