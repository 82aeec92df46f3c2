"""The environment part of a report: MPI_Init / MPI_Finalize time, CPU affinity per node,
OpenMP threads and the MPI tuning variables the ranks ran with (ENV section, META
"environment"; docs/report.md "Environment").

Pure functions over the profile. Full mode has a record per rank; summary mode has the
runtime's reductions of the same per-rank values (SUMMARY rank metrics) and the distinct
CPU lists and variable sets, but not which rank had which: the per-node rows need full mode.
"""

from __future__ import annotations

import numpy as np

from .. import format as fmt
from ..profile import Profile
from .imbalance import rank_stats, summary_stats
from .snapshot import rank_list_text

# Nodes listed (those where ranks overlap, float unbound or run more threads than CPUs first),
# and mask groups listed per node; the counts are always over all of them.
NODE_ROWS = 16
GROUP_ROWS = 16

# Per-rank values shown as min/max/avg/minPE/maxPE (fmt.ENV_METRICS names).
TIMES = ("init", "init_own", "finalize", "cpu_time", "run_delay", "node_idle")


def env_values(prof: Profile) -> dict[str, np.ndarray]:
    """Every fmt.ENV_METRICS value per rank (full mode, ENV present): unbound as 0/1 and
    oversub = threads beyond the CPUs of the rank's mask."""
    e = prof.env
    threads, ncpus = e["threads"].astype(np.float64), e["ncpus"].astype(np.float64)
    out = {k: e[k].astype(np.float64) for k in ("init", "init_own", "finalize", "cpu_time",
                                                "ncpus", "threads", "overlap", "load",
                                                "node_cpus", "run_delay", "node_idle")}
    out["unbound"] = ((e["flags"] & fmt.ENV_UNBOUND) != 0).astype(np.float64)
    out["oversub"] = np.where(ncpus > 0, np.maximum(threads - ncpus, 0.0), 0.0)
    return out


def env_stats(prof: Profile) -> dict[str, dict] | None:
    """min/max/avg/sum/minPE/maxPE/nonzero of every fmt.ENV_METRICS value over ranks, from the
    ENV records or (summary mode) the runtime's SUMMARY records; None if the profile has neither."""
    if len(prof.env):
        out = {}
        for name, v in env_values(prof).items():
            out[name] = {**rank_stats(v), "nonzero": int(np.count_nonzero(v))}
        return out
    summ = prof.summary
    level = summ[summ["func"] == fmt.SUMMARY_RANK_LEVEL] if len(summ) else summ
    out = {}
    for name in fmt.ENV_METRICS:
        rec = level[level["metric"] == fmt.SUMMARY_RANK_METRICS.index(name)] if len(level) else level
        if not len(rec) and name in fmt.ENV_METRICS_V2 and out:
            out[name] = {**rank_stats(np.zeros(1)), "nonzero": 0}  # an older runtime: unknown (0)
            continue
        if not len(rec):
            return None  # written by a runtime before the ENV section
        out[name] = {**summary_stats(rec[0], prof.nranks), "nonzero": int(rec[0]["nonzero"])}
    return out


def _variables(prof: Profile) -> dict:
    """Variables set the same on every rank, and those whose value differs (or that only
    some ranks set), with how many ranks had each value (None in summary mode)."""
    sets = prof.environment["variables"]
    if len(prof.env):
        ids, counts = np.unique(prof.env["vars"], return_counts=True)
        used = [(sets.get(int(i), {}), int(c)) for i, c in zip(ids.tolist(), counts.tolist())]
    else:
        used = [(v, None) for v in sets.values()]
    if not used:
        return {"all_ranks": {}, "differing": []}
    names = sorted({n for s, _ in used for n in s})
    same, differing = {}, []
    for n in names:
        values: dict[str, int | None] = {}
        for s, count in used:
            v = s.get(n, None)
            key = "(unset)" if v is None else v
            values[key] = None if count is None else (values.get(key) or 0) + count
        if len(values) == 1 and "(unset)" not in values:
            same[n] = next(iter(values))
        else:
            differing.append({"name": n, "values": values})
    return {"all_ranks": same, "differing": differing}


def _node_rows(prof: Profile) -> tuple[list[dict], int]:
    """Per node (full mode): its host, ranks, the ranks grouped by mask, and its problems."""
    e = prof.env
    node = prof.ranks["node"].astype(np.int64)
    unbound = (e["flags"] & fmt.ENV_UNBOUND) != 0
    overlap = e["overlap"] > 0
    oversub = (e["threads"] > e["ncpus"]) & (e["ncpus"] > 0)
    nodes, inv = np.unique(node, return_inverse=True)
    bad = np.bincount(inv, weights=(unbound | overlap | oversub).astype(np.float64),
                      minlength=len(nodes))
    # nodes with a problem first, then by node id; only the listed ones are examined rank by rank
    order = np.lexsort((nodes, -bad))[:NODE_ROWS]
    hosts = {int(n["node"]): n["hostname"].split(b"\0", 1)[0].decode("utf-8", "replace")
             for n in prof.nodes}
    cpus = prof.environment["cpus"]
    rows = []
    for k in order.tolist():
        ranks = np.flatnonzero(inv == k)
        groups: dict[tuple, list[int]] = {}
        for r in ranks.tolist():
            key = (int(e["cpus"][r]), int(e["threads"][r]), bool(unbound[r]), int(e["overlap"][r]))
            groups.setdefault(key, []).append(r)
        glist = [{"ranks": rank_list_text(rs), "count": len(rs), "cpus": cpus.get(c, f"{c:016x}"),
                  "ncpus": int(e["ncpus"][rs[0]]), "threads": t, "unbound": u, "overlap": ov,
                  "load": float(e["load"][rs].max())}
                 for (c, t, u, ov), rs in sorted(groups.items(), key=lambda kv: kv[1][0])]
        rows.append({"node": int(nodes[k]), "hostname": hosts.get(int(nodes[k])),
                     "ranks": int(len(ranks)), "groups": glist[:GROUP_ROWS],
                     "groups_total": len(glist), "unbound": int(unbound[ranks].sum()),
                     "overlap": int(overlap[ranks].sum()), "oversub": int(oversub[ranks].sum()),
                     "load_max": float(e["load"][ranks].max())})
    return rows, int(len(nodes))


def environment_section(prof: Profile) -> dict:
    """The report's "environment" key (docs/report.md)."""
    stats = env_stats(prof)
    if stats is None:
        return {"available": False, "why_not": "no environment records in this profile "
                "(written by an older runtime, or a snapshot)", "source": None}
    full = bool(len(prof.env))
    rows, nnodes = _node_rows(prof) if full else ([], None)
    openmp = int(np.count_nonzero(prof.env["flags"] & fmt.ENV_OPENMP)) if full else None
    return {
        "available": True, "why_not": None, "source": "ranks" if full else "summary",
        **{k: stats[k] for k in TIMES},
        **{k: stats[k] for k in ("ncpus", "threads", "load", "overlap", "unbound", "oversub",
                                 "node_cpus")},
        "unbound_ranks": stats["unbound"]["nonzero"], "overlap_ranks": stats["overlap"]["nonzero"],
        "oversub_ranks": stats["oversub"]["nonzero"], "openmp_ranks": openmp,
        "cpu_lists": sorted(set(prof.environment["cpus"].values())),
        "variables": _variables(prof),
        "nodes": rows, "nodes_total": nnodes,
    }
