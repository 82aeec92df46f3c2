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


def test_fuzzer_regressions_summary_and_io_files(tmp_path):
    """Found by perf/reliability/fuzz_readers.py (seed 1, cases 165 and 188):
    a SUMMARY record whose sum is infinite ended every reader of a summary
    profile in OverflowError (int(round(inf))); a META io_files that is a
    number ended `place aggregators` in TypeError. Both are one-line errors."""
    import json

    import fuzz_profiles
    from mpiscope import format as fmt

    summ = testing.write_synthetic(tmp_path / "summary.mpiscope", 4, mode="summary", ppn=2, steps=2)
    data = bytearray(summ.read_bytes())
    e = fuzz_profiles._section_at(bytes(data), fmt.SEC_SUMMARY)
    at = fuzz_profiles._get_entry(bytes(data), e, "offset") + fmt.SUMMARY.fields["sum"][1]
    data[at:at + 8] = np.array([np.inf], "<f8").tobytes()
    inf = tmp_path / "inf.mpiscope"
    inf.write_bytes(bytes(data))
    for argv in (["report", str(inf)], ["report", "--json", str(inf)], ["diagnose", str(inf)]):
        rc, _, err, _ = fuzz_profiles.run_reader(argv, measure=False)
        assert rc == 2 and err.strip() == (f"mpiscope: error: {inf}: corrupt mpiscope profile: "
                                           f"SUMMARY holds a sum that is not a finite number")
    full = testing.write_synthetic(tmp_path / "full.mpiscope", 4, ppn=2, steps=2).read_bytes()
    meta = fuzz_profiles._meta(full)
    meta["io_files"] = 7
    odd = tmp_path / "io.mpiscope"
    odd.write_bytes(fuzz_profiles.with_meta(full, json.dumps(meta).encode()))
    rc, _, err, _ = fuzz_profiles.run_reader(["place", "aggregators", str(odd), "--json"],
                                             measure=False)
    assert rc != 0 and err.strip() == ("mpiscope: error: corrupt mpiscope profile: META io_files "
                                       "is not a list of files")
    # (cases 356, 848, 872) META function_kinds that is a number: TypeError in every reader.
    meta = fuzz_profiles._meta(full)
    meta["function_kinds"] = 7
    kinds = tmp_path / "kinds.mpiscope"
    kinds.write_bytes(fuzz_profiles.with_meta(full, json.dumps(meta).encode()))
    rc, _, err, _ = fuzz_profiles.run_reader(["report", str(kinds)], measure=False)
    assert rc == 2 and err.strip() == (f"mpiscope: error: {kinds}: corrupt mpiscope profile: "
                                       f"META 'function_kinds' is not a list")


