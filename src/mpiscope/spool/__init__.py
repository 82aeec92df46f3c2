"""Read a snapshot spool directory into a partial :class:`Profile`.

The runtime writes snapshots (``MPISCOPE_SNAPSHOT``, the snapshot signal,
SIGTERM) into ``<program>.<job>.spool/``: ``meta.json`` (the job's META) and
``node<N>.snap`` files (one per node, one fixed-size slot per rank) or
``rank<R>.snap`` files. Each slot holds one chunk: a 128-byte header
(``format.SNAP_HEADER``) and the rank's records in the profile's own dtypes
(docs/profile-format.md "Snapshot spool"). A rank's newest valid chunk is its
answer; a torn chunk (the rank was writing it) is read again, and a rank
without a valid chunk did not answer.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

import numpy as np

from .. import format as fmt
from ..errors import UserError
from ..profile import Profile
from ..testing import index_ranks, module_records

_RECORDS = (("nfuncs", fmt.FUNC), ("nhist", fmt.HIST), ("npeers", fmt.PEER),
            ("nregions", fmt.REGION), ("ninflight", fmt.INFLIGHT))


def checksum(words: np.ndarray) -> int:
    """The chunk checksum: sum of u64 words w[i] x (2i + 1), mod 2^64."""
    weights = np.arange(len(words), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    with np.errstate(over="ignore"):
        return int(np.sum(words * weights, dtype=np.uint64))


def _chunk(data: bytes, nranks: int):
    """(header, RANK, NODE, records dict, region names, (CALLSITE records, their JSON), MEMBER
    records, communicator names) of one slot, or None if it holds no valid chunk."""
    if len(data) < fmt.SNAP_HEADER.itemsize or data[:8] != fmt.SPOOL_MAGIC:
        return None
    h = np.frombuffer(data, fmt.SNAP_HEADER, count=1)[0]
    n = int(h["chunk_bytes"])
    if (int(h["version"]) != 1 or int(h["header_bytes"]) != fmt.SNAP_HEADER.itemsize
            or n > len(data) or n % 8 or int(h["rank"]) >= nranks):
        return None
    words = np.frombuffer(data, np.uint64, count=n // 8).copy()
    words[3] = 0   # the checksum field itself
    if checksum(words) != int(h["checksum"]):
        return None
    off = fmt.SNAP_HEADER.itemsize
    rank = np.frombuffer(data, fmt.RANK, count=1, offset=off)
    off += fmt.RANK.itemsize
    node = np.frombuffer(data, fmt.NODE, count=1, offset=off)
    off += fmt.NODE.itemsize
    recs = {}
    for field, dtype in _RECORDS:
        count = int(h[field])
        if off + count * dtype.itemsize > n:
            return None
        recs[field] = np.frombuffer(data, dtype, count=count, offset=off)
        off += count * dtype.itemsize
    names, _ = _names(data, off, n, recs["nregions"]["region"])
    if names is None:
        return None
    # then the call sites (the region names area is padded to 8 bytes)
    off += int(h["names_bytes"])
    sites = _sites(data, off, int(h["ncallsites"]), int(h["callsite_bytes"]), n)
    if sites is None:
        return None
    # then the communicators the rank was in
    off += int(h["callsite_bytes"])
    count = int(h["nmembers"])
    if off + count * fmt.MEMBER.itemsize > n:
        return None
    members = np.frombuffer(data, fmt.MEMBER, count=count, offset=off)
    comm_names, _ = _names(data, off + count * fmt.MEMBER.itemsize, n, members["comm"])
    if comm_names is None:
        return None
    # then the timeline, last (snapshot.c; the names area is padded to 8 bytes too)
    off += count * fmt.MEMBER.itemsize + int(h["member_names_bytes"])
    bins, rows = int(h["tl_bins"]), int(h["tl_rows"])
    tl = None
    if bins and rows:
        if off + 8 * bins * rows > n or not float(h["tl_width"]) > 0:
            return None
        tl = np.frombuffer(data, np.float64, count=bins * rows, offset=off).reshape(rows, bins)
    recs["timeline"] = tl
    return h, rank, node, recs, names, sites, members, comm_names


def _sites(data: bytes, off: int, count: int, nbytes: int, end: int):
    """The call sites after a chunk's names: (CALLSITE records, their JSON), or None if
    they do not fit the chunk."""
    if nbytes == 0:
        return np.zeros(0, fmt.CALLSITE), {}
    rec_end = off + count * fmt.CALLSITE.itemsize
    if off + nbytes > end or rec_end + 4 > off + nbytes:
        return None
    recs = np.frombuffer(data, fmt.CALLSITE, count=count, offset=off)
    length = int.from_bytes(data[rec_end:rec_end + 4], "little")
    if rec_end + 4 + length > off + nbytes:
        return None
    try:
        doc = json.loads(data[rec_end + 4:rec_end + 4 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return recs, doc if isinstance(doc, dict) else {}


def _names(data: bytes, off: int, n: int, ids) -> tuple[dict | None, int]:
    """{id: name} of u32 length + UTF-8 bytes per id, from off; (None, off) if cut short."""
    names = {}
    for rid in ids:
        if off + 4 > n:
            return None, off
        length = int.from_bytes(data[off:off + 4], "little")
        if off + 4 + length > n:
            return None, off
        names[int(rid)] = data[off + 4:off + 4 + length].decode("utf-8", "replace")
        off += 4 + length
    return names, off


def _slots(path: Path, slot: int):
    """Every slot's bytes in one spool file (a slot is re-read while its checksum fails)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            for start in range(0, size, slot):
                yield f, start, os.pread(f.fileno(), slot, start)
    except OSError as err:
        raise UserError(f"{path}: cannot read: {err.strerror or err}") from None


