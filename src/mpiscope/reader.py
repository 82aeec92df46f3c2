"""Read a profile file (format v1, ``docs/profile-format.md``) into a :class:`Profile`.

The file is mapped once (``mmap``) and every section becomes a read-only numpy
structured array over the mapping (``np.frombuffer``): nothing is parsed record
by record, so a 1,048,576-rank profile opens in milliseconds and pages are read
only when an analysis touches them.

Every problem with the file raises :class:`mpiscope.errors.UserError` with one
line naming the file and the problem.
"""

from __future__ import annotations

import json
import mmap
import os
from pathlib import Path

import numpy as np

from . import format as fmt
from .errors import UserError
from .profile import Profile

_SECTION_NAMES = {fmt.SEC_META: "META", fmt.SEC_RANKS: "RANKS", fmt.SEC_FUNCS: "FUNCS",
                  fmt.SEC_HIST: "HIST", fmt.SEC_PEERS: "PEERS", fmt.SEC_REGIONS: "REGIONS",
                  fmt.SEC_NODES: "NODES", fmt.SEC_SUMMARY: "SUMMARY", fmt.SEC_INFLIGHT: "INFLIGHT",
                  fmt.SEC_COMMS: "COMMS", fmt.SEC_ENV: "ENV", fmt.SEC_MPIT: "MPIT",
                  fmt.SEC_TIMELINE: "TIMELINE", fmt.SEC_MODULES: "MODULES",
                  fmt.SEC_CALLSITES: "CALLSITES", fmt.SEC_MEMBERS: "MEMBERS",
                  fmt.SEC_SAMPLES: "SAMPLES"}

_MODES = {fmt.MODE_FULL: "full", fmt.MODE_SUMMARY: "summary"}

# Sections each mode must have; the others may be absent (empty).
_REQUIRED = {"full": (fmt.SEC_META, fmt.SEC_RANKS), "summary": (fmt.SEC_META, fmt.SEC_SUMMARY)}

# MPI_Comm_size returns an int: no job has more ranks than this.
MAX_RANKS = 2**31 - 1

# Per-rank sections whose `rank` field must be < nranks.
_RANKED = ("funcs", "hist", "peers", "regions", "inflight", "comms", "env", "callsites", "members",
           "samples")


def read(path: str | os.PathLike) -> Profile:
    """Map the profile at ``path`` and return it as a :class:`Profile`.

    Arguments:
        path: a file written by the mpiscope runtime (or :mod:`mpiscope.testing`),
            or a snapshot spool directory (``<program>.<job>.spool``), read
            by :func:`mpiscope.spool.read_spool` into a partial profile.
    Returns:
        the Profile; its arrays are read-only views of the mapped file.
    Raises:
        UserError: missing, unreadable, empty, truncated, corrupt, wrong-version
            or non-mpiscope file.
    """
    name = str(path)
    if Path(name).is_dir() and (Path(name) / "meta.json").is_file():
        from .spool import read_spool
        return read_spool(name)
    buf = _map(name)
    return _parse(name, buf)


