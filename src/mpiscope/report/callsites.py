"""Call sites: mpiP's callsite statistics in the report's layout. Each row is one line of
the program calling one MPI function (sites the compiler duplicated, or addresses
resolving to the same line, are one row): where (file:line, the function holding it,
deeper frames with MPISCOPE_CALLSITE_DEPTH), calls, time, bytes, time per rank
(avg/min/max, minPE/maxPE, imbalance), the fastest and slowest call, message sizes.

Full mode reduces the CALLSITES records per rank; summary mode reads the runtime's
own reduction (SUMMARY records, region = site). Frames are symbolized here, offline
(mpiscope.symbols); the schema is in docs/report.md ("callsites").
"""

from __future__ import annotations

import os

import numpy as np

from .. import format as fmt
from ..symbols import Module, Symbolizer, user_frame
from .imbalance import imbalance_pct, rank_stats, summary_stats

DEFAULT_TOP = 20
LOST = "(calls at sites beyond MPISCOPE_MAX_CALLSITES)"


def symbolizer_from_env() -> Symbolizer:
    """A Symbolizer searching $MPISCOPE_SYMBOL_PATH (':'-separated directories) too."""
    path = os.environ.get("MPISCOPE_SYMBOL_PATH", "")
    return Symbolizer(search_path=tuple(p for p in path.split(os.pathsep) if p))


def modules_of(prof) -> dict[int, Module]:
    return {int(r["key"]): Module.from_record(r) for r in prof.modules}


def resolve_sites(prof, site_ids, sym: Symbolizer) -> tuple[dict[int, list[dict]], list[dict]]:
    """site id -> its frames as dicts (innermost first; an inlined chain expanded), and
    the modules involved with their status (found, rebuilt, ...)."""
    defs = prof.callsite_defs
    mods = modules_of(prof)
    want: dict[int, set[int]] = {}
    for sid in site_ids:
        for key, off in defs.get(sid, (0, []))[1]:
            m = mods.get(key)
            if m is not None:
                want.setdefault(key, set()).add(off if m.kind == fmt.MODULE_PYTHON else off - 1)
    resolved = {key: sym.resolve(mods[key], offs) for key, offs in want.items()}
    out = {}
    for sid in site_ids:
        frames = []
        for key, off in defs.get(sid, (0, []))[1]:
            m = mods.get(key)
            where = () if m is None else resolved[key].get(
                off if m.kind == fmt.MODULE_PYTHON else off - 1, ())
            uf = user_frame(where)
            chain = [f for f in where if f is not uf] if uf else []
            frames.append({
                "module": m.path if m else None, "offset": off,
                "function": uf.function if uf else None, "file": uf.file if uf else None,
                "line": uf.line if uf else None,
                "inlined_in": [{"function": f.function, "file": f.file, "line": f.line}
                               for f in chain],
            })
        out[sid] = frames
    status = [sym.module_report(mods[key], resolved[key])
              for key in sorted(want, key=lambda k: mods[k].path)]
    return out, status


def location(frame: dict | None) -> str:
    """file:line of a frame, else module+offset (the module's name), else "?"."""
    if frame is None:
        return "?"
    if frame["file"] and frame["line"]:
        return f"{os.path.basename(frame['file'])}:{frame['line']}"
    if frame["module"]:
        return f"{os.path.basename(frame['module'])}+0x{frame['offset']:x}"
    return f"0x{frame['offset']:x}"


def _group_key(func: int, frames: list[dict]) -> tuple:
    """What makes two sites one row: the same function and the same frames (as resolved
    lines with the functions they were inlined in, else as module+offset)."""
    return (func, tuple((f["file"], f["line"], f["function"],
                         tuple((i["file"], i["line"], i["function"]) for i in f["inlined_in"]))
                        if f["file"] and f["line"] else (f["module"], f["offset"]) for f in frames))


