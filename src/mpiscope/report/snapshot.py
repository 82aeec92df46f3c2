"""The snapshot part of a report: when a partial profile was taken, which
ranks answered, and which call each rank sat in (and its peer).

Pure functions over the profile's INFLIGHT records (docs/report.md "Snapshot").
"""

from __future__ import annotations

import numpy as np

from .. import format as fmt
from ..profile import Profile

LIST_MAX = 64      # ranks listed per row; the count is always exact


def rank_list_text(ranks: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2,5,7-8' (runs of consecutive ranks)."""
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ",".join(out)


def _peer(value: int) -> int | str | None:
    if value == fmt.PEER_ANY:
        return "any"
    return None if value < 0 else int(value)


def comm_name(meta: dict, comm: int) -> str | None:
    """The name of a communicator id (META "communicators"); None for none (0)."""
    if comm == 0:
        return None
    if comm in (1, 2):
        return "world" if comm == 1 else "self"
    info = (meta.get("communicators") or {}).get(f"{comm:016x}")
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else f"communicator {comm:016x}"


def where_ranks_are(inflight: np.ndarray, functions: list[str], meta: dict | None = None) -> list[dict]:
    """One row per (call, from, to, communicator) the ranks' threads sit in, most ranks first.

    Each row: ``state`` (function name, or "outside MPI"), ``func`` (name or
    None), ``from`` / ``to`` (world rank, "any" for MPI_ANY_SOURCE, or None),
    ``comm`` (the communicator's id, 16 hex digits, or None) and ``comm_name``,
    ``count`` (ranks), ``ranks`` (the first LIST_MAX, ascending),
    ``seconds_max`` (the longest time in that call so far; outside MPI: since
    the last MPI call returned).
    """
    groups: dict[tuple, list] = {}
    for rec in inflight:
        f = int(rec["func"])
        name = None if f == fmt.NOT_IN_MPI or f >= len(functions) else functions[f]
        comm = int(rec["comm"]) if name else 0
        key = (name, _peer(int(rec["from"])), _peer(int(rec["to"])), int(rec["thread"]), comm)
        g = groups.setdefault(key, [[], 0.0])
        g[0].append(int(rec["rank"]))
        g[1] = max(g[1], float(rec["seconds"]))
    rows = []
    for (name, frm, to, thread, comm), (ranks, secs) in groups.items():
        ranks = sorted(set(ranks))
        rows.append({"state": name or "outside MPI", "func": name, "from": frm, "to": to,
                     "comm": f"{comm:016x}" if comm else None,
                     "comm_name": comm_name(meta or {}, comm),
                     "thread": thread, "count": len(ranks), "ranks": ranks[:LIST_MAX],
                     "seconds_max": secs})
    rows.sort(key=lambda r: (-r["count"], r["state"], r["thread"], r["ranks"][0]))
    return rows


def snapshot_section(prof: Profile) -> dict | None:
    """rep["snapshot"] of a partial profile (None for a profile written at MPI_Finalize)."""
    if not prof.is_partial:
        return None
    snap = prof.meta.get("snapshot")
    snap = snap if isinstance(snap, dict) else {}
    num = (lambda v: float(v) if isinstance(v, (int, float)) else None)
    return {
        "time": num(snap.get("time")), "time_first": num(snap.get("time_first")),
        "reasons": [str(r) for r in snap.get("reasons", [])] if isinstance(snap.get("reasons"), list) else [],
        "answered": int(snap["answered"]) if isinstance(snap.get("answered"), int) else None,
        "nranks": prof.nranks,
        "missing": [int(r) for r in snap.get("missing", []) if isinstance(r, int)][:LIST_MAX],
        "missing_count": int(snap.get("missing_count", 0)) if isinstance(snap.get("missing_count"), int) else 0,
        "node_unknown_count": int(snap["node_unknown_count"])
        if isinstance(snap.get("node_unknown_count"), int) else 0,
        "truncated": [int(r) for r in snap.get("truncated", []) if isinstance(r, int)][:LIST_MAX],
        "where": where_ranks_are(prof.inflight, prof.functions, prof.meta),
    }


def snapshot_lines(snap: dict) -> list[str]:
    """The snapshot part of the text report."""
    from .tables import fmt_utc   # here: tables imports this module

    when = "at an unknown time"
    if snap["time"] is not None:
        when = "at " + fmt_utc(snap["time"])
    why = "/".join(snap["reasons"]) or "snapshot"
    answered = "?" if snap["answered"] is None else f"{snap['answered']:,}"
    lines = [f"PARTIAL PROFILE: snapshot ({why}) {when}; {answered} of {snap['nranks']:,} "
             f"ranks answered; the tables hold what ran until then"]
    if snap["missing_count"]:
        lines.append(f"  did not answer ({snap['missing_count']:,}): "
                     f"{rank_list_text(snap['missing'])}")
    if snap["truncated"]:
        lines.append(f"  snapshot cut to MPISCOPE_SNAPSHOT_BYTES on ranks "
                     f"{rank_list_text(snap['truncated'])}")
    if snap["where"]:
        lines.append("Where the ranks were:")
    for row in snap["where"]:
        what = row["state"]
        if row["from"] is not None:
            what += " from " + ("any source" if row["from"] == "any" else f"rank {row['from']}")
        if row["to"] is not None:
            what += f" to rank {row['to']}"
        if row["comm_name"] not in (None, "world"):
            what += f" on {row['comm_name']}"
        thread = f" (thread {row['thread']})" if row["thread"] else ""
        more = "..." if row["count"] > len(row["ranks"]) else ""
        plural = "rank" if row["count"] == 1 else "ranks"
        since = (f", for up to {row['seconds_max']:.3g} s" if row["func"] else
                 f", for up to {row['seconds_max']:.3g} s since its last MPI call"
                 if row["seconds_max"] > 0 else "")
        where = f"in {what}" if row["func"] else "outside MPI"
        lines.append(f"  {row['count']:,} {plural} {where}{thread}: "
                     f"{rank_list_text(row['ranks'])}{more}{since}")
    return lines
