"""Corrupted profiles never crash the reader or the report: a UserError or a report, nothing else."""

from __future__ import annotations

import numpy as np

from mpiscope import read, testing
from mpiscope.errors import UserError
from mpiscope.report import build_report


def test_random_corruption_gives_user_error_or_report(tmp_path):
    good = testing.write_synthetic(tmp_path / "good.mpiscope", 16, ppn=4, steps=3)
    data = np.frombuffer(good.read_bytes(), np.uint8)
    rng = np.random.default_rng(7)
    bad = tmp_path / "bad.mpiscope"
    outcomes = {"error": 0, "report": 0}
    for trial in range(300):
        mutated = data.copy()
        # Half the trials hit the header and section table, where structure lives.
        limit = 64 + 32 * 8 if trial % 2 else len(data)
        for pos in rng.integers(0, limit, size=int(rng.integers(1, 6))):
            mutated[pos] = rng.integers(0, 256)
        if trial % 7 == 0:
            mutated = mutated[:int(rng.integers(0, len(mutated)))]
        bad.write_bytes(mutated.tobytes())
        try:
            rep = build_report(read(bad), ppn=None, top=3)
        except UserError as err:
            assert "\n" not in str(err) and str(bad) in str(err)
            outcomes["error"] += 1
        else:
            assert rep["profile"]["nranks"] >= 0
            outcomes["report"] += 1
    assert outcomes["error"] > 50 and outcomes["report"] > 50, outcomes


def test_every_reader_on_mutated_profiles(tmp_path):
    """A slice of perf/reliability/fuzz_readers.py: one file per mutator (truncated,
    bit flips, a section outside the file, huge counts, overlapping sections, a
    META that is not JSON...) through every command of fuzz_profiles.READERS,
    in-process: a result or one `mpiscope: error:` line, no traceback, no hang,
    memory bounded by the file's size."""
    import fuzz_profiles

    counts = fuzz_profiles.fuzz(tmp_path, len(fuzz_profiles.MUTATORS), seed=11)
    for name, _ in fuzz_profiles.READERS:
        assert counts[name]["result"] + counts[name]["error"] == len(fuzz_profiles.MUTATORS)
    # The slice reaches both ends: files the readers reject and files they read.
    assert counts["report"]["error"] > 0 and counts["report"]["result"] > 0, counts


def test_fuzzer_regressions(tmp_path):
    """Files the fuzzer found that used to end in a traceback: a META of 3,000
    nested arrays (RecursionError in json) and a start time of 1e300 s
    (OverflowError in the report header, then in the HTML page)."""
    import fuzz_profiles

    good = testing.write_synthetic(tmp_path / "good.mpiscope", 4, ppn=2, steps=2)
    data = good.read_bytes()
    nested = tmp_path / "nested.mpiscope"
    nested.write_bytes(fuzz_profiles.with_meta(data, b"[" * 3000 + b"]" * 3000))
    rc, _, err, _ = fuzz_profiles.run_reader(["report", str(nested)], measure=False)
    assert rc == 2 and err.strip() == (f"mpiscope: error: {nested}: corrupt mpiscope profile: "
                                       f"META nests JSON arrays or objects too deeply")
    late = tmp_path / "late.mpiscope"
    buf = bytearray(data)
    fuzz_profiles._set_header(buf, "start_time", 1e300)
    late.write_bytes(bytes(buf))
    rc, out, err, _ = fuzz_profiles.run_reader(["report", str(late)], measure=False)
    assert rc == 0, err
    assert "Started at an impossible time (1e+300 s since 1970)" in out
    # ... and the HTML page's facts (an OverflowError from html's run_facts,
    # found by perf/reliability/fuzz_readers.py at case 70 of seed 1).
    page = tmp_path / "late.html"
    rc, _, err, _ = fuzz_profiles.run_reader(["html", str(late), "-o", str(page)], measure=False)
    assert rc == 0, err
    assert "an impossible time (1e+300 s since 1970)" in page.read_text()