def read_spool(path: str | os.PathLike, retries: int = 3) -> Profile:
    """The partial profile of the newest snapshot every rank wrote into the spool at ``path``.

    Raises:
        UserError: no meta.json, bad meta.json, or no rank has written a snapshot yet.
    """
    d = Path(path)
    try:
        meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        nranks = int(meta["nranks"])
        slot = int(meta["spool"]["slot_bytes"])
    except FileNotFoundError:
        raise UserError(f"{d}: not a snapshot spool (no meta.json)") from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UserError(f"{d}: bad snapshot spool meta.json ({err})") from None
    if nranks < 1 or slot < fmt.SNAP_HEADER.itemsize:
        raise UserError(f"{d}: bad snapshot spool meta.json (nranks {nranks}, slot {slot})")

    best: dict[int, tuple] = {}
    for file in sorted(d.glob("*.snap")):
        for f, start, data in _slots(file, slot):
            got = _chunk(data, nranks)
            for _ in range(retries):
                if got is not None or data[:8] != fmt.SPOOL_MAGIC:
                    break
                time.sleep(0.05)         # torn: the rank is writing this slot now
                data = os.pread(f.fileno(), slot, start)
                got = _chunk(data, nranks)
            if got is None:
                continue
            r = int(got[0]["rank"])
            if r not in best or int(got[0]["seq"]) > int(best[r][0]["seq"]):
                best[r] = got
    if not best:
        raise UserError(f"{d}: no rank has written a snapshot yet")
    return _assemble(str(d), meta, nranks, best)


