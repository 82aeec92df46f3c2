"""Mutated profiles through every command that reads one (tests/reliability/test_reader_fuzz.py
runs a slice in CI, perf/reliability/fuzz_readers.py thousands).

``READERS`` is the table of commands: one line per command, its arguments with
``{p}`` for the mutated profile, ``{good}`` for an intact one and ``{out}`` for
a fresh output path. A command that lands later is one more line. Each case
runs in-process through :func:`mpiscope.cli.main` and must end in one of two
ways: exit 0 (a result), or exit non-zero with exactly one line on stderr,
``mpiscope: error: ...``. An exception that escapes (a traceback), a case that
runs longer than ``CASE_SECONDS`` of CPU (or ``WALL_SECONDS``), or one whose peak Python allocation grows
with something other than the file (``memory_bound``) is a failure.

``MUTATORS``: truncation, bit flips anywhere or in the header and section
table, a section pointing outside the file, huge counts, overlapping or
duplicated sections, a META that is not JSON (or JSON of the wrong shape),
records whose indices or numbers are out of range, and the ENV, MPIT and TIMELINE
sections (kinds 11, 12 and 15) and their META with extreme or ill-shaped values.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import struct
import time
import tracemalloc
from pathlib import Path

import numpy as np

from mpiscope import cli
from mpiscope import format as fmt
from mpiscope import testing

READERS = [
    ("report", ["report", "{p}"]),
    ("report --json", ["report", "--json", "{p}"]),
    ("report --ppn 2 --region", ["report", "--ppn", "2", "--region", "halo", "{p}"]),
    ("report --by-comm", ["report", "--by-comm", "{p}"]),
    ("place from-profile", ["place", "from-profile", "{p}", "-n", "2", "-o", "{out}"]),
    ("place aggregators", ["place", "aggregators", "{p}", "--json"]),
    ("diagnose", ["diagnose", "{p}"]),
    ("diagnose --json", ["diagnose", "--json", "{p}"]),
    ("compare (mutated, intact)", ["compare", "{p}", "{good}"]),
    ("compare --json (intact, mutated)", ["compare", "--json", "{good}", "{p}"]),
    ("html", ["html", "{p}", "-o", "{out}", "--force"]),
    ("export csv", ["export", "{p}", "-f", "csv", "-o", "{out}", "--force"]),
    ("export hatchet", ["export", "{p}", "-f", "hatchet", "-o", "{out}", "--force"]),
]

CASE_SECONDS = 10  # of CPU time: a loaded machine stretches the wall clock, not this
WALL_SECONDS = 180
HEAD = fmt.HEADER.itemsize
ENTRY = fmt.SECTION.itemsize


def base_profiles(tmp: Path) -> list[Path]:
    """Intact profiles to mutate: full and summary mode, with regions, nodes,
    peers, ENV records and a timeline (the MPIT section comes from real runs:
    perf/reliability/fuzz_readers.py)."""
    return [testing.write_synthetic(tmp / "full.mpiscope", 8, ppn=4, steps=3, with_env=True,
                                    timeline_bins=16),
            testing.write_synthetic(tmp / "summary.mpiscope", 8, mode="summary", ppn=4, steps=3,
                                    with_env=True, timeline_bins=16)]


# --- layout helpers -----------------------------------------------------------------

def _table(data: bytes) -> tuple[int, int]:
    """(offset of the section table, number of entries) as the header says."""
    h = np.frombuffer(data, fmt.HEADER, count=1)[0]
    return int(h["section_table_offset"]), int(h["nsections"])


def _entries(data: bytes) -> list[int]:
    at, n = _table(data)
    return [at + i * ENTRY for i in range(n)]


def _entry_field(name: str) -> tuple[int, str]:
    off = fmt.SECTION.fields[name][1]
    code = {1: "B", 2: "H", 4: "I", 8: "Q"}[fmt.SECTION.fields[name][0].itemsize]
    return off, "<" + code


def _set_entry(data: bytearray, entry_at: int, name: str, value: int) -> None:
    off, code = _entry_field(name)
    struct.pack_into(code, data, entry_at + off, value & ((1 << (8 * struct.calcsize(code))) - 1))


def _get_entry(data: bytes, entry_at: int, name: str) -> int:
    off, code = _entry_field(name)
    return struct.unpack_from(code, data, entry_at + off)[0]


def _header_field(name: str) -> tuple[int, str]:
    dt, off = fmt.HEADER.fields[name][:2]
    return off, "<" + {1: "B", 2: "H", 4: "I", 8: "Q"}.get(dt.itemsize, "Q") \
        if dt.kind in "iu" else "<d"


def _set_header(data: bytearray, name: str, value) -> None:
    off, code = _header_field(name)
    if code == "<d":
        struct.pack_into(code, data, off, float(value))
    else:
        struct.pack_into(code, data, off, int(value) & ((1 << (8 * struct.calcsize(code))) - 1))


def _section_at(data: bytes, kind: int) -> int | None:
    for e in _entries(data):
        if _get_entry(data, e, "kind") == kind:
            return e
    return None


def with_meta(data: bytes, meta: bytes) -> bytes:
    """The file with its META replaced by ``meta`` (appended at the end, the
    table entry and the header's file size updated): a well-formed file whose
    META says something else."""
    out = bytearray(data) + meta
    e = _section_at(data, fmt.SEC_META)
    _set_entry(out, e, "offset", len(data))
    _set_entry(out, e, "length", len(meta))
    _set_entry(out, e, "count", len(meta))
    _set_header(out, "file_bytes", len(out))
    return bytes(out)


def _meta(data: bytes) -> dict:
    e = _section_at(data, fmt.SEC_META)
    off, n = _get_entry(data, e, "offset"), _get_entry(data, e, "length")
    return json.loads(data[off:off + n])


def _record_field(data: bytes, rng, kind: int) -> bytearray | None:
    """A random field of a random record of section ``kind`` set to an extreme."""
    e = _section_at(data, kind)
    if e is None or not _get_entry(data, e, "count"):
        return None
    mode = "summary" if np.frombuffer(data, fmt.HEADER, count=1)[0]["mode"] == fmt.MODE_SUMMARY \
        else "full"
    dt = fmt.section_dtype(kind, mode)
    out = bytearray(data)
    rec = int(rng.integers(0, _get_entry(data, e, "count")))
    if dt.names is None:           # plain values (TIMELINE in full mode)
        fdt, off = dt, 0
    else:
        names = [n for n in dt.names if dt.fields[n][0].kind in "iuf"]
        name = names[int(rng.integers(0, len(names)))]
        fdt, off = dt.fields[name][:2]
    at = _get_entry(data, e, "offset") + rec * dt.itemsize + off
    if fdt.kind == "f":
        value = [np.nan, np.inf, -np.inf, -1.0, 1e308][int(rng.integers(0, 5))]
    else:
        top = (1 << (8 * fdt.itemsize)) - 1
        value = [top, top >> 1, 1 << 31, 2 ** 20, 0][int(rng.integers(0, 5))]
        value = value if fdt.kind == "u" else value & ((1 << (8 * fdt.itemsize - 1)) - 1)
    out[at:at + fdt.itemsize] = np.array([value], fdt.newbyteorder("<")).tobytes()
    return out


# --- mutators: (name, function(data, rng) -> bytes) ------------------------------------

def truncate(data, rng):
    return data[:int(rng.integers(0, len(data)))]


def flip_bits(data, rng):
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 9))):
        pos = int(rng.integers(0, len(out)))
        out[pos] ^= 1 << int(rng.integers(0, 8))
    return bytes(out)


def flip_structure(data, rng):
    """Random bytes in the header and the section table, where structure lives."""
    at, n = _table(data)
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        pos = int(rng.integers(0, at + n * ENTRY))
        out[pos] = int(rng.integers(0, 256))
    return bytes(out)


def outside(data, rng):
    out = bytearray(data)
    e = _entries(data)[int(rng.integers(0, len(_entries(data))))]
    field = ["offset", "length"][int(rng.integers(0, 2))]
    value = [len(data), len(data) - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 32][int(rng.integers(0, 5))]
    _set_entry(out, e, field, value)
    return bytes(out)


def huge_count(data, rng):
    out = bytearray(data)
    choice = int(rng.integers(0, 4))
    big = [2 ** 31, 2 ** 40, 2 ** 62, 2 ** 64 - 1][int(rng.integers(0, 4))]
    if choice == 0:
        _set_header(out, "nranks", big)
    elif choice == 1:
        _set_header(out, "nsections", big)
    else:
        e = _entries(data)[int(rng.integers(0, len(_entries(data))))]
        _set_entry(out, e, "count", big)
        if choice == 3:  # keep length = count x record size (a lie the size check must catch)
            kind = _get_entry(data, e, "kind")
            item = fmt.SECTION_DTYPES[kind].itemsize if kind in fmt.SECTION_DTYPES else 1
            _set_entry(out, e, "length", big * item)
    return bytes(out)


def _copy_entry_fields(data, rng, fields) -> bytes:
    """Two different section-table entries: the first gets the second's ``fields``."""
    out = bytearray(data)
    es = _entries(data)
    a, b = (es[int(i)] for i in rng.choice(len(es), 2, replace=False))
    for name in fields:
        _set_entry(out, a, name, _get_entry(data, b, name))
    return bytes(out)


def overlap(data, rng):
    """One section's offset (and, half the time, length and count) copied from another's."""
    fields = ("offset", "length", "count") if rng.integers(0, 2) else ("offset",)
    return _copy_entry_fields(data, rng, fields)


def duplicate_kind(data, rng):
    return _copy_entry_fields(data, rng, ("kind",))


META_GARBAGE = [b"", b"not json", b"\xff\xfe\x00bad utf-8", b"[1, 2, 3]", b"null", b"\"text\"",
                b"[" * 100000 + b"]" * 100000, b"{\"functions\": 7}", b"{\"functions\": [1, 2]}",
                b"{}", b"{\"a\": " + b"1" * 5000 + b"}", b"{\"functions\": " + b"[" * 3000 + b"]" * 3000 + b"}"]


def meta_not_json(data, rng):
    return with_meta(data, META_GARBAGE[int(rng.integers(0, len(META_GARBAGE)))])


def meta_wrong_types(data, rng):
    """Valid JSON with a key of the wrong type, missing, or absurd."""
    meta = _meta(data)
    key = list(meta)[int(rng.integers(0, len(meta)))]
    meta[key] = [None, 7, -1, "x", [], {}, [None, {"a": 1}], 1e308, "\u202e<script>"][
        int(rng.integers(0, 9))]
    if rng.integers(0, 4) == 0:
        meta.pop(key)
    return with_meta(data, json.dumps(meta).encode())


def bad_record(data, rng):
    kinds = [k for k in fmt.SECTION_DTYPES if _section_at(data, k) is not None]
    for _ in range(8):
        out = _record_field(data, rng, kinds[int(rng.integers(0, len(kinds)))])
        if out is not None:
            return bytes(out)
    return flip_bits(data, rng)


NEW_SECTIONS = (fmt.SEC_ENV, fmt.SEC_MPIT, fmt.SEC_TIMELINE)
NEW_META = ("environment", "mpit", "timeline")


def env_mpit(data, rng):
    """The sections added last (ENV, kind 11; MPIT, kind 12; TIMELINE, kind 15) and the
    META they point into: a record field set to an extreme, or META "environment" /
    "mpit" / "timeline" (or one of their keys) of the wrong shape."""
    kinds = [k for k in NEW_SECTIONS if _section_at(data, k) is not None]
    meta = _meta(data)
    keys = [k for k in NEW_META if k in meta]
    if kinds and (not keys or rng.integers(0, 2)):
        out = _record_field(data, rng, kinds[int(rng.integers(0, len(kinds)))])
        if out is not None:
            return bytes(out)
    if not keys:
        return bad_record(data, rng)
    key = keys[int(rng.integers(0, len(keys)))]
    garbage = [None, 7, "x", [], [None, 1], {"variables": 7}, {"cpus": [1]}, {"a": {}}][
        int(rng.integers(0, 8))]
    if isinstance(meta[key], dict) and meta[key] and rng.integers(0, 2):
        inner = list(meta[key])
        meta[key][inner[int(rng.integers(0, len(inner)))]] = garbage
    else:
        meta[key] = garbage
    return with_meta(data, json.dumps(meta).encode())


def header_values(data, rng):
    out = bytearray(data)
    name = ["mode", "flags", "version", "nranks", "start_time", "header_bytes",
            "section_entry_bytes", "section_table_offset", "file_bytes"][int(rng.integers(0, 9))]
    if name == "start_time":
        _set_header(out, name, [np.nan, np.inf, -1e300, 1e300][int(rng.integers(0, 4))])
    else:
        _set_header(out, name, [0, 1, 2, 3, 255, 2 ** 31, 2 ** 64 - 1][int(rng.integers(0, 7))])
    return bytes(out)


MUTATORS = [truncate, flip_bits, flip_structure, outside, huge_count, overlap, duplicate_kind,
            meta_not_json, meta_wrong_types, bad_record, header_values, env_mpit]


# --- running one case ------------------------------------------------------------------

class Hung(Exception):
    pass


def _alarm(signum, frame):
    raise Hung()


def run_reader(argv: list[str], measure: bool = True) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak bytes allocated or 0 if not ``measure``d) of
    one in-process command. An exception other than Hung propagates with its
    traceback: that is a failure."""
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm), signal.signal(signal.SIGPROF, _alarm)
    signal.alarm(WALL_SECONDS)
    signal.setitimer(signal.ITIMER_PROF, CASE_SECONDS)
    if measure:
        tracemalloc.start()
    peak = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(argv)
        if measure:
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        if measure:
            tracemalloc.stop()
        signal.alarm(0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, old[0])
        signal.signal(signal.SIGPROF, old[1])
    return rc, out.getvalue(), err.getvalue(), peak


def memory_bound(file_bytes: int, good_peak: int) -> int:
    """What a reader may allocate for a file of this size: what it takes for the
    intact file of the same shape, plus 200 bytes for each byte of the file."""
    return 4 * good_peak + 200 * file_bytes


def check_case(name: str, template: list[str], path: Path, good: Path, out: Path,
               good_peak: int, measure: bool = True, detail: bool = False):
    """Run one reader on one file; return "result" or "error" (with ``detail``:
    and the peak allocation and the error line), or raise AssertionError."""
    argv = [a.format(p=path, good=good, out=out) for a in template]
    if out.exists():
        out.unlink()
    try:
        rc, stdout, stderr, peak = run_reader(argv, measure)
    except Hung:
        raise AssertionError(f"{name} on {path}: still running after {CASE_SECONDS} s of CPU "
                             f"or {WALL_SECONDS} s") from None
    lines = stderr.strip().splitlines()
    if rc == 0:
        outcome = "result"
    else:
        assert len(lines) == 1 and lines[0].startswith("mpiscope: error: "), \
            f"{name} on {path}: exit {rc}, stderr:\n{stderr[-2000:]}"
        outcome = "error"
    size = path.stat().st_size if path.exists() else 0
    assert peak <= memory_bound(size, good_peak), \
        f"{name} on {path}: {peak} bytes allocated for a {size}-byte file"
    return (outcome, peak, lines[0] if rc else "") if detail else outcome


# Mutators whose files claim sizes the reader might believe: memory is measured
# on every such case, on one in five of the others (tracemalloc is slow).
ALWAYS_MEASURED = {"huge_count", "outside", "header_values", "meta_not_json"}


def mutate(datas: list[bytes], seed: int, i: int) -> tuple[str, bytes]:
    """Case ``i`` of a run: (mutator name, mutated bytes); the same for the same
    (seed, i) whichever worker makes it."""
    rng = np.random.default_rng([seed, i])
    m = MUTATORS[i % len(MUTATORS)]
    return m.__name__, m(datas[int(rng.integers(0, len(datas)))], rng)


def cli_subprocess(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) of the same command as a real ``mpiscope`` process
    (of the mpiscope imported here, not one installed elsewhere)."""
    import subprocess
    import sys

    import mpiscope

    src = str(Path(mpiscope.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "mpiscope.cli", *argv], capture_output=True,
                          text=True, timeout=WALL_SECONDS, env=env)
    return proc.returncode, proc.stderr


