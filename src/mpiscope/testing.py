"""A pure-Python writer of profile format v1, for tests and synthetic benchmarks.

The runtime (C) writes real profiles; this module writes byte-identical layouts
from numpy arrays so the reader and the report can be tested without MPI,
Hatchet-style: tiny profiles built inline with exact expected numbers.

    funcs = records(fmt.FUNC, [dict(rank=0, func=0, calls=3, time=1.5), ...])
    write_profile(path, nranks=2, functions=["MPI_Send"], ranks=..., funcs=funcs)

Records of the per-rank sections may be given in any order: ``write_profile``
sorts them by rank (stably) and fills each rank's ``*_first`` / ``*_count``
index fields, as the runtime's MPI_Exscan does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from . import format as fmt

# Section kind -> (RANK field prefix, records grouped by rank?)
_PER_RANK = {fmt.SEC_FUNCS: "func", fmt.SEC_HIST: "hist", fmt.SEC_PEERS: "peer",
             fmt.SEC_REGIONS: "region"}


def records(dtype: np.dtype, rows: list[dict]) -> np.ndarray:
    """A structured array of ``dtype`` from a list of dicts; missing fields are 0."""
    out = np.zeros(len(rows), dtype)
    for i, row in enumerate(rows):
        for name, value in row.items():
            out[name][i] = value
    return out


def default_meta(functions: list[str], function_kinds: list[str] | None = None,
                 regions: list[str] | None = None, **extra) -> dict:
    """A META object with every documented key; ``extra`` overrides or adds keys."""
    meta = {
        "program": "/synthetic/app",
        "argv": ["/synthetic/app"],
        "mpi_library": "synthetic",
        "mpi_version": [3, 1],
        "job_id": "0",
        "hostname": "localhost",
        "functions": list(functions),
        "function_kinds": list(function_kinds or ["other"] * len(functions)),
        "regions": {f"{fmt.fnv1a64(r):016x}": r for r in (regions or [])},
        "settings": {},
        "clock": "synthetic",
        "runtime_version": "synthetic",
    }
    meta.update(extra)
    return meta


def index_ranks(ranks: np.ndarray, sections: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Sort each per-rank section by rank and fill ``ranks``' first/count fields in place.

    Arguments:
        ranks: fmt.RANK records, record r is rank r.
        sections: section kind -> records with a ``rank`` field.
    Returns:
        the same mapping with every per-rank section sorted by rank (stable).
    """
    nranks = len(ranks)
    out = dict(sections)
    for kind, prefix in _PER_RANK.items():
        recs = sections.get(kind)
        if recs is None:
            recs = np.zeros(0, fmt.SECTION_DTYPES[kind])
        if len(recs) > 1 and np.any(recs["rank"][1:] < recs["rank"][:-1]):
            recs = recs[np.argsort(recs["rank"], kind="stable")]
        counts = np.bincount(recs["rank"], minlength=nranks)[:nranks] if len(recs) else \
            np.zeros(nranks, np.int64)
        first = np.concatenate(([0], np.cumsum(counts)[:-1])) if nranks else counts
        ranks[f"{prefix}_first"] = first
        ranks[f"{prefix}_count"] = counts
        out[kind] = recs
    return out


def _layout(sections: dict[int, bytes | np.ndarray]) -> tuple[np.ndarray, int]:
    """Section table for ``sections`` laid out in order, each at a multiple of 8; and file size."""
    table = np.zeros(len(sections), fmt.SECTION)
    offset = fmt.HEADER.itemsize + fmt.SECTION.itemsize * len(sections)
    for i, (kind, data) in enumerate(sections.items()):
        offset += -offset % 8
        count = len(data)
        nbytes = data.nbytes if isinstance(data, np.ndarray) else len(data)
        table[i] = (kind, 1, offset, nbytes, count)
        offset += nbytes
    return table, offset


def write_sections(f, sections: dict[int, bytes | np.ndarray], *, nranks: int,
                   mode: int = fmt.MODE_FULL, flags: int = 0, start_time: float = 0.0,
                   version: int = fmt.FORMAT_VERSION) -> int:
    """Write a profile to the binary file object ``f``; return its size in bytes.

    Arguments:
        sections: kind -> record array (or raw bytes for META / unknown kinds),
            written in this order. Arrays are streamed, never copied whole.
    """
    table, file_bytes = _layout(sections)
    header = np.zeros(1, fmt.HEADER)
    header[0] = (fmt.MAGIC, version, fmt.HEADER.itemsize, mode, flags, nranks, len(sections),
                 fmt.SECTION.itemsize, fmt.HEADER.itemsize, start_time, file_bytes)
    f.write(header.tobytes())
    f.write(table.tobytes())
    pos = fmt.HEADER.itemsize + table.nbytes
    for entry, data in zip(table, sections.values()):
        f.write(b"\0" * (int(entry["offset"]) - pos))
        if isinstance(data, np.ndarray):
            f.write(np.ascontiguousarray(data).view(np.uint8).data)
        else:
            f.write(data)
        pos = int(entry["offset"] + entry["length"])
    return file_bytes


def encode(sections: dict[int, bytes | np.ndarray], **kwargs) -> bytes:
    """The bytes of a profile (small profiles; see :func:`write_sections`)."""
    import io
    buf = io.BytesIO()
    write_sections(buf, sections, **kwargs)
    return buf.getvalue()


def write_profile(path: str | os.PathLike, *, nranks: int, meta: dict | None = None,
                  functions: list[str] | None = None, function_kinds: list[str] | None = None,
                  region_names: list[str] | None = None, mode: str = "full", flags: int = 0,
                  start_time: float = 0.0, ranks: np.ndarray | None = None,
                  funcs: np.ndarray | None = None, hist: np.ndarray | None = None,
                  peers: np.ndarray | None = None, regions: np.ndarray | None = None,
                  nodes: np.ndarray | None = None, summary: np.ndarray | None = None) -> Path:
    """Write a format-v1 profile as the runtime would, and return its path.

    Full mode: ``ranks`` defaults to nranks zeroed records (rank field filled);
    node fields are left as given. Summary mode writes META, HIST and SUMMARY.
    """
    if meta is None:
        meta = default_meta(functions or [], function_kinds, region_names)
    meta_bytes = json.dumps(meta).encode()
    sections: dict[int, bytes | np.ndarray] = {fmt.SEC_META: meta_bytes}
    if mode == "full":
        if ranks is None:
            ranks = np.zeros(nranks, fmt.RANK)
            ranks["rank"] = np.arange(nranks)
        ranks = ranks.copy()
        grouped = index_ranks(ranks, {fmt.SEC_FUNCS: funcs, fmt.SEC_HIST: hist,
                                      fmt.SEC_PEERS: peers, fmt.SEC_REGIONS: regions})
        sections[fmt.SEC_RANKS] = ranks
        sections.update(grouped)
        sections[fmt.SEC_NODES] = nodes if nodes is not None else np.zeros(0, fmt.NODE)
        mode_id = fmt.MODE_FULL
    elif mode == "summary":
        sections[fmt.SEC_HIST] = hist if hist is not None else np.zeros(0, fmt.HIST)
        sections[fmt.SEC_SUMMARY] = summary if summary is not None else np.zeros(0, fmt.SUMMARY)
        mode_id = fmt.MODE_SUMMARY
    else:
        raise ValueError(f"mode must be 'full' or 'summary', not {mode!r}")
    path = Path(path)
    with open(path, "wb") as f:
        write_sections(f, sections, nranks=nranks, mode=mode_id, flags=flags,
                       start_time=start_time)
    return path