def _assemble(name: str, meta: dict, nranks: int, best: dict[int, tuple]) -> Profile:
    answered = sorted(best)
    ranks = np.zeros(nranks, fmt.RANK)
    ranks["rank"] = np.arange(nranks)
    ranks["node"] = np.arange(nranks)       # a rank that did not answer: its own node
    parts: dict[str, list] = {field: [] for field, _ in _RECORDS}
    nodes: dict[int, np.ndarray] = {}
    names: dict[int, str] = {}
    site_parts, site_defs, modules, site_meta = [], {}, {}, None
    members, comms = [], {}
    for r in answered:
        h, rank, node, recs, rnames, (srecs, sdoc), rmembers, cnames = best[r]
        ranks[r] = rank[0]
        nodes.setdefault(int(node[0]["node"]), node)
        for field, _ in _RECORDS:
            parts[field].append(recs[field])
        names.update(rnames)
        site_parts.append(srecs)
        cs = sdoc.get("callsites")
        if isinstance(cs, dict):
            site_meta = site_meta or {k: v for k, v in cs.items() if k != "sites"}
            if isinstance(cs.get("sites"), dict):
                site_defs.update(cs["sites"])
        for m in sdoc.get("modules") or ():
            if isinstance(m, dict) and isinstance(m.get("key"), str):
                modules.setdefault(m["key"], m)
        members.append(rmembers)
        for m in rmembers:     # the lowest answering rank's name and size, as at MPI_Finalize
            comms.setdefault(f"{int(m['comm']):016x}", {"name": cnames[int(m["comm"])],
                                                        "size": int(m["size"]) or None})
    cat = {field: (np.concatenate(parts[field]) if parts[field] else np.zeros(0, dtype))
           for field, dtype in _RECORDS}
    grouped = index_ranks(ranks, {fmt.SEC_FUNCS: cat["nfuncs"], fmt.SEC_HIST: cat["nhist"],
                                  fmt.SEC_PEERS: cat["npeers"], fmt.SEC_REGIONS: cat["nregions"]})
    heads = [best[r][0] for r in answered]
    times = [float(h["time"]) for h in heads]
    truncated = [int(h["rank"]) for h in heads if int(h["flags"]) & fmt.SNAP_TRUNCATED]
    reasons = sorted({fmt.SNAP_REASONS.get(int(h["reason"]), "unknown") for h in heads})
    missing = sorted(set(range(nranks)) - set(answered))
    # A rank that did not answer: its node is not known, unless one node alone is short of
    # ranks by exactly as many as did not answer (a one-node job always is).
    unknown_node = list(missing)
    have = Counter(int(ranks["node"][r]) for r in answered)
    short = {node: int(rec[0]["nranks"]) - have[node] for node, rec in nodes.items()
             if int(rec[0]["nranks"]) > have[node]}
    if missing and len(short) == 1 and sum(short.values()) == len(missing):
        ranks["node"][missing] = next(iter(short))
        unknown_node = []
    meta = dict(meta)
    meta["regions"] = {f"{rid:016x}": n for rid, n in names.items()}
    callsites = np.concatenate(site_parts) if site_parts else np.zeros(0, fmt.CALLSITE)
    if site_meta is not None:
        meta["callsites"] = {**site_meta, "sites": site_defs}
    if comms:
        meta["communicators"] = {**comms, **(meta.get("communicators") or {})}
    meta["snapshot"] = {
        "spool": name, "time": max(times), "time_first": min(times), "reasons": reasons,
        "answered": len(answered), "nranks": nranks,
        "missing": missing[:1000], "missing_count": len(missing),
        "node_unknown_count": len(unknown_node),
        "truncated": truncated[:1000],
        "seq": {"min": min(int(h["seq"]) for h in heads), "max": max(int(h["seq"]) for h in heads)},
    }
    flags = fmt.FLAG_PARTIAL
    if truncated or np.any(ranks["overflow"]):
        flags |= fmt.FLAG_OVERFLOW
    if (meta.get("settings") or {}).get("MPISCOPE_SYNC") == 1:
        flags |= fmt.FLAG_SYNC
    start = float(best[0][0]["start_time"]) if 0 in best else min(float(h["start_time"]) for h in heads)
    inflight = cat["ninflight"]
    if len(inflight) > 1:
        inflight = inflight[np.argsort(inflight["rank"], kind="stable")]
    timeline = _timeline(meta, nranks, best, ranks["wall"])
    return Profile(path=name, meta=meta, nranks=nranks, mode="full", flags=flags, start_time=start,
                   ranks=ranks, funcs=grouped[fmt.SEC_FUNCS], hist=grouped[fmt.SEC_HIST],
                   peers=grouped[fmt.SEC_PEERS], regions=grouped[fmt.SEC_REGIONS],
                   nodes=np.concatenate(list(nodes.values())) if nodes else np.zeros(0, fmt.NODE),
                   inflight=inflight, timeline=timeline, callsites=callsites,
                   modules=_modules(modules.values()),
                   members=np.concatenate(members) if members else np.zeros(0, fmt.MEMBER))