def _new_stats(readers) -> dict:
    stats = {"failures": []}
    stats.update({name: {"result": 0, "error": 0, "cpu_max_s": 0.0, "peak_max": 0,
                    "peak_max_file_bytes": 0, "peak_per_file_byte_max": 0.0, "measured": 0,
                    "subprocess_same": 0} for name, _ in readers})
    stats["mutators"] = {m.__name__: 0 for m in MUTATORS}
    return stats


def _merge_stats(into: dict, part: dict) -> None:
    for name, st in part.items():
        if name == "failures":
            into[name] += st
            continue
        if name == "mutators":
            for m, k in st.items():
                into[name][m] += k
            continue
        t = into[name]
        for k in ("result", "error", "measured", "subprocess_same"):
            t[k] += st[k]
        t["cpu_max_s"] = max(t["cpu_max_s"], st["cpu_max_s"])
        t["peak_per_file_byte_max"] = max(t["peak_per_file_byte_max"], st["peak_per_file_byte_max"])
        if st["peak_max"] > t["peak_max"]:
            t["peak_max"], t["peak_max_file_bytes"] = st["peak_max"], st["peak_max_file_bytes"]


def _worker(tmp: Path, bases: list[Path], indices, seed: int, readers, peaks: dict,
            cli_every: int, progress, keep_going: bool = False) -> dict:
    """Run the cases ``indices`` in this process; the stats, or raise with the
    failing file kept (case-N-MUTATOR.mpiscope); with ``keep_going`` a failure
    is listed in stats["failures"] (file kept) and the next command runs."""
    datas = [b.read_bytes() for b in bases]
    out = tmp / "out.txt"
    path = tmp / "case.mpiscope"
    stats = _new_stats(readers)
    for done, i in enumerate(indices, 1):
        mname, data = mutate(datas, seed, i)
        path.write_bytes(data)
        stats["mutators"][mname] += 1
        measure = mname in ALWAYS_MEASURED or i % 5 == 0
        for name, template in readers:
            st = stats[name]
            try:
                cpu0 = time.process_time()
                outcome, peak, line = check_case(name, template, path, bases[0], out,
                                                 peaks[name], measure, detail=True)
                st["cpu_max_s"] = max(st["cpu_max_s"], time.process_time() - cpu0)
                st[outcome] += 1
                if measure:
                    st["measured"] += 1
                    st["peak_per_file_byte_max"] = max(st["peak_per_file_byte_max"],
                                                       peak / max(len(data), 1))
                    if peak > st["peak_max"]:
                        st["peak_max"], st["peak_max_file_bytes"] = peak, len(data)
                if cli_every and i % cli_every == 0:
                    argv = [a.format(p=path, good=bases[0], out=out) for a in template]
                    out.unlink(missing_ok=True)
                    rc, err = cli_subprocess(argv)
                    assert (rc == 0) == (outcome == "result") and (
                        rc == 0 or err.strip() == line), \
                        f"{name} on {path}: in-process {outcome} {line!r}, as a process " \
                        f"exit {rc}: {err[-2000:]!r}"
                    st["subprocess_same"] += 1
            except Exception as err:  # an assertion, or a traceback that escaped the command
                kept = tmp / f"case-{i}-{mname}.mpiscope"
                kept.write_bytes(data)
                if not keep_going:
                    raise
                stats["failures"].append({"case": i, "mutator": mname, "command": name,
                                          "file": str(kept), "error": repr(err)[:500]})
        if progress:
            progress(done)
        if done % 25 == 0:   # what a run stopped early measured (merge with _merge_stats)
            (tmp / ".stats.json.tmp").write_text(json.dumps({"cases": done, "stats": stats}))
            os.replace(tmp / ".stats.json.tmp", tmp / "stats.json")
    return stats