def callsite_section(prof, mpi_total: float, top: int | None = DEFAULT_TOP,
                     sym: Symbolizer | None = None) -> dict:
    """The report's "callsites" dict: every row, most time first ("rows"), and how many of
    them the tables show ("top", None: all)."""
    names, kinds = prof.functions, prof.function_kinds
    recorded = "callsites" in prof.meta
    out = {"recorded": recorded, "depth": prof.callsite_depth, "rows": [], "top": top,
           "modules": [], "notes": []}
    if not recorded or not len(prof.callsites):
        return out
    sym = sym or symbolizer_from_env()
    cs = prof.callsites
    site_field = "region" if prof.is_summary else "site"
    recs = cs if prof.is_summary else cs[cs["bucket"] == fmt.SITE_TOTAL]
    keys, first = np.unique(np.stack([recs[site_field], recs["func"].astype(np.uint64)], axis=1),
                            axis=0, return_index=True)
    site_ids = sorted({int(s) for s, _ in keys.tolist() if s != fmt.SITE_LOST})
    frames, out["modules"] = resolve_sites(prof, site_ids, sym)
    groups: dict[tuple, int] = {}
    members: list[list[tuple[int, int]]] = []
    key_group = np.zeros(len(keys), np.int64)
    for i, (s, f) in enumerate(keys.tolist()):
        s, f = int(s), int(f)
        if s == fmt.SITE_LOST:
            gk = (f, ("lost",))
        elif s not in frames:
            gk = (f, ("unknown", s))     # a record whose site META does not describe
        else:
            gk = _group_key(f, frames[s])
        g = groups.setdefault(gk, len(groups))
        if g == len(members):
            members.append([])
        members[g].append((s, f))
        key_group[i] = g
    # every record's group: its (site, function) key's
    rec_key = np.stack([cs[site_field], cs["func"].astype(np.uint64)], axis=1)
    idx = _key_index(keys, rec_key)
    rec_group = key_group[idx]
    build = _summary_rows if prof.is_summary else _full_rows
    rows = build(prof, cs, rec_group, members, frames, names, kinds, mpi_total)
    rows.sort(key=lambda r: (-r["time"], r["function"], r["location"]))
    for i, r in enumerate(rows, start=1):
        r["rank_by_time"] = i
    out["rows"] = rows
    for m in out["modules"]:
        if m["status"] != "ok":
            out["notes"].append(m["note"])
    lost = [r for r in rows if r["lost"]]
    if lost:
        out["notes"].append(f"{sum(r['calls'] for r in lost):,} calls were made at more call "
                            f"sites than MPISCOPE_MAX_CALLSITES kept: counted in the "
                            f"'{LOST}' rows")
    return out


def _key_index(keys: np.ndarray, rec_key: np.ndarray) -> np.ndarray:
    """Index into the sorted unique (site, function) rows ``keys`` of each record's pair."""
    kv = keys.view([("s", keys.dtype), ("f", keys.dtype)]).ravel()
    rv = np.ascontiguousarray(rec_key).view([("s", keys.dtype), ("f", keys.dtype)]).ravel()
    return np.searchsorted(kv, rv)


def _row_base(members, frames, names, kinds, mpi_total, calls, time, sent, recv) -> dict:
    s, f = members[0]
    lost = s == fmt.SITE_LOST
    fr = frames.get(s, [])
    first = fr[0] if fr else None
    return {
        "sites": [f"{m:016x}" for m, _ in members], "function": names[f] if f < len(names) else f"#{f}",
        "kind": kinds[f] if f < len(kinds) else "other", "lost": lost,
        "location": LOST if lost else location(first),
        "file": first["file"] if first else None, "line": first["line"] if first else None,
        "parent": first["function"] if first else None,
        "frames": fr, "calls": calls, "time": time,
        "pct_mpi": 100.0 * time / mpi_total if mpi_total > 0 else 0.0,
        "bytes_sent": sent, "bytes_recv": recv,
    }


def _split(order_key: np.ndarray, ngroups: int) -> list[np.ndarray]:
    """Record indices of each group (stable: in record order within a group)."""
    order = np.argsort(order_key, kind="stable")
    bounds = np.searchsorted(order_key[order], np.arange(ngroups + 1))
    return [order[bounds[g]:bounds[g + 1]] for g in range(ngroups)]


def _group_rank_stats(ranks: np.ndarray, values: np.ndarray, nranks: int) -> tuple[dict, int]:
    """rank_stats of a group's per-rank sums (absent ranks 0) without an O(P) array:
    ranks and values of its records, a rank possibly in several."""
    if len(ranks) == 0:
        return rank_stats(np.zeros(nranks)), 0
    u, inv = np.unique(ranks, return_inverse=True)
    per = np.bincount(inv.ravel(), weights=values)
    total = float(per.sum())
    avg = total / nranks
    imax = int(np.argmax(per))
    vmax = float(per[imax])
    if len(u) == nranks:
        imin = int(np.argmin(per))
        vmin, min_pe = float(per[imin]), int(u[imin])
    else:   # an absent rank holds 0: the lowest one, unless a present rank below it has 0 too
        gap = np.flatnonzero(u != np.arange(len(u)))
        min_pe = int(gap[0]) if len(gap) else len(u)
        zero = np.flatnonzero(per <= 0)
        if len(zero) and int(u[zero[0]]) < min_pe:
            min_pe = int(u[zero[0]])
        vmin = 0.0 if per.min() >= 0 else float(per.min())
    stats = {"min": vmin, "max": vmax if vmax > 0 or len(u) == nranks else 0.0, "avg": avg,
             "sum": total, "min_pe": min_pe, "max_pe": int(u[imax]) if vmax > 0 or len(u) == nranks else 0,
             "imbalance_pct": imbalance_pct(max(vmax, 0.0), avg, nranks)}
    return stats, int(len(u))