def test_fuzzer_regressions_aggregators_huge_rank_counts(tmp_path):
    """Found by perf/reliability/fuzz_readers.py (seed 1, cases 448, 706, 1000;
    huge_count, header_values): a header claiming 2^40 ranks ended `place aggregators`
    on a summary profile in `ValueError: Maximum allowed dimension exceeded` (a per-rank
    array as long as the claim). The reader now refuses more ranks than MPI_Comm_size
    can return, and a summary profile's aggregators are computed from --ppn without any
    per-rank array: the same ranks as the per-rank path, in memory bounded by the file."""
    import json

    import fuzz_profiles
    from mpiscope.place.aggregators import aggregator_ranks, aggregators_in_blocks

    summ = testing.write_synthetic(tmp_path / "s.mpiscope", 8, mode="summary", ppn=4, steps=2)
    meta = fuzz_profiles._meta(summ.read_bytes())
    meta["io_files"] = [{"name": "out.dat", "cb_nodes": "3", "cb_config_list": "*:2"}]
    base = fuzz_profiles.with_meta(summ.read_bytes(), json.dumps(meta).encode())
    for nranks, ok in ((2**40, False), (2**31 - 1, True), (12, True)):
        buf = bytearray(base)
        fuzz_profiles._set_header(buf, "nranks", nranks)
        path = tmp_path / f"n{nranks}.mpiscope"
        path.write_bytes(bytes(buf))
        rc, out, err, peak = fuzz_profiles.run_reader(
            ["place", "aggregators", str(path), "--ppn", "4", "--json"])
        if not ok:
            assert rc == 2 and err.strip() == (
                f"mpiscope: error: {path}: corrupt mpiscope profile: the header says {nranks} "
                f"ranks (an MPI job has 1 to {2**31 - 1})")
            continue
        assert rc == 0, err
        assert peak < 10 * len(buf) + (1 << 20)  # nothing per rank
        (f,) = json.loads(out)
        # romio, *:2 on nodes of 4: two ranks of each node in node order, the first 3
        assert f["aggregators"] == [0, 1, 4] and f["nodes"] == [0, 0, 1]
        assert f["aggregator_io_bytes"] is None and f["collective_io_bytes"] is None
        rc, _, err, _ = fuzz_profiles.run_reader(["place", "aggregators", str(path)],
                                                 measure=False)
        assert rc == 2 and "summary-mode profile has no per-rank node map: give --ppn" in err
    # The block formula is the per-rank selection whenever both can run.
    for nranks in (1, 5, 12, 13, 64):
        for ppn in (1, 3, 4, 16):
            node = np.arange(nranks) // ppn
            for cb in (1, 2, 5, 100):
                for cfg in (None, "*:1", "*:2", "*:*", "bogus"):
                    for rule in ("romio", "stride"):
                        assert aggregators_in_blocks(nranks, ppn, cb, cfg, rule).tolist() == \
                            aggregator_ranks(node, cb, cfg, rule).tolist(), \
                            (nranks, ppn, cb, cfg, rule)


def test_fuzzer_regressions_html_extreme_records(tmp_path):
    """Found by perf/reliability/fuzz_readers.py (seed 1, cases 861 and 1089;
    bad_record): histogram counts whose sum over ranks passes 2^64 ended
    `html` in TypeError (plotly's JSON encoder takes 64-bit integers only);
    the page is now written, a huge count as a float. Infinite times, whose
    per-rank totals were NaN (inf - inf) and ended `html` in IndexError, are
    now refused by the reader: the runtime never writes one."""
    import fuzz_profiles
    from mpiscope import format as fmt

    data = bytearray(testing.write_synthetic(tmp_path / "good.mpiscope", 4, ppn=2,
                                             steps=2).read_bytes())

    def field(kind, rec, name):
        e = fuzz_profiles._section_at(bytes(data), kind)
        dt = fmt.section_dtype(kind, "full")
        return fuzz_profiles._get_entry(bytes(data), e, "offset") + rec * dt.itemsize + \
            dt.fields[name][1]

    for rec in (0, 1):
        at = field(fmt.SEC_HIST, rec, "count")
        data[at:at + 8] = np.array([2**64 - 1], "<u8").tobytes()
    huge = tmp_path / "huge.mpiscope"
    huge.write_bytes(bytes(data))
    page = tmp_path / "huge.html"
    rc, _, err, _ = fuzz_profiles.run_reader(["html", str(huge), "-o", str(page)], measure=False)
    assert rc == 0 and page.stat().st_size > 0, err
    for name, value in (("wall", np.inf), ("mpi", np.inf)):
        at = field(fmt.SEC_RANKS, 1, name)
        data[at:at + 8] = np.array([value], "<f8").tobytes()
    odd = tmp_path / "extreme.mpiscope"
    odd.write_bytes(bytes(data))
    for argv in (["html", str(odd), "-o", str(tmp_path / "extreme.html")], ["report", str(odd)],
                 ["diagnose", str(odd)]):
        rc, _, err, _ = fuzz_profiles.run_reader(argv, measure=False)
        assert rc == 2 and err.strip() == (f"mpiscope: error: {odd}: corrupt mpiscope profile: "
                                           f"RANKS holds a wall that is not a finite number")
    assert not (tmp_path / "extreme.html").exists()
