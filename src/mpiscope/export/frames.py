"""pandas views of a Profile: one tidy DataFrame per kind of record.

Names are resolved (function and region names, not ids); numbers are the
profile's own (seconds, bytes, counts). ``Profile.to_pandas(view)`` calls
:func:`frame`.
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from ..profile import Profile

VIEWS = ("ranks", "functions", "peers", "hist", "regions", "summary", "mpit", "env", "timeline",
         "callsites")


def _names(ids: np.ndarray, table: dict[int, str]) -> np.ndarray:
    """Map integer ids to names with one lookup per distinct id (unknown ids as hex)."""
    uniq, inv = np.unique(ids, return_inverse=True)
    names = np.array([table.get(int(u), f"{int(u):016x}") for u in uniq.tolist()], dtype=object)
    return names[inv] if len(ids) else np.zeros(0, dtype=object)


def _func_names(prof: Profile, ids: np.ndarray) -> np.ndarray:
    return _names(ids, dict(enumerate(prof.functions)))


def _need_full(prof: Profile, view: str) -> None:
    if prof.is_summary:
        raise UserError(f"the {view} view needs per-rank records, which a summary-mode "
                        "profile does not have (try the summary view)")


def ranks_frame(prof: Profile):
    """One row per rank: rank, node, wall, compute, mpi, wait, sync (s), on-/off-node traffic."""
    import pandas as pd

    _need_full(prof, "ranks")
    r = prof.ranks
    return pd.DataFrame({
        "rank": r["rank"].astype(np.int64), "node": r["node"].astype(np.int64),
        "wall": r["wall"], "compute": r["wall"] - r["mpi"], "mpi": r["mpi"],
        "wait": r["wait"], "sync": r["sync"],
        **{k: r[k].astype(np.int64) for k in ("on_node_msgs", "on_node_bytes", "off_node_msgs",
                                              "off_node_bytes")},
        "threads": r["threads"].astype(np.int64)})


def functions_frame(prof: Profile):
    """Tidy rows (rank, region, function, calls, time, bytes_sent, bytes_recv): one per
    (rank, function, region) the profile recorded; time in seconds, exclusive of nested
    regions."""
    import pandas as pd

    _need_full(prof, "functions")
    f = prof.funcs
    return pd.DataFrame({
        "rank": f["rank"].astype(np.int64), "region": _names(f["region"], prof.region_names),
        "function": _func_names(prof, f["func"]), "calls": f["calls"].astype(np.int64),
        "time": f["time"], "bytes_sent": f["bytes_sent"].astype(np.int64),
        "bytes_recv": f["bytes_recv"].astype(np.int64)})


def peers_frame(prof: Profile):
    """Point-to-point traffic: rank, peer, messages, bytes (rank sent to peer)."""
    import pandas as pd

    _need_full(prof, "peers")
    p = prof.peers
    return pd.DataFrame({"rank": p["rank"].astype(np.int64), "peer": p["peer"].astype(np.int64),
                         "messages": p["msgs"].astype(np.int64),
                         "bytes": p["bytes"].astype(np.int64)})


def hist_frame(prof: Profile):
    """Message-size histogram: rank (-1: summed over ranks), region, function, bucket,
    smallest and largest size of the bucket (bytes), calls, time."""
    import pandas as pd

    from ..format import ALL_RANKS
    from ..report.comm import bucket_range

    h = prof.hist
    # Bucket bounds as Python ints: a corrupt bucket (> 64) would overflow int64.
    uniq, inv = np.unique(h["bucket"], return_inverse=True)
    bounds = np.array([bucket_range(int(b)) for b in uniq.tolist()] or np.zeros((0, 2)),
                      dtype=object).reshape(-1, 2)
    lo_hi = bounds[inv.ravel()] if len(h) else np.zeros((0, 2), dtype=object)
    rank = h["rank"].astype(np.int64)
    return pd.DataFrame({
        "rank": np.where(h["rank"] == ALL_RANKS, -1, rank),
        "region": _names(h["region"], prof.region_names),
        "function": _func_names(prof, h["func"]), "bucket": h["bucket"].astype(np.int64),
        "size_min": lo_hi[:, 0], "size_max": lo_hi[:, 1],
        "calls": h["count"].astype(np.int64), "time": h["time"]})


def regions_frame(prof: Profile):
    """One row per (rank, region): depth, parent region, entries, wall time (inclusive)."""
    import pandas as pd

    _need_full(prof, "regions")
    g = prof.regions
    names = prof.region_names
    parent = _names(g["parent"], names)
    return pd.DataFrame({
        "rank": g["rank"].astype(np.int64), "region": _names(g["region"], names),
        "depth": g["depth"].astype(np.int64),
        "parent": np.where(g["parent"] == 0, None, parent),
        "entries": g["entries"].astype(np.int64), "wall": g["wall"]})


def summary_frame(prof: Profile):
    """The runtime's cross-rank reduction (summary mode): function ("(rank level)" for the
    per-rank metrics), region, metric, min, max, sum, min_rank, max_rank, nonzero."""
    import pandas as pd

    from .. import format as fmt

    s = prof.summary
    level = s["func"] == fmt.SUMMARY_RANK_LEVEL
    func = np.where(level, "(rank level)", _func_names(prof, np.where(level, 0, s["func"])))
    metric = np.where(level, np.array(fmt.SUMMARY_RANK_METRICS, dtype=object)[
        np.minimum(s["metric"], len(fmt.SUMMARY_RANK_METRICS) - 1)],
        np.array(fmt.FUNC_METRICS, dtype=object)[np.minimum(s["metric"],
                                                            len(fmt.FUNC_METRICS) - 1)])
    return pd.DataFrame({
        "function": func, "region": _names(s["region"], prof.region_names), "metric": metric,
        "min": s["min"], "max": s["max"], "sum": s["sum"],
        "min_rank": s["min_rank"].astype(np.int64), "max_rank": s["max_rank"].astype(np.int64),
        "nonzero": s["nonzero"].astype(np.int64)})


def mpit_frame(prof: Profile):
    """MPI_T performance variables (MPISCOPE_MPIT=1): per (rank, variable) its value at
    MPI_Finalize, peak (a level's highest sample) and samples; in summary mode per
    (variable, metric) min, max, sum, min_rank, max_rank, nonzero. Empty without them."""
    import pandas as pd

    from .. import format as fmt

    m = prof.mpit
    names = {i: str(v.get("name", f"#{i}")) for i, v in enumerate(prof.mpit_variables)}
    if prof.is_summary:
        metric = np.array(fmt.MPIT_METRICS, dtype=object)[np.minimum(m["metric"], len(fmt.MPIT_METRICS) - 1)]
        return pd.DataFrame({
            "variable": _names(m["func"], names), "metric": metric, "min": m["min"], "max": m["max"],
            "sum": m["sum"], "min_rank": m["min_rank"].astype(np.int64),
            "max_rank": m["max_rank"].astype(np.int64), "nonzero": m["nonzero"].astype(np.int64)})
    return pd.DataFrame({
        "rank": m["rank"].astype(np.int64), "variable": _names(m["var"], names), "value": m["value"],
        "peak": m["peak"], "samples": m["samples"].astype(np.int64)})


def env_frame(prof: Profile):
    """One row per rank (ENV section): rank, node, cpus (its affinity mask as a CPU list),
    ncpus, threads, unbound, overlap, overlap_rank (-1: none), load (threads per CPU),
    openmp, init, init_own, finalize, cpu_time (s). Empty for a profile without it."""
    import pandas as pd

    from .. import format as fmt

    _need_full(prof, "env")
    e = prof.env
    return pd.DataFrame({
        "rank": e["rank"].astype(np.int64),
        "node": prof.ranks["node"].astype(np.int64) if len(e) else np.zeros(0, np.int64),
        "cpus": _names(e["cpus"], prof.environment["cpus"]),
        **{k: e[k].astype(np.int64) for k in ("ncpus", "threads", "overlap")},
        "unbound": (e["flags"] & fmt.ENV_UNBOUND) != 0,
        "overlap_rank": np.where(e["overlap_rank"] == fmt.ENV_NO_RANK, -1,
                                 e["overlap_rank"].astype(np.int64)),
        "load": e["load"], "openmp": (e["flags"] & fmt.ENV_OPENMP) != 0,
        **{k: e[k] for k in ("init", "init_own", "finalize", "cpu_time")}})


def timeline_frame(prof: Profile):
    """The timeline's bins (docs/runtime.md "Timeline"). Full mode: one row per rank, bin and
    class with time in it: rank, t_start, t_end (seconds from MPI_Init on the job clock),
    class (a function kind, or "compute" for the time outside MPI), seconds. Summary mode:
    per bin and class t_start, t_end, class (also "mpi", the total), min, avg, max,
    min_rank, max_rank over ranks. Empty for a profile without a timeline."""
    import pandas as pd

    tl = prof.timeline_bins
    if tl is None:
        cols = ["rank", "t_start", "t_end", "class", "seconds"] if not prof.is_summary else \
            ["t_start", "t_end", "class", "min", "avg", "max", "min_rank", "max_rank"]
        return pd.DataFrame({c: [] for c in cols})
    start = tl.starts
    end = np.minimum(start + tl.bin_seconds, tl.end_seconds)
    classes = [r for r in tl.rows if r != "bytes"]
    if tl.stats is not None:
        nb = tl.bins
        st = tl.stats
        return pd.DataFrame({
            "t_start": np.tile(start, len(classes)), "t_end": np.tile(end, len(classes)),
            "class": np.repeat(np.array(classes, dtype=object), nb),
            **{k: np.concatenate([np.asarray(st[c][k], np.float64) for c in classes])
               for k in ("min", "max")},
            "avg": np.concatenate([np.asarray(st[c]["sum"], np.float64) / tl.nranks
                                   for c in classes]),
            **{k: np.concatenate([st[c][k].astype(np.int64) for c in classes])
               for k in ("min_rank", "max_rank")}})[
            ["t_start", "t_end", "class", "min", "avg", "max", "min_rank", "max_rank"]]
    idx = [tl.rows.index(c) for c in classes]
    v = np.asarray(tl.values[:, idx, :])                  # [ranks, classes, bins]
    r, c, b = np.nonzero(v)
    return pd.DataFrame({"rank": r.astype(np.int64), "t_start": start[b], "t_end": end[b],
                         "class": np.array(classes, dtype=object)[c], "seconds": v[r, c, b]})


def site_names(prof: Profile) -> dict[int, dict]:
    """Site id -> {"location", "file", "line", "parent"} (symbolized as the report does)."""
    from ..report.callsites import LOST, location, resolve_sites, symbolizer_from_env

    ids = sorted(prof.callsite_defs)
    frames, _ = resolve_sites(prof, ids, symbolizer_from_env())
    out = {0: {"location": LOST, "file": None, "line": None, "parent": None}}
    for sid, fr in frames.items():
        first = fr[0] if fr else None
        out[sid] = {"location": location(first), "file": first["file"] if first else None,
                    "line": first["line"] if first else None,
                    "parent": first["function"] if first else None}
    return out


def callsites_frame(prof: Profile):
    """One row per (rank, function, call site): rank, function, site (16 hex digits),
    location (file:line, else module+offset), file, line, parent (the function holding
    the line), calls, time, bytes_sent, bytes_recv, time_min, time_max (s). Empty for a
    profile without call sites."""
    import pandas as pd

    from .. import format as fmt

    _need_full(prof, "callsites")
    c = prof.callsites[prof.callsites["bucket"] == fmt.SITE_TOTAL]
    names = site_names(prof) if len(c) else {}
    uniq, inv = np.unique(c["site"], return_inverse=True)
    info = [names.get(int(u), {"location": f"{int(u):016x}", "file": None, "line": None,
                               "parent": None}) for u in uniq.tolist()]
    inv = inv.ravel()

    def col(key):
        return np.array([i[key] for i in info], dtype=object)[inv] if len(c) else \
            np.zeros(0, dtype=object)
    return pd.DataFrame({
        "rank": c["rank"].astype(np.int64), "function": _func_names(prof, c["func"]),
        "site": np.array([f"{int(u):016x}" for u in uniq.tolist()], dtype=object)[inv]
        if len(c) else np.zeros(0, dtype=object),
        "location": col("location"), "file": col("file"), "line": col("line"),
        "parent": col("parent"), "calls": c["calls"].astype(np.int64), "time": c["time"],
        "bytes_sent": c["bytes_sent"].astype(np.int64), "bytes_recv": c["bytes_recv"].astype(np.int64),
        "time_min": c["time_min"], "time_max": c["time_max"]})


def samples_frame(prof: Profile):
    """Sampled compute (docs/sampling.md): one row per (rank, thread, function): rank,
    thread, function (the sampled function symbolized, or the MPI function the samples
    were taken in), file, in_mpi, samples, seconds (samples / Hz of the thread's CPU
    time). Empty for a profile without samples."""
    import pandas as pd

    from ..report.samples import record_labels

    _need_full(prof, "samples")
    s = prof.samples
    hz = prof.sample_hz or 1.0
    names, files, mpi = record_labels(prof) if len(s) else ([], [], [])
    df = pd.DataFrame({"rank": s["rank"].astype(np.int64), "thread": s["thread"].astype(np.int64),
                       "function": np.array(names, dtype=object),
                       "file": np.array([f or "" for f in files], dtype=object),
                       "in_mpi": np.array(mpi, dtype=bool), "samples": s["samples"].astype(np.int64)})
    out = df.groupby(["rank", "thread", "function", "file", "in_mpi"], as_index=False,
                     sort=True)["samples"].sum()
    out["seconds"] = out["samples"] / hz
    return out


_BUILDERS = {"ranks": ranks_frame, "functions": functions_frame, "peers": peers_frame,
             "hist": hist_frame, "regions": regions_frame, "summary": summary_frame,
             "mpit": mpit_frame, "env": env_frame, "timeline": timeline_frame,
             "callsites": callsites_frame}


def frame(prof: Profile, view: str = "functions"):
    """The DataFrame of one view (see VIEWS).

    Raises:
        UserError: unknown view, or a per-rank view of a summary-mode profile.
    """
    try:
        build = _BUILDERS[view]
    except KeyError:
        raise UserError(f"unknown view {view!r} (views: {', '.join(VIEWS)})") from None
    return build(prof)