def _timeline(meta: dict, nranks: int, best: dict[int, tuple], wall: np.ndarray) -> np.ndarray:
    """The answering ranks' timelines on one grid (the widest rank's bins), as the runtime
    puts them at MPI_Finalize; sets META "timeline". Empty when no chunk has one."""
    rows = (meta.get("spool") or {}).get("timeline_rows")
    got = {r: (b[3]["timeline"], float(b[0]["tl_width"])) for r, b in best.items()
           if b[3].get("timeline") is not None}
    if not got or not isinstance(rows, list) or any(t.shape[0] != len(rows) for t, _ in got.values()):
        return np.zeros(0, fmt.TIMELINE)
    width = max(w for _, w in got.values())
    end = float(max(wall[r] for r in got))
    nb = int(min(max(1, np.ceil(end / width - 1e-9)), max(t.shape[1] for t, _ in got.values())))
    nb = max(nb, 1)
    kinds = [i for i, name in enumerate(rows[:-1])
             if any(np.any(t[i] != 0) for t, _ in got.values())]
    out_rows = [rows[i] for i in kinds] + ["compute", "bytes"]
    values = np.zeros((nranks, len(out_rows), nb))
    for r, (t, w) in got.items():
        grid = regrid(t[kinds + [len(rows) - 1]], w, nb, width)
        mpi = grid[:-1].sum(axis=0)
        covered = np.clip(np.minimum((np.arange(nb) + 1) * width, wall[r]) - np.arange(nb) * width,
                          0, None)
        values[r, :len(kinds)] = grid[:-1]
        values[r, -2] = np.clip(covered - mpi, 0, None)
        values[r, -1] = grid[-1]
    from ..testing import timeline_meta
    meta["timeline"] = timeline_meta(out_rows, nb, width, end_seconds=end,
                                     max_bins=max(t.shape[1] for t, _ in got.values()))
    meta["timeline"]["clock_origin"] = "barrier at MPI_Init (snapshot: each rank's bins so far)"
    return values.ravel()


def regrid(src: np.ndarray, w: float, nb: int, width: float) -> np.ndarray:
    """Rows of bins of width w put on nb bins of width >= w as the runtime does
    (timeline.c): 2^k bins into one when the widths are 2^k apart to within 0.1 %, else
    spread in proportion to overlap; the sum of each row is kept."""
    n = src.shape[1]
    a = np.arange(n) * w
    k = 0
    while k < 62 and 2.0 ** (k + 1) <= width / w * 1.001:
        k += 1
    if width / w <= 2.0 ** k * 1.001:  # 2^k bins into one, exactly
        j, split = np.minimum(np.arange(n) >> k, nb - 1), np.ones(n)
    else:
        j = np.minimum((a / width).astype(np.int64), nb - 1)
        split = np.where(((a + w) > (j + 1) * width) & (j + 1 < nb),
                         np.clip(((j + 1) * width - a) / w, 0.0, 1.0), 1.0)
    out = np.zeros((src.shape[0], nb))
    for k in range(src.shape[0]):
        np.add.at(out[k], j, src[k] * split)
        np.add.at(out[k], np.minimum(j + 1, nb - 1), src[k] * (1.0 - split))
    return out


def _modules(docs) -> np.ndarray:
    """MODULE records from a snapshot's JSON modules (malformed ones left out)."""
    rows = []
    for m in docs:
        try:
            rows.append({"key": int(m["key"], 16), "path": str(m["path"]), "kind": int(m["kind"]),
                         "build_id": bytes.fromhex(str(m.get("build_id", ""))[:80]),
                         "file_size": int(m.get("file_size", 0)),
                         "mtime": float(m.get("mtime", 0.0))})
        except (KeyError, TypeError, ValueError):
            continue
    return module_records(rows)
