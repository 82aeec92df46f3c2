"""The TIMELINE section (kind 15) read back, and refused when it disagrees with META."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope import read, testing
from mpiscope.errors import UserError

ROWS = ["p2p", "coll", "compute", "bytes"]


def _values(nranks=3, bins=5):
    rng = np.random.default_rng(4)
    v = rng.random((nranks, len(ROWS), bins))
    v[:, 3] = np.round(v[:, 3] * 1000)
    return v


def _write(path, values, meta_tl=None, mode="full"):
    nranks, _, bins = values.shape
    meta = testing.default_meta(["MPI_Send"], ["p2p"])
    meta["timeline"] = testing.timeline_meta(ROWS, bins, 0.25) if meta_tl is None else meta_tl
    if mode == "summary":
        meta["timeline"]["rows"] = testing.summary_rows(ROWS)
        return testing.write_profile(path, nranks=nranks, meta=meta, mode="summary",
                                     timeline=testing.summarize_timeline(values, ROWS))
    return testing.write_profile(path, nranks=nranks, meta=meta, timeline=values)


def test_full_and_summary_read_back(tmp_path):
    v = _values()
    tl = read(_write(tmp_path / "f.mpiscope", v)).timeline_bins
    assert tl.rows == ROWS and tl.bins == 5 and tl.bin_seconds == 0.25 and tl.kinds == ["p2p", "coll"]
    assert np.array_equal(tl.values, v)
    assert np.allclose(tl.row("mpi"), v[:, 0] + v[:, 1])
    assert np.allclose(tl.starts, [0, 0.25, 0.5, 0.75, 1.0])
    s = read(_write(tmp_path / "s.mpiscope", v, mode="summary")).timeline_bins
    assert s.rows == ["p2p", "coll", "mpi", "compute", "bytes"] and s.values is None
    assert np.allclose(s.stats["mpi"]["sum"], (v[:, 0] + v[:, 1]).sum(axis=0))
    assert np.array_equal(s.stats["coll"]["max_rank"], v[:, 1].argmax(axis=0))
    for name in ROWS + ["mpi"]:
        assert np.allclose(s.total(name), tl.total(name)), name


def bad_size(meta):
    meta["bins"] = 4


def no_meta(meta):
    return "drop"


def bad_width(meta):
    meta["bin_seconds"] = -1


def bad_rows(meta):
    meta["rows"] = ["p2p", "p2p", "compute", "bytes"]


def bad_bins(meta):
    meta["bins"] = "5"


@pytest.mark.parametrize("spoil", [bad_size, no_meta, bad_width, bad_rows, bad_bins])
def test_disagreeing_meta_is_one_line_error(tmp_path, spoil):
    meta_tl = testing.timeline_meta(ROWS, 5, 0.25)
    if spoil(meta_tl) == "drop":
        path = testing.write_profile(tmp_path / "p.mpiscope", nranks=3, functions=["MPI_Send"],
                                     function_kinds=["p2p"], timeline=_values())
    else:
        path = _write(tmp_path / "p.mpiscope", _values(), meta_tl=meta_tl)
    with pytest.raises(UserError, match="corrupt mpiscope profile: .*(TIMELINE|timeline)"):
        read(path)
    proc = mpitest.run(mpitest.mpiscope_cmd("report", str(path)), check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "timeline" in proc.stderr.lower()


def test_non_finite_value_refused(tmp_path):
    v = _values()
    v[1, 2, 3] = np.inf
    with pytest.raises(UserError, match="TIMELINE holds a value that is not a finite number"):
        read(_write(tmp_path / "p.mpiscope", v))


def test_summary_record_outside_the_grid_refused(tmp_path):
    v = _values()
    meta = testing.default_meta(["MPI_Send"], ["p2p"])
    meta["timeline"] = testing.timeline_meta(testing.summary_rows(ROWS), 5, 0.25)
    recs = testing.summarize_timeline(v, ROWS)
    recs["metric"][0] = 5
    path = testing.write_profile(tmp_path / "p.mpiscope", nranks=3, meta=meta, mode="summary",
                                 timeline=recs)
    with pytest.raises(UserError, match="do not name each"):
        read(path)
    assert json.loads(json.dumps(meta))  # META itself is fine: the records are not
    assert fmt.SEC_TIMELINE == 15
