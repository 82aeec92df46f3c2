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
        # the layout version of the dtype written (ENV: 1 or 2, fmt.SECTION_VERSIONS)
        version = next((v for v, dt in fmt.SECTION_VERSIONS.get(kind, {}).items()
                        if isinstance(data, np.ndarray) and dt == data.dtype), 1)
        table[i] = (kind, version, offset, nbytes, count)
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
                  nodes: np.ndarray | None = None, summary: np.ndarray | None = None,
                  env: np.ndarray | None = None, timeline: np.ndarray | None = None,
                  callsites: np.ndarray | None = None, modules: np.ndarray | None = None) -> Path:
    """Write a format-v1 profile as the runtime would, and return its path.

    Full mode: ``ranks`` defaults to nranks zeroed records (rank field filled);
    node fields are left as given. Summary mode writes META, HIST and SUMMARY.
    ``timeline``: the TIMELINE section (float64 [nranks, rows, bins] in full mode, SUMMARY
    records in summary mode; see :func:`timeline_meta` and :func:`summarize_timeline`),
    with META "timeline" describing it.
    ``callsites`` (fmt.CALLSITE records in full mode, fmt.SUMMARY records in
    summary mode) and ``modules`` (fmt.MODULE) add CALLSITES and MODULES; META
    "callsites" must then name the sites (:func:`callsites_meta`).
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
        if env is not None:
            sections[fmt.SEC_ENV] = env
        if timeline is not None:
            sections[fmt.SEC_TIMELINE] = np.ascontiguousarray(timeline, fmt.TIMELINE).ravel()
        if callsites is not None and len(callsites) > 1 and \
                np.any(callsites["rank"][1:] < callsites["rank"][:-1]):
            callsites = callsites[np.argsort(callsites["rank"], kind="stable")]
        mode_id = fmt.MODE_FULL
    elif mode == "summary":
        sections[fmt.SEC_HIST] = hist if hist is not None else np.zeros(0, fmt.HIST)
        sections[fmt.SEC_SUMMARY] = summary if summary is not None else np.zeros(0, fmt.SUMMARY)
        if timeline is not None:
            sections[fmt.SEC_TIMELINE] = timeline
        mode_id = fmt.MODE_SUMMARY
    else:
        raise ValueError(f"mode must be 'full' or 'summary', not {mode!r}")
    if callsites is not None:
        sections[fmt.SEC_CALLSITES] = callsites
        sections[fmt.SEC_MODULES] = modules if modules is not None else np.zeros(0, fmt.MODULE)
    path = Path(path)
    with open(path, "wb") as f:
        write_sections(f, sections, nranks=nranks, mode=mode_id, flags=flags,
                       start_time=start_time)
    return path


# ---------------------------------------------------------------------------
# Summary mode and synthetic profiles


def _summary_record(func: int, metric: int, region: int, values: np.ndarray) -> tuple:
    imin, imax = int(np.argmin(values)), int(np.argmax(values))
    return (func, metric, 0, region, float(values[imin]), float(values[imax]),
            float(values.sum()), imin, imax, int(np.count_nonzero(values)))


def summarize(ranks: np.ndarray, funcs: np.ndarray, hist: np.ndarray,
              env: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """What the runtime's summary mode writes for these full-mode arrays.

    Returns:
        (SUMMARY records, HIST records summed over ranks with rank = ALL_RANKS).
        min/max over all ranks (a rank without a key counts 0), ties to the
        lowest rank, as MPI_MINLOC / MPI_MAXLOC.
    """
    nranks = len(ranks)
    rows = []
    for m, name in enumerate(fmt.RANK_METRICS):
        vals = (ranks["wall"] - ranks["mpi"]) if name == "compute" else \
            ranks[name].astype(np.float64)
        rows.append(_summary_record(fmt.SUMMARY_RANK_LEVEL, m, 0, vals))
    if env is not None:  # the ENV values, rank metrics after RANK_METRICS (as the runtime)
        from .report.environment import env_values
        values = env_values(_EnvOnly(env))
        for m, name in enumerate(fmt.ENV_METRICS, start=len(fmt.RANK_METRICS)):
            rows.append(_summary_record(fmt.SUMMARY_RANK_LEVEL, m, 0, values[name]))
    keys = np.unique(np.stack([funcs["func"].astype(np.uint64), funcs["region"]], axis=1),
                     axis=0) if len(funcs) else np.zeros((0, 2), np.uint64)
    for f, reg in keys.tolist():
        sel = funcs[(funcs["func"] == f) & (funcs["region"] == reg)]
        for m, name in enumerate(fmt.FUNC_METRICS):
            vals = np.bincount(sel["rank"], weights=sel[name].astype(np.float64),
                               minlength=nranks)
            rows.append(_summary_record(f, m, reg, vals))
    summary = np.array(rows, dtype=fmt.SUMMARY)
    if len(hist):
        hkeys, inv = np.unique(np.stack([hist["func"].astype(np.uint64), hist["region"],
                                         hist["bucket"].astype(np.uint64)], axis=1),
                               axis=0, return_inverse=True)
        inv = inv.ravel()
        hsum = np.zeros(len(hkeys), fmt.HIST)
        hsum["rank"] = fmt.ALL_RANKS
        hsum["func"], hsum["region"], hsum["bucket"] = hkeys[:, 0], hkeys[:, 1], hkeys[:, 2]
        hsum["count"] = np.bincount(inv, weights=hist["count"].astype(np.float64))
        hsum["time"] = np.bincount(inv, weights=hist["time"])
    else:
        hsum = np.zeros(0, fmt.HIST)
    return summary, hsum


def timeline_meta(rows: list[str], bins: int, bin_seconds: float, end_seconds: float | None = None,
                  clock_offset_max: float = 0.0, max_bins: int | None = None) -> dict:
    """META "timeline" as the runtime writes it."""
    return {"bins": bins, "bin_seconds": bin_seconds, "max_bins": max_bins or bins,
            "end_seconds": bins * bin_seconds if end_seconds is None else end_seconds,
            "clock_offset_max": clock_offset_max, "clock_origin": "barrier at MPI_Init",
            "rows": list(rows)}


def summary_rows(rows: list[str]) -> list[str]:
    """The rows of a summary-mode timeline made from full-mode ``rows``: "mpi" before
    "compute" (the runtime reduces the per-rank MPI time too, for its minPE/maxPE)."""
    kinds = [r for r in rows if r not in fmt.TIMELINE_DERIVED]
    return kinds + ["mpi"] + [r for r in rows if r in ("compute", "bytes")]


def summarize_timeline(values: np.ndarray, rows: list[str]) -> np.ndarray:
    """What the runtime's summary mode writes for a full-mode timeline ``values``
    [nranks, rows, bins]: one SUMMARY record per (row of :func:`summary_rows`, bin);
    min/max ties go to the lowest rank (MPI_MINLOC / MPI_MAXLOC)."""
    kinds = [rows.index(r) for r in rows if r not in fmt.TIMELINE_DERIVED]
    by_name = {r: values[:, i, :] for i, r in enumerate(rows)}
    by_name["mpi"] = values[:, kinds, :].sum(axis=1) if kinds else np.zeros(values[:, 0, :].shape)
    out_rows = summary_rows(rows)
    nb = values.shape[2]
    out = np.zeros(len(out_rows) * nb, fmt.SUMMARY)
    for i, name in enumerate(out_rows):
        v = by_name[name]
        sl = slice(i * nb, (i + 1) * nb)
        out["func"][sl], out["metric"][sl] = i, np.arange(nb)
        out["min"][sl], out["max"][sl], out["sum"][sl] = v.min(axis=0), v.max(axis=0), v.sum(axis=0)
        out["min_rank"][sl], out["max_rank"][sl] = v.argmin(axis=0), v.argmax(axis=0)
        out["nonzero"][sl] = np.count_nonzero(v, axis=0)
    return out


def module_records(rows: list[dict]) -> np.ndarray:
    """fmt.MODULE records from dicts with key, path, kind (default ELF), build_id (bytes),
    file_size and mtime (default 0)."""
    out = np.zeros(len(rows), fmt.MODULE)
    for i, r in enumerate(rows):
        path = r["path"].encode() if isinstance(r["path"], str) else r["path"]
        path = path[:fmt.MODULE_PATH - 1]
        bid = r.get("build_id", b"")[:40]
        out[i]["file_size"], out[i]["mtime"] = r.get("file_size", 0), r.get("mtime", 0.0)
        out[i]["key"], out[i]["kind"] = r["key"], r.get("kind", fmt.MODULE_ELF)
        out[i]["path"], out[i]["path_len"] = path, len(path)
        out[i]["build_id_len"] = len(bid)
        out[i]["build_id"][:len(bid)] = np.frombuffer(bid, np.uint8)
    return out


def callsites_meta(sites: dict[int, tuple[int, list[tuple[int, int]]]], depth: int = 1) -> dict:
    """META "callsites" for site id -> (function index, [(module key, offset), ...])."""
    return {"depth": depth, "max_callsites": 1024,
            "sites": {f"{sid:016x}": {"function": f, "frames": [[f"{m:016x}", o] for m, o in fr]}
                      for sid, (f, fr) in sites.items()}}


def summarize_callsites(callsites: np.ndarray, nranks: int) -> np.ndarray:
    """What the runtime's summary mode writes in CALLSITES for these full-mode records:
    per (site, function) the four function metrics (sum, min/max over all ranks with
    MINLOC/MAXLOC ties to the lowest rank, non-zero ranks), the fastest and slowest call
    with their ranks, and per (site, bucket) the calls and time summed."""
    tot = callsites[callsites["bucket"] == fmt.SITE_TOTAL]
    rows = []
    keys = np.unique(np.stack([tot["site"], tot["func"].astype(np.uint64)], axis=1), axis=0) \
        if len(tot) else np.zeros((0, 2), np.uint64)
    for site, f in keys.tolist():
        sel = tot[(tot["site"] == site) & (tot["func"] == f)]
        for m, name in enumerate(fmt.FUNC_METRICS):
            vals = np.bincount(sel["rank"], weights=sel[name].astype(np.float64), minlength=nranks)
            rows.append(_summary_record(f, m, site, vals))
        i = int(np.argmin(sel["time_min"]))
        rows.append((f, 4, 0, site, float(sel["time_min"][i]), 0.0, 0.0, int(sel["rank"][i]), 0, 0))
        i = int(np.argmax(sel["time_max"]))
        rows.append((f, 5, 0, site, 0.0, float(sel["time_max"][i]), 0.0, 0, int(sel["rank"][i]), 0))
    buckets = callsites[callsites["bucket"] != fmt.SITE_TOTAL]
    if len(buckets):
        bkeys, inv = np.unique(np.stack([buckets["site"], buckets["func"].astype(np.uint64),
                                         buckets["bucket"].astype(np.uint64)], axis=1),
                               axis=0, return_inverse=True)
        inv = inv.ravel()
        count = np.bincount(inv, weights=buckets["calls"].astype(np.float64))
        time = np.bincount(inv, weights=buckets["time"])
        for (site, f, b), n, t in zip(bkeys.tolist(), count, time):
            rows.append((f, fmt.SITE_BUCKET_CALLS + b, 0, site, 0.0, 0.0, float(n), 0, 0, 0))
            rows.append((f, fmt.SITE_BUCKET_TIME + b, 0, site, 0.0, 0.0, float(t), 0, 0, 0))
    return np.array(rows, dtype=fmt.SUMMARY) if rows else np.zeros(0, fmt.SUMMARY)


class _EnvOnly:
    """Just enough of a Profile for report.environment.env_values."""

    def __init__(self, env: np.ndarray):
        self.env = env


SYNTHETIC_FUNCTIONS = ["MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Bcast",
                       "MPI_Barrier"]
SYNTHETIC_KINDS = ["p2p", "p2p", "wait", "coll", "coll", "coll"]
SYNTHETIC_REGIONS = ["solve", "halo"]  # halo is nested in solve


def _grid(nranks: int) -> tuple[int, int]:
    px = int(np.sqrt(nranks))
    while nranks % px:
        px -= 1
    return px, nranks // px


def synthetic(nranks: int, *, ppn: int = 64, steps: int = 100, halo_bytes: int = 8192,
              hot_rank: int | None = None, seed: int = 1, with_env: bool = False,
              with_sites: bool = False) -> dict:
    """Arrays of a realistic full-mode profile: a 2-D 5-point stencil on nranks ranks.

    Each step: Irecv + Isend to the up-to-4 grid neighbours and a Waitall (in
    region "halo", nested in "solve"), one 8-byte Allreduce (in "solve"); one
    Bcast and one Barrier outside regions. ``ppn`` consecutive ranks share a
    node; ``hot_rank`` (default nranks // 3) computes 3x longer, so its
    neighbours wait. Built with vectorized numpy: 1,048,576 ranks take seconds.

    ``with_env``: also ENV records (each rank bound to core rank % ppn of its node, one
    thread, one variable set) and META "environment".

    ``with_sites``: also call sites (key "sites": per site its function, size bucket and
    per-rank calls, bytes and time, see :func:`site_records`), MODULES (one executable,
    not on disk) and META "callsites": Isend and Irecv each from an x and a y line,
    Allreduce from a dot product (90 % of its time) and a norm, one line for each other
    function.

    Returns:
        dict with keys nranks, ranks, funcs, hist, peers, regions, nodes, meta (and env).
    """
    rng = np.random.default_rng(seed)
    n = nranks
    hot = n // 3 if hot_rank is None else hot_rank
    r = np.arange(n, dtype=np.int64)
    px, py = _grid(n)
    x, y = r % px, r // px
    # Peers: (n, 4) neighbour matrix, -1 where the grid ends (non-periodic).
    nbr = np.stack([np.where(x > 0, r - 1, -1), np.where(x < px - 1, r + 1, -1),
                    np.where(y > 0, r - px, -1), np.where(y < py - 1, r + px, -1)], axis=1)
    valid = nbr >= 0
    npeer = valid.sum(axis=1)
    peers = np.zeros(int(npeer.sum()), fmt.PEER)
    peers["rank"] = np.repeat(r, npeer)
    peers["peer"] = nbr[valid]
    peers["msgs"] = steps
    peers["bytes"] = steps * halo_bytes
    node = (r // ppn) * ppn

    compute = 10.0 + rng.random(n) * 0.05
    compute[hot] *= 3.0
    t_wait = (compute.max() - compute) * 0.9 + rng.random(n) * 0.01
    t_isend = steps * npeer * 2e-6 * (1 + rng.random(n) * 0.1)
    t_irecv = steps * npeer * 1e-6 * (1 + rng.random(n) * 0.1)
    t_allred = (compute.max() - compute) * 0.1 + steps * 5e-6 + rng.random(n) * 1e-3
    t_bcast = 1e-4 + rng.random(n) * 1e-4
    t_barrier = 1e-4 + rng.random(n) * 1e-4
    halo, solve = (fmt.fnv1a64(s) for s in ("halo", "solve"))
    # (func, region, calls, bytes_sent, bytes_recv, time) per rank, 6 records each.
    per_func = [
        (0, halo, steps * npeer, steps * npeer * halo_bytes, 0, t_isend),
        (1, halo, steps * npeer, 0, steps * npeer * halo_bytes, t_irecv),
        (2, halo, np.full(n, steps), 0, 0, t_wait),
        (3, solve, np.full(n, steps), steps * 8, steps * 8, t_allred),
        (4, 0, np.ones(n, np.int64), np.where(r == 0, 4096, 0), 4096, t_bcast),
        (5, 0, np.ones(n, np.int64), 0, 0, t_barrier),
    ]
    nf = len(per_func)
    funcs = np.zeros(n * nf, fmt.FUNC)
    view = funcs.reshape(n, nf)
    for j, (f, reg, calls, sent, recv, t) in enumerate(per_func):
        col = view[:, j]
        col["rank"], col["func"], col["region"] = r, f, reg
        col["calls"], col["bytes_sent"], col["bytes_recv"], col["time"] = calls, sent, recv, t
        col["time_min"] = t / np.maximum(calls, 1) * 0.5
        col["time_max"] = t / np.maximum(calls, 1) * 4.0
    hb = fmt.size_bucket(halo_bytes)
    per_hist = [(0, halo, hb, steps * npeer, t_isend), (1, halo, hb, steps * npeer, t_irecv),
                (3, solve, fmt.size_bucket(8), np.full(n, steps), t_allred),
                (4, 0, fmt.size_bucket(4096), np.ones(n, np.int64), t_bcast)]
    hist = np.zeros(n * len(per_hist), fmt.HIST)
    hview = hist.reshape(n, len(per_hist))
    for j, (f, reg, b, count, t) in enumerate(per_hist):
        col = hview[:, j]
        col["rank"], col["func"], col["region"], col["bucket"] = r, f, reg, b
        col["count"], col["time"] = count, t
    mpi = sum(p[5] for p in per_func)
    wall = compute + mpi
    regions = np.zeros(n * 2, fmt.REGION)
    rview = regions.reshape(n, 2)
    rview[:, 0]["region"], rview[:, 0]["depth"], rview[:, 0]["parent"] = solve, 1, 0
    rview[:, 1]["region"], rview[:, 1]["depth"], rview[:, 1]["parent"] = halo, 2, solve
    rview[:, 0]["wall"] = compute + t_isend + t_irecv + t_wait + t_allred
    rview[:, 1]["wall"] = t_isend + t_irecv + t_wait + compute * 0.05
    for k in range(2):
        rview[:, k]["rank"] = r
        rview[:, k]["entries"] = steps
    ranks = np.zeros(n, fmt.RANK)
    ranks["rank"], ranks["node"] = r, node
    ranks["wall"], ranks["mpi"], ranks["wait"] = wall, mpi, t_wait
    on = node[peers["rank"]] == node[peers["peer"]]
    for side, mask in (("on_node", on), ("off_node", ~on)):
        ranks[f"{side}_msgs"] = np.bincount(peers["rank"][mask], weights=peers["msgs"][mask],
                                            minlength=n)
        ranks[f"{side}_bytes"] = np.bincount(peers["rank"][mask], weights=peers["bytes"][mask],
                                             minlength=n)
    ranks["threads"] = 1
    nnodes = -(-n // ppn)
    nodes = np.zeros(nnodes, fmt.NODE)
    nodes["node"] = np.arange(nnodes) * ppn
    nodes["nranks"] = np.minimum(ppn, n - np.arange(nnodes) * ppn)
    nodes["hostname"] = np.char.add(b"nid", np.char.zfill(
        np.arange(nnodes).astype("S8"), 5))
    meta = default_meta(SYNTHETIC_FUNCTIONS, SYNTHETIC_KINDS, SYNTHETIC_REGIONS,
                        program="/synthetic/stencil2d", argv=["/synthetic/stencil2d",
                                                              f"{px}x{py}"])
    out = {"nranks": n, "ranks": ranks, "funcs": funcs, "hist": hist, "peers": peers,
           "regions": regions, "nodes": nodes, "meta": meta}
    if with_env:
        variables = {"OMP_NUM_THREADS": "1", "OMPI_MCA_btl": "self,vader,tcp"}
        vtext = "".join(f"{k}={v}\n" for k, v in sorted(variables.items()))
        cpu_ids = np.array([fmt.fnv1a64(str(c)) for c in range(ppn)], np.uint64)
        env = np.zeros(n, fmt.ENV)
        env["rank"], env["cpus"], env["vars"] = r, cpu_ids[r % ppn], fmt.fnv1a64(vtext)
        env["init"] = 0.5 + rng.random(n) * 0.1
        env["init_own"] = 0.01
        env["finalize"] = rng.random(n) * 1e-3
        env["cpu_time"] = wall
        env["ncpus"], env["threads"], env["load"], env["node_cpus"] = 1, 1, 1.0, ppn
        env["overlap_rank"] = fmt.ENV_NO_RANK
        meta["environment"] = {"cpus": {f"{int(i):016x}": str(c) for c, i in enumerate(cpu_ids)},
                               "variables": {f"{fmt.fnv1a64(vtext):016x}": variables}}
        out["env"] = env
    if with_sites:
        out.update(_synthetic_sites(n, steps, halo_bytes, valid, per_func))
        meta["callsites"] = callsites_meta(
            {sid: (f, [(SYNTHETIC_EXE_KEY, off)]) for sid, f, off, *_ in out["sites"]})
    return out


def synthetic_timeline(s: dict, bins: int = 256, mode: str = "full") -> tuple[np.ndarray, dict]:
    """A timeline for :func:`synthetic`'s arrays: each rank's time of each function kind,
    its time outside MPI and its bytes spread evenly over its run (bins of the longest
    rank's wall / ``bins``), as the runtime would record a run without phases.

    Returns:
        (TIMELINE section, META "timeline"): full mode float64 [nranks, rows, bins];
        summary mode the SUMMARY records :func:`summarize_timeline` would give, computed
        per bin without the [nranks, rows, bins] array (synthetic profiles of 10^6 ranks).
    """
    ranks, funcs = s["ranks"], s["funcs"]
    n = len(ranks)
    kinds_of = np.array(s["meta"]["function_kinds"])[funcs["func"]]
    kinds = [k for k in dict.fromkeys(s["meta"]["function_kinds"]) if k in set(kinds_of)]
    rows = kinds + ["compute", "bytes"]
    per = [np.bincount(funcs["rank"][kinds_of == k], weights=funcs["time"][kinds_of == k],
                       minlength=n) for k in kinds]
    per.append(ranks["wall"] - ranks["mpi"])
    per.append(np.bincount(funcs["rank"], weights=(funcs["bytes_sent"] + funcs["bytes_recv"])
                           .astype(np.float64), minlength=n))
    wall = ranks["wall"].astype(np.float64)
    width = float(wall.max()) / bins

    def share(j: int) -> np.ndarray:   # each rank's share of its run inside bin j
        return np.clip(np.minimum((j + 1) * width, wall) - j * width, 0.0, None) / wall

    meta = timeline_meta(rows, bins, width, end_seconds=float(wall.max()))
    if mode == "full":
        cover = np.stack([share(j) for j in range(bins)], axis=1)        # [nranks, bins]
        return np.stack([p[:, None] * cover for p in per], axis=1), meta
    out_rows = summary_rows(rows)
    by_name = dict(zip(rows, per))
    by_name["mpi"] = sum(per[:len(kinds)])
    recs = np.zeros(len(out_rows) * bins, fmt.SUMMARY)
    inside = int(float(wall.min()) // width)          # bins every rank covers entirely
    for j in range(bins):
        cover = share(j) if j >= inside or j == 0 else None
        for i, name in enumerate(out_rows):
            k = i * bins + j
            if cover is None:                          # the same as bin 0 (full coverage)
                recs[k] = recs[i * bins]
                recs[k]["metric"] = j
                continue
            v = by_name[name] * cover
            imin, imax = int(np.argmin(v)), int(np.argmax(v))
            recs[k] = (i, j, 0, 0, v[imin], v[imax], v.sum(), imin, imax, np.count_nonzero(v))
    meta["rows"] = out_rows
    return recs, meta


SYNTHETIC_EXE_KEY = 0x5F5F73796E746831  # the synthetic program's module key


def _synthetic_sites(n: int, steps: int, halo_bytes: int, valid: np.ndarray,
                     per_func: list) -> dict:
    """Per-site per-rank arrays splitting the synthetic stencil's function rows by line."""
    nx, ny = valid[:, :2].sum(axis=1), valid[:, 2:].sum(axis=1)
    frac_x = np.where(nx + ny > 0, nx / np.maximum(nx + ny, 1), 0.0)
    hb = fmt.size_bucket(halo_bytes)
    sites = []  # (site id, func, offset, bucket or None, calls, sent, recv, time)

    def add(func: int, offset: int, share, bucket):
        _, _, calls, sent, recv, t = per_func[func]
        calls = np.broadcast_to(np.asarray(calls), (n,))
        c = np.rint(calls * share).astype(np.uint64)
        sid = fmt.fnv1a64(f"site:{func}:{offset}")
        sites.append((sid, func, offset, bucket, c, np.asarray(sent * share, np.float64),
                      np.asarray(recv * share, np.float64), t * share))

    add(0, 0x1A40, frac_x, hb)
    add(0, 0x1A88, 1 - frac_x, hb)
    add(1, 0x1B10, frac_x, hb)
    add(1, 0x1B58, 1 - frac_x, hb)
    add(2, 0x1C04, np.ones(n), None)
    add(3, 0x1D30, np.full(n, 0.5), fmt.size_bucket(8))
    add(3, 0x1E70, np.full(n, 0.5), fmt.size_bucket(8))
    sites[-2] = sites[-2][:7] + (per_func[3][5] * 0.9,)    # the dot product holds the wait
    sites[-1] = sites[-1][:7] + (per_func[3][5] * 0.1,)
    add(4, 0x2010, np.ones(n), fmt.size_bucket(4096))
    add(5, 0x20A4, np.ones(n), None)
    modules = module_records([{"key": SYNTHETIC_EXE_KEY, "path": "/synthetic/stencil2d",
                               "build_id": bytes(range(20))}])
    return {"sites": sites, "modules": modules}


def site_records(n: int, sites: list) -> np.ndarray:
    """fmt.CALLSITE records (full mode, grouped by rank) of :func:`synthetic`'s sites."""
    parts = []
    for sid, f, _, bucket, calls, sent, recv, t in sites:
        for b in ([fmt.SITE_TOTAL] if bucket is None else [fmt.SITE_TOTAL, bucket]):
            r = np.flatnonzero(calls > 0)
            rec = np.zeros(len(r), fmt.CALLSITE)
            rec["rank"], rec["func"], rec["bucket"], rec["site"] = r, f, b, sid
            rec["calls"], rec["time"] = calls[r], t[r]
            if b == fmt.SITE_TOTAL:
                rec["bytes_sent"], rec["bytes_recv"] = sent[r], recv[r]
                rec["time_min"] = t[r] / calls[r] * 0.5
                rec["time_max"] = t[r] / calls[r] * 4.0
            parts.append(rec)
    out = np.concatenate(parts) if parts else np.zeros(0, fmt.CALLSITE)
    return out[np.argsort(out["rank"], kind="stable")]


def site_summary(n: int, sites: list) -> np.ndarray:
    """The summary-mode CALLSITES records of :func:`synthetic`'s sites, straight from its
    per-rank arrays (as :func:`summarize_callsites` of :func:`site_records`, without
    building them)."""
    rows = []
    for sid, f, _, bucket, calls, sent, recv, t in sites:
        for m, vals in enumerate((calls.astype(np.float64), sent, recv, t)):
            rows.append(_summary_record(f, m, sid, np.asarray(vals, np.float64)))
        has = calls > 0
        per = np.where(has, t / np.maximum(calls, 1), 0.0)
        lo = np.where(has, per * 0.5, np.inf)
        i = int(np.argmin(lo))
        rows.append((f, 4, 0, sid, float(lo[i]), 0.0, 0.0, i, 0, 0))
        i = int(np.argmax(per * 4.0))
        rows.append((f, 5, 0, sid, 0.0, float(per[i] * 4.0), 0.0, 0, i, 0))
        if bucket is not None:
            rows.append((f, fmt.SITE_BUCKET_CALLS + bucket, 0, sid, 0.0, 0.0, float(calls.sum()),
                         0, 0, 0))
            rows.append((f, fmt.SITE_BUCKET_TIME + bucket, 0, sid, 0.0, 0.0, float(t.sum()),
                         0, 0, 0))
    return np.array(rows, dtype=fmt.SUMMARY)


def write_synthetic(path: str | os.PathLike, nranks: int, mode: str = "full",
                    timeline_bins: int = 0, **kwargs) -> Path:
    """Write :func:`synthetic` as a full- or summary-mode profile file (with
    ``timeline_bins``: and a :func:`synthetic_timeline` of that many bins)."""
    s = synthetic(nranks, **kwargs)
    sites = s.get("sites")
    timeline = None
    if timeline_bins:
        timeline, s["meta"]["timeline"] = synthetic_timeline(s, timeline_bins, mode)
    if mode == "summary":
        summary, hsum = summarize(s["ranks"], s["funcs"], s["hist"], s.get("env"))
        return write_profile(path, nranks=nranks, meta=s["meta"], mode="summary",
                             hist=hsum, summary=summary, timeline=timeline, modules=s.get("modules"),
                             callsites=None if sites is None else site_summary(nranks, sites))
    return write_profile(path, nranks=nranks, meta=s["meta"], ranks=s["ranks"],
                         funcs=s["funcs"], hist=s["hist"], peers=s["peers"],
                         regions=s["regions"], nodes=s["nodes"], env=s.get("env"),
                         timeline=timeline, modules=s.get("modules"),
                         callsites=None if sites is None else site_records(nranks, sites))