def _progress(done: int) -> None:
    if done % 100 == 0:
        print(f"worker {os.getpid()}: {done} cases", flush=True)


def reader_peaks(tmp: Path, bases: list[Path], readers=READERS) -> dict:
    """Every reader on the intact files: a result (or a one-line error), and the
    peak it allocates, which memory_bound scales."""
    out = tmp / "out.txt"
    peaks = {}
    for name, template in readers:
        for b in bases:
            out.unlink(missing_ok=True)
            rc, _, stderr, peak = run_reader([a.format(p=b, good=bases[0], out=out)
                                              for a in template])
            assert rc == 0 or stderr.startswith("mpiscope: error: "), (name, b, stderr)
            peaks[name] = max(peaks.get(name, 0), peak)
    return peaks


def fuzz(tmp: Path, cases: int, seed: int, readers=READERS, on_case=None, workers: int = 1,
         bases: list[Path] | None = None, cli_every: int = 0, keep_going: bool = False) -> dict:
    """``cases`` mutated files, each through every reader, in ``workers`` forked
    processes; outcome counts, the most CPU one command took and the largest
    allocation measured, per reader. Every ``cli_every``-th case (0: none) also
    runs each command as a real process: the same exit code and error line.
    ``bases``: the intact profiles to mutate (default: base_profiles)."""
    bases = bases or base_profiles(tmp)
    peaks = reader_peaks(tmp, bases, readers)
    if workers <= 1:
        stats = _worker(tmp, bases, range(cases), seed, readers, peaks, cli_every,
                        on_case and (lambda done: on_case(done - 1)), keep_going)
    else:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            jobs = []
            for w in range(workers):
                sub = tmp / f"worker{w}"
                sub.mkdir(exist_ok=True)
                jobs.append(pool.apply_async(_worker, (sub, bases, range(w, cases, workers),
                                                       seed, readers, peaks, cli_every,
                                                       _progress if on_case else None,
                                                       keep_going)))
            stats = _new_stats(readers)
            for job in jobs:
                _merge_stats(stats, job.get())
    for name, peak in peaks.items():
        stats[name]["intact_peak"] = peak
    return stats