def _map(name: str) -> mmap.mmap | bytes:
    p = Path(name)
    if p.is_dir():
        raise UserError(f"{name}: is a directory, not an mpiscope profile")
    if p.exists() and not p.is_file():  # a FIFO would block open(), a device never ends
        raise UserError(f"{name}: not a regular file, not an mpiscope profile")
    try:
        with open(p, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise UserError(f"{name}: empty file, not an mpiscope profile")
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise UserError(f"{name}: no such file") from None
    except PermissionError:
        raise UserError(f"{name}: permission denied") from None
    except (ValueError, OSError) as err:  # not mappable (a FIFO, /dev/...), I/O error
        raise UserError(f"{name}: cannot read: {getattr(err, 'strerror', None) or err}") from None


def _parse(name: str, buf) -> Profile:
    size = len(buf)

    def corrupt(what: str) -> UserError:
        return UserError(f"{name}: corrupt mpiscope profile: {what}")

    head = bytes(buf[:len(fmt.MAGIC)])
    if head == bytes(len(fmt.MAGIC)) and size >= fmt.HEADER.itemsize:
        h = np.frombuffer(buf, fmt.HEADER, count=1)[0]
        if int(h["version"]) == fmt.FORMAT_VERSION and int(h["header_bytes"]) == fmt.HEADER.itemsize:
            # The runtime writes the magic number last, once every rank's write succeeded.
            raise UserError(f"{name}: incomplete mpiscope profile: its writing did not finish "
                            f"(disk full, size limit or a killed rank; no magic number)")
    if head != fmt.MAGIC:
        if fmt.MAGIC.startswith(head) and size < fmt.HEADER.itemsize:
            raise UserError(f"{name}: incomplete mpiscope profile: truncated at {size} bytes, "
                            f"the header alone is {fmt.HEADER.itemsize}")
        raise UserError(f"{name}: not an mpiscope profile (starts with {head!r}, "
                        f"expected {fmt.MAGIC!r})")
    if size < fmt.HEADER.itemsize:
        raise UserError(f"{name}: incomplete mpiscope profile: truncated at {size} bytes, "
                        f"the header alone is {fmt.HEADER.itemsize}")
    h = np.frombuffer(buf, fmt.HEADER, count=1)[0]
    version = int(h["version"])
    if version != fmt.FORMAT_VERSION:
        raise UserError(f"{name}: mpiscope profile format version {version}; this mpiscope "
                        f"reads version {fmt.FORMAT_VERSION} (use a matching mpiscope)")
    if int(h["header_bytes"]) != fmt.HEADER.itemsize:
        raise corrupt(f"header_bytes is {int(h['header_bytes'])}, expected {fmt.HEADER.itemsize}")
    file_bytes = int(h["file_bytes"])
    if size < file_bytes:
        raise UserError(f"{name}: incomplete mpiscope profile: truncated at {size} of "
                        f"{file_bytes} bytes")
    if size > file_bytes:
        raise corrupt(f"{size} bytes but the header says {file_bytes}")
    if int(h["mode"]) not in _MODES:
        raise corrupt(f"unknown mode {int(h['mode'])}")
    mode = _MODES[int(h["mode"])]
    if int(h["section_entry_bytes"]) != fmt.SECTION.itemsize:
        raise corrupt(f"section_entry_bytes is {int(h['section_entry_bytes'])}, "
                      f"expected {fmt.SECTION.itemsize}")
    nsections, table_at = int(h["nsections"]), int(h["section_table_offset"])
    if table_at < fmt.HEADER.itemsize or table_at + nsections * fmt.SECTION.itemsize > size:
        raise corrupt(f"section table ({nsections} entries at offset {table_at}) "
                      f"outside the file ({size} bytes)")
    table = np.frombuffer(buf, fmt.SECTION, count=nsections, offset=table_at)

    found: dict[int, np.ndarray | bytes] = {}
    for entry in table:
        kind, off, length, count = (int(entry[f]) for f in ("kind", "offset", "length", "count"))
        sname = _SECTION_NAMES.get(kind)
        if sname is None:
            continue  # unknown kinds are skipped: newer runtimes may add sections
        if kind in found:
            raise corrupt(f"section {sname} appears twice")
        if off < table_at + nsections * fmt.SECTION.itemsize or off + length > size:
            raise corrupt(f"section {sname} ({length} bytes at offset {off}) outside the file")
        version = int(entry["version"])
        versions = fmt.SECTION_VERSIONS.get(kind, {1: None})
        if version not in versions:
            raise UserError(f"{name}: section {sname} has layout version {version}; "
                            f"this mpiscope reads version {' or '.join(map(str, versions))}")
        if kind == fmt.SEC_META:
            if count != length:
                raise corrupt(f"META count {count} differs from its length {length}")
            found[kind] = bytes(buf[off:off + length])
            continue
        dtype = versions.get(version) or fmt.section_dtype(kind, mode)
        if length != count * dtype.itemsize:
            raise corrupt(f"section {sname} is {length} bytes, expected {count} records "
                          f"x {dtype.itemsize}")
        found[kind] = np.frombuffer(buf, dtype, count=count, offset=off)
        if dtype != fmt.section_dtype(kind, mode):  # an older layout: widened, new fields 0
            wide = np.zeros(count, fmt.section_dtype(kind, mode))
            for field in dtype.names:
                wide[field] = found[kind][field]
            found[kind] = wide

    for kind in _REQUIRED[mode]:
        if kind not in found:
            raise corrupt(f"{mode}-mode profile without a {_SECTION_NAMES[kind]} section")
    try:
        meta = json.loads(found[fmt.SEC_META].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise corrupt(f"META is not valid UTF-8 JSON ({err})") from None
    except RecursionError:  # a few thousand nested brackets: json's parser recurses
        raise corrupt("META nests JSON arrays or objects too deeply") from None
    if not isinstance(meta, dict):
        raise corrupt("META is not a JSON object")
    nranks = int(h["nranks"])
    if not 1 <= nranks <= MAX_RANKS:
        raise corrupt(f"the header says {nranks} ranks (an MPI job has 1 to {MAX_RANKS})")

    def section(kind: int) -> np.ndarray:
        arr = found.get(kind)
        return arr if arr is not None else np.zeros(0, fmt.section_dtype(kind, mode))

    prof = Profile(path=name, meta=meta, nranks=nranks, mode=mode, flags=int(h["flags"]),
                   start_time=float(h["start_time"]), ranks=section(fmt.SEC_RANKS),
                   funcs=section(fmt.SEC_FUNCS), hist=section(fmt.SEC_HIST),
                   peers=section(fmt.SEC_PEERS), regions=section(fmt.SEC_REGIONS),
                   nodes=section(fmt.SEC_NODES), summary=section(fmt.SEC_SUMMARY),
                   inflight=section(fmt.SEC_INFLIGHT), comms=section(fmt.SEC_COMMS),
                   env=section(fmt.SEC_ENV), mpit=section(fmt.SEC_MPIT),
                   timeline=section(fmt.SEC_TIMELINE), modules=section(fmt.SEC_MODULES),
                   callsites=section(fmt.SEC_CALLSITES), members=section(fmt.SEC_MEMBERS),
                   samples=section(fmt.SEC_SAMPLES))
    _check_indices(prof, corrupt)
    _check_finite(prof, corrupt)
    return prof


def _check_indices(prof: Profile, corrupt) -> None:
    """Reject records that point outside the rank range or the function table.

    One vectorized pass per section; the report would otherwise index out of
    bounds (or silently misattribute) on a corrupt file.
    """
    if prof.mode == "full" and len(prof.ranks) != prof.nranks:
        raise corrupt(f"RANKS has {len(prof.ranks)} records for {prof.nranks} ranks")
    if len(prof.env) and (len(prof.env) != prof.nranks or
                          (prof.env["rank"] != np.arange(prof.nranks)).any()):
        raise corrupt(f"ENV has {len(prof.env)} records for {prof.nranks} ranks, "
                      f"not one per rank in rank order")
    functions = prof.meta.get("functions", [])
    if not isinstance(functions, list):
        raise corrupt("META 'functions' is not a list")
    if not isinstance(prof.meta.get("function_kinds", []), list):
        raise corrupt("META 'function_kinds' is not a list")
    nfunc = len(functions)
    if prof.mode == "full":
        for sec in _RANKED:
            arr = getattr(prof, sec)
            if len(arr) and int(arr["rank"].max()) >= prof.nranks:
                raise corrupt(f"{sec.upper()} names rank {int(arr['rank'].max())} "
                              f"of {prof.nranks}")
        if len(prof.peers) and int(prof.peers["peer"].max()) >= prof.nranks:
            raise corrupt(f"PEERS names peer {int(prof.peers['peer'].max())} of {prof.nranks}")
        if len(prof.ranks) and int(prof.ranks["node"].max()) >= prof.nranks:
            raise corrupt(f"RANKS names node {int(prof.ranks['node'].max())} of {prof.nranks}")
        for sec, prefix in (("funcs", "func"), ("hist", "hist"), ("peers", "peer"),
                            ("regions", "region")):
            end = prof.ranks[f"{prefix}_first"] + prof.ranks[f"{prefix}_count"]
            if len(end) and int(end.max()) > len(getattr(prof, sec)):
                bad = int(np.argmax(end > len(getattr(prof, sec))))
                raise corrupt(f"rank {bad}'s {sec.upper()} records end at {int(end[bad])}, "
                              f"past the {len(getattr(prof, sec))} in the section")
    for sec in ("funcs", "hist", "comms", "callsites"):
        arr = getattr(prof, sec)
        if len(arr) and int(arr["func"].max()) >= nfunc:
            raise corrupt(f"{sec.upper()} names function {int(arr['func'].max())}, "
                          f"META lists {nfunc}")
    if len(prof.samples):
        f = prof.samples["func"][prof.samples["func"] < fmt.SAMPLE_COMPUTE_ALL]
        if len(f) and int(f.max()) >= nfunc:
            raise corrupt(f"SAMPLES names function {int(f.max())}, META lists {nfunc}")
    if len(prof.inflight):
        f = prof.inflight["func"][prof.inflight["func"] != fmt.NOT_IN_MPI]
        if len(f) and int(f.max()) >= nfunc:
            raise corrupt(f"INFLIGHT names function {int(f.max())}, META lists {nfunc}")
    _check_mpit(prof, corrupt)
    _check_timeline(prof, corrupt)
    summ = prof.summary
    if len(summ):
        f = summ["func"][summ["func"] != fmt.SUMMARY_RANK_LEVEL]
        if len(f) and int(f.max()) >= nfunc:
            raise corrupt(f"SUMMARY names function {int(f.max())}, META lists {nfunc}")


def _check_finite(prof: Profile, corrupt) -> None:
    """Every time, load and reduced value is a finite number.

    The runtime only ever writes finite numbers; an infinite or NaN time would make
    compute time (wall - MPI) NaN and every table, rule and chart built on it garbage.
    MPI_T values are the MPI library's own doubles, shown as they come.
    """
    for sec in ("ranks", "funcs", "hist", "regions", "summary", "inflight", "comms", "env",
                "timeline", "callsites", "samples"):
        arr = getattr(prof, sec)
        if not len(arr):
            continue
        if arr.dtype.names is None:  # TIMELINE in full mode: plain float64 values
            if not np.isfinite(arr).all():
                raise corrupt(f"{sec.upper()} holds a value that is not a finite number")
            continue
        for name in arr.dtype.names:
            if arr.dtype[name].kind == "f" and not np.isfinite(arr[name]).all():
                raise corrupt(f"{sec.upper()} holds a {name} that is not a finite number")


def _check_mpit(prof: Profile, corrupt) -> None:
    """MPIT records must name a variable of META "mpit" (and, full mode, a rank)."""
    if not len(prof.mpit):
        return
    nvars = len(prof.mpit_variables)
    key = "func" if prof.is_summary else "var"
    if int(prof.mpit[key].max()) >= nvars:
        raise corrupt(f"MPIT names variable {int(prof.mpit[key].max())}, META 'mpit' lists {nvars}")
    if prof.is_summary:
        if int(prof.mpit["metric"].max()) >= len(fmt.MPIT_METRICS):
            raise corrupt(f"MPIT names metric {int(prof.mpit['metric'].max())}")
    elif int(prof.mpit["rank"].max()) >= prof.nranks:
        raise corrupt(f"MPIT names rank {int(prof.mpit['rank'].max())} of {prof.nranks}")


def _check_timeline(prof: Profile, corrupt) -> None:
    """A TIMELINE section needs META "timeline" (bins, bin_seconds, rows) that matches it."""
    info = prof.meta.get("timeline")
    if not len(prof.timeline):
        return
    if not isinstance(info, dict):
        raise corrupt("TIMELINE section without a META 'timeline' object")
    bins, width, rows = info.get("bins"), info.get("bin_seconds"), info.get("rows")
    if not isinstance(bins, int) or isinstance(bins, bool) or not 1 <= bins <= 65535:
        raise corrupt(f"META 'timeline' bins is {bins!r}, not a number of bins (1 to 65535)")
    if not isinstance(width, (int, float)) or isinstance(width, bool) or not 0 < width < float("inf"):
        raise corrupt(f"META 'timeline' bin_seconds is {width!r}, not a positive number")
    if (not isinstance(rows, list) or not rows or len(rows) > 64
            or not all(isinstance(r, str) for r in rows) or len(set(rows)) != len(rows)):
        raise corrupt("META 'timeline' rows is not a list of 1 to 64 distinct names")
    for key in ("end_seconds", "clock_offset_max"):
        v = info.get(key, 0.0)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v < float("inf"):
            raise corrupt(f"META 'timeline' {key} is {v!r}, not a number of seconds")
    want = len(rows) * bins * (1 if prof.is_summary else prof.nranks)
    if len(prof.timeline) != want:
        raise corrupt(f"TIMELINE has {len(prof.timeline)} records, META 'timeline' says "
                      f"{len(rows)} rows x {bins} bins" + ("" if prof.is_summary else
                                                           f" x {prof.nranks} ranks"))
    if prof.is_summary:
        t = prof.timeline
        key = t["func"].astype(np.int64) * bins + t["metric"]
        if int(t["func"].max()) >= len(rows) or int(t["metric"].max()) >= bins or \
                len(np.unique(key)) != len(t):
            raise corrupt("TIMELINE records do not name each (row, bin) of META 'timeline' once")
        if int(t["min_rank"].max()) >= prof.nranks or int(t["max_rank"].max()) >= prof.nranks:
            raise corrupt(f"TIMELINE names a rank past {prof.nranks - 1}")