def _full_rows(prof, cs, rec_group, members, frames, names, kinds, mpi_total) -> list[dict]:
    rows = []
    for g, idx in enumerate(_split(rec_group, len(members))):
        mine = cs[idx]
        tot = mine[mine["bucket"] == fmt.SITE_TOTAL]
        row = _row_base(members[g], frames, names, kinds, mpi_total,
                        int(tot["calls"].sum(dtype=np.uint64)), float(tot["time"].sum()),
                        int(tot["bytes_sent"].sum(dtype=np.uint64)),
                        int(tot["bytes_recv"].sum(dtype=np.uint64)))
        row["time_per_rank"], row["ranks"] = _group_rank_stats(tot["rank"], tot["time"], prof.nranks)
        row["call_time_min"] = float(tot["time_min"].min()) if len(tot) else None
        row["call_time_max"] = float(tot["time_max"].max()) if len(tot) else None
        hist = mine[mine["bucket"] != fmt.SITE_TOTAL]
        row["sizes"] = _sizes(hist["bucket"], hist["calls"], hist["time"])
        rows.append(row)
    return rows


def _summary_rows(prof, cs, rec_group, members, frames, names, kinds, mpi_total) -> list[dict]:
    rows = []
    for g, idx in enumerate(_split(rec_group, len(members))):
        mine = cs[idx]

        def metric(m: int) -> np.ndarray:
            return mine[mine["metric"] == m]
        sums = {name: float(metric(i)["sum"].sum()) for i, name in enumerate(fmt.FUNC_METRICS)}
        row = _row_base(members[g], frames, names, kinds, mpi_total, int(round(sums["calls"])),
                        sums["time"], int(round(sums["bytes_sent"])), int(round(sums["bytes_recv"])))
        t = metric(fmt.FUNC_METRICS.index("time"))
        if len(t) == 1:
            row["time_per_rank"] = summary_stats(t[0], prof.nranks)
        else:       # several sites on one line: their per-rank extremes do not add up
            avg = sums["time"] / prof.nranks if prof.nranks else 0.0
            row["time_per_rank"] = {"min": None, "max": None, "avg": avg, "sum": sums["time"],
                                    "min_pe": None, "max_pe": None, "imbalance_pct": None}
        calls = metric(fmt.FUNC_METRICS.index("calls"))
        row["ranks"] = int(calls["nonzero"].max()) if len(calls) == 1 else None
        lo = metric(fmt.SITE_METRICS.index("call_time_min"))
        hi = metric(fmt.SITE_METRICS.index("call_time_max"))
        row["call_time_min"] = float(lo["min"].min()) if len(lo) else None
        row["call_time_max"] = float(hi["max"].max()) if len(hi) else None
        b = mine[(mine["metric"] >= fmt.SITE_BUCKET_CALLS) & (mine["metric"] < fmt.SITE_BUCKET_TIME)]
        bt = mine[mine["metric"] >= fmt.SITE_BUCKET_TIME]
        times = {int(r["metric"]) - fmt.SITE_BUCKET_TIME: float(r["sum"]) for r in bt}
        row["sizes"] = _sizes(b["metric"] - fmt.SITE_BUCKET_CALLS,
                              np.rint(b["sum"]).astype(np.int64),
                              np.array([times.get(int(x) - fmt.SITE_BUCKET_CALLS, 0.0)
                                        for x in b["metric"]]))
        rows.append(row)
    return rows


def _sizes(buckets, calls, times) -> list[dict]:
    """Message-size buckets of a site: calls and time per log2 bucket, smallest first."""
    out: dict[int, list] = {}
    for b, c, t in zip(np.asarray(buckets).tolist(), np.asarray(calls).tolist(),
                       np.asarray(times).tolist()):
        acc = out.setdefault(int(b), [0, 0.0])
        acc[0] += int(c)
        acc[1] += float(t)
    return [{"bucket": b, "lo": 0 if b == 0 else 1 << (b - 1), "hi": 0 if b == 0 else (1 << b) - 1,
             "calls": c, "time": t} for b, (c, t) in sorted(out.items())]


def site_rank_times(prof, row: dict) -> np.ndarray | None:
    """Time per rank of a report row's sites (full mode; None in summary mode)."""
    if prof.is_summary:
        return None
    cs = prof.callsites
    tot = cs[cs["bucket"] == fmt.SITE_TOTAL]
    f = prof.functions.index(row["function"]) if row["function"] in prof.functions else -1
    ids = np.array([int(s, 16) for s in row["sites"]], np.uint64)
    sel = np.isin(tot["site"], ids) & (tot["func"] == f)
    return np.bincount(tot["rank"][sel], weights=tot["time"][sel], minlength=prof.nranks)
