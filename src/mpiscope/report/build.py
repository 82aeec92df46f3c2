"""Build the report of a profile: one JSON-ready dict holding every number shown.

The tables (``tables.py``) and ``--json`` both render this dict, so they cannot
disagree. The schema is documented in docs/report.md.
"""

from __future__ import annotations

import numpy as np

from .. import format as fmt
from ..errors import UserError
from ..profile import Profile
from . import comm
from .mpit import mpit_section
from .pop import pop_section
from .snapshot import snapshot_section
from .by_comm import comm_table
from .callsites import DEFAULT_TOP, callsite_section
from .samples import samples_section
from .environment import environment_section
from .functions import function_table, summary_function_table
from .imbalance import rank_stats, sparse_rank_stats, summary_stats
from .timeline import timeline_section

SCHEMA = "mpiscope-report/1"

# (metric key, label): the profile-summary rows, in Cray profiler wording.
SUMMARY_ROWS = [
    ("wall", "Wall clock time"),
    ("compute", "Compute time (wall - MPI)"),
    ("mpi", "Total MPI time"),
    ("wait", "Wait and Probe time"),
    ("sync", "Collective sync time"),
]


def build_report(prof: Profile, ppn: int | None = None, top: int = 10,
                 region: str | None = None, callsites: int | None = DEFAULT_TOP,
                 symbolizer=None) -> dict:
    """Every number of ``mpiscope report``, as plain Python values.

    Arguments:
        prof: the profile.
        ppn: model ``ppn`` consecutive ranks per node for on-/off-node traffic
            (full mode only; recomputed from PEERS with node = rank // ppn).
        top: number of communicating pairs to list.
        region: restrict the function table, histogram and region sections to
            this region (by name; "(outside regions)" is the part outside all).
        callsites: number of call sites to list, most time first (None: all).
        symbolizer: a mpiscope.symbols.Symbolizer (default: one searching
            $MPISCOPE_SYMBOL_PATH).
    Raises:
        UserError: unknown region, --ppn on a summary profile, ppn < 1.
    """
    if ppn is not None and ppn < 1:
        raise UserError(f"--ppn must be at least 1, not {ppn}")
    if ppn is not None and prof.is_summary:
        raise UserError("--ppn needs per-peer records, which a summary-mode profile does not have")
    if top < 0:
        raise UserError(f"--top must be 0 or more, not {top}")
    if callsites is not None and callsites < 0:
        raise UserError(f"--callsites must be 0 or more, or 'all', not {callsites}")
    region_id = None
    if region is not None:
        try:
            region_id = prof.region_id(region)
        except KeyError:
            known = ", ".join(sorted(prof.region_names.values()))
            raise UserError(f"no region named {region!r} in {prof.path} (regions: {known})") from None

    names, kinds = prof.functions, prof.function_kinds
    if prof.is_summary:
        summary = _summary_rows_from_summary(prof)
    else:
        summary = _summary_rows_from_ranks(prof)
    mpi_total = next(r["sum"] for r in summary if r["metric"] == "mpi")

    hist = prof.hist
    summ = prof.summary
    in_region = None
    if region_id is not None:
        in_region = prof.funcs["region"] == region_id
        hist = hist[hist["region"] == region_id]
        summ = summ[(summ["region"] == region_id) | (summ["func"] == fmt.SUMMARY_RANK_LEVEL)]
    if prof.is_summary:
        functions = summary_function_table(summ, prof.nranks, names, kinds, mpi_total)
    else:
        functions = function_table(prof.funcs, prof.nranks, names, kinds, mpi_total, in_region)

    nested = None
    if not prof.is_summary and len(prof.regions):
        nested = _descendants(prof.regions, np.unique(prof.regions["region"]).tolist())
    rep = {
        "schema": SCHEMA,
        "profile": _profile_info(prof, ppn),
        "region_filter": region,
        "summary": summary,
        "functions": functions,
        "callsites": callsite_section(prof, mpi_total, callsites, symbolizer),
        "samples": samples_section(prof, sym=symbolizer),
        "histogram": comm.histogram(hist, names),
        "p2p": _p2p(prof, ppn),
        "top_pairs": [] if prof.is_summary else comm.top_pairs(
            prof.peers, prof.nranks, top, prof.node_of_rank(ppn)),
        "regions": _regions(prof, region_id, mpi_total, nested),
        "pop": pop_section(prof, nested, region_id),
        "io_files": _io_files(prof.meta),
        "snapshot": snapshot_section(prof),
        "communicators": [] if prof.is_summary else comm_table(prof, mpi_total),
        "mpit": mpit_section(prof),
        "environment": environment_section(prof),
        "timeline": timeline_section(prof),
        "warnings": _warnings(prof, ppn),
    }
    return rep


def _text(value) -> str | None:
    """A META value as text (None if absent): the file is input, so never trust its types."""
    return None if value is None else str(value)


def _io_files(meta: dict) -> list[dict]:
    files = meta.get("io_files")
    if not isinstance(files, list):
        return []
    return [{str(k): v if isinstance(v, (int, float, bool)) else _text(v) for k, v in f.items()}
            for f in files if isinstance(f, dict)]


def _profile_info(prof: Profile, ppn: int | None) -> dict:
    meta = prof.meta
    if prof.is_summary:
        nnodes = None
    elif ppn:
        nnodes = -(-prof.nranks // ppn)
    elif prof.is_partial:
        # the nodes of the ranks that answered (a rank that did not may be on any node)
        node = prof.ranks["node"]
        if (meta.get("snapshot") or {}).get("node_unknown_count"):
            node = node[np.unique(prof.inflight["rank"])]    # every answering rank has a record
        nnodes = int(len(np.unique(node)))
    else:
        nnodes = int(len(np.unique(prof.ranks["node"]))) if prof.nranks else 0
    return {
        "path": prof.path, "program": _text(meta.get("program")),
        "argv": [str(a) for a in meta["argv"]] if isinstance(meta.get("argv"), list) else None,
        "nranks": prof.nranks, "mode": prof.mode, "nnodes": nnodes, "ppn_model": ppn,
        "partial": bool(prof.flags & fmt.FLAG_PARTIAL),
        "overflow": bool(prof.flags & fmt.FLAG_OVERFLOW),
        "sync": bool(prof.flags & fmt.FLAG_SYNC),
        "start_time": prof.start_time, "mpi_library": _text(meta.get("mpi_library")),
        "mpi_library_line": _first_line(_text(meta.get("mpi_library"))),
        "job_id": _text(meta.get("job_id")), "hostname": _text(meta.get("hostname")),
        "runtime_version": _text(meta.get("runtime_version")),
    }


def _first_line(text: str | None) -> str | None:
    """The version line of MPI_Get_library_version's text (MPICH's goes on with ten lines
    of configure options), its whitespace (MPICH's tab) made single spaces."""
    for line in (text or "").splitlines():
        if line.strip():
            return " ".join(line.split())
    return None


def _summary_rows_from_ranks(prof: Profile) -> list[dict]:
    return [{"metric": key, "label": label, **rank_stats(prof.rank_metric(key))}
            for key, label in SUMMARY_ROWS]


def _summary_rows_from_summary(prof: Profile) -> list[dict]:
    summ = prof.summary
    level = summ[summ["func"] == fmt.SUMMARY_RANK_LEVEL]
    rows = []
    for key, label in SUMMARY_ROWS:
        rec = level[level["metric"] == fmt.RANK_METRICS.index(key)]
        stats = summary_stats(rec[0], prof.nranks) if len(rec) else {
            "min": 0.0, "max": 0.0, "avg": 0.0, "sum": 0.0, "min_pe": None, "max_pe": None,
            "imbalance_pct": 0.0}
        rows.append({"metric": key, "label": label, **stats})
    return rows


def _p2p(prof: Profile, ppn: int | None) -> dict:
    if prof.is_summary:
        summ = prof.summary
        level = summ[summ["func"] == fmt.SUMMARY_RANK_LEVEL]
        t = {}
        for key in ("on_node_msgs", "on_node_bytes", "off_node_msgs", "off_node_bytes"):
            rec = level[level["metric"] == fmt.RANK_METRICS.index(key)]
            t[key] = int(round(float(rec["sum"][0]))) if len(rec) else 0
        out = comm._with_totals(t)
        out["source"] = "summary"
    elif ppn:
        out = comm.traffic_from_peers(prof.peers, prof.node_of_rank(ppn))
        out["source"] = "peers"
    else:
        out = comm.traffic_from_ranks(prof.ranks)
        out["source"] = "ranks"
    out["ppn_model"] = ppn
    return out


def _descendants(regions: np.ndarray, ids: list[int]) -> dict[int, set[int]]:
    """Region id -> itself and every region nested in it (from REGIONS parent links).

    Arguments:
        regions: fmt.REGION records; ids: the distinct region ids among them.
    """
    children: dict[int, set[int]] = {}
    for rid in ids:  # one vectorized pass per region: there are few regions, many records
        for parent in np.unique(regions["parent"][regions["region"] == rid]).tolist():
            children.setdefault(parent, set()).add(rid)
    out = {}
    for rid in ids:
        seen, todo = {rid}, [rid]
        while todo:
            for c in children.get(todo.pop(), ()):
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        out[rid] = seen
    return out


def _regions(prof: Profile, only: int | None, mpi_total: float,
             nested: dict[int, set[int]] | None) -> list[dict]:
    names, kinds = prof.functions, prof.function_kinds
    rnames = prof.region_names
    out = []
    if prof.is_summary:
        summ = prof.summary
        fsumm = summ[(summ["func"] != fmt.SUMMARY_RANK_LEVEL) & (summ["region"] != 0)]
        for rid in np.unique(fsumm["region"]).tolist():
            if only is not None and rid != only:
                continue
            mine = fsumm[fsumm["region"] == rid]
            out.append({"name": rnames.get(rid, f"{rid:016x}"), "id": f"{rid:016x}",
                        "depth": None, "parent": None, "entries": None, "wall": None,
                        "mpi": None,
                        "functions": summary_function_table(mine, prof.nranks, names, kinds,
                                                            mpi_total)})
        return out
    regs = prof.regions
    if len(regs) == 0:
        return out
    ids = np.unique(regs["region"]).tolist()
    funcs = prof.funcs
    for rid in ids:
        if only is not None and rid != only:
            continue
        mine = regs[regs["region"] == rid]
        inside = np.isin(funcs["region"], np.fromiter(nested[rid], np.uint64))
        parent = int(mine["parent"][0])
        out.append({
            "name": rnames.get(rid, f"{rid:016x}"), "id": f"{rid:016x}",
            "depth": int(mine["depth"].min()),
            "parent": rnames.get(parent, f"{parent:016x}") if parent else None,
            "ranks": int(len(mine)),
            "entries": int(mine["entries"].sum(dtype=np.uint64)),
            "wall": sparse_rank_stats(mine["rank"], mine["wall"], prof.nranks),
            "mpi": sparse_rank_stats(funcs["rank"][inside], funcs["time"][inside], prof.nranks),
            "functions": function_table(funcs, prof.nranks, names, kinds, mpi_total,
                                        funcs["region"] == rid),
        })
    return _tree_order(out)


def _tree_order(regions: list[dict]) -> list[dict]:
    """Regions depth-first: each parent before its children, siblings by total wall time."""
    kids: dict[str | None, list[dict]] = {}
    for r in sorted(regions, key=lambda r: (-r["wall"]["sum"], r["name"])):
        kids.setdefault(r["parent"], []).append(r)
    names = {r["name"] for r in regions}
    out: list[dict] = []
    todo = [r for p, rs in kids.items() if p is None or p not in names for r in rs][::-1]
    while todo:
        r = todo.pop()
        out.append(r)
        todo.extend(kids.get(r["name"], [])[::-1])
    return out


def _warnings(prof: Profile, ppn: int | None) -> list[str]:
    w = []
    if prof.flags & fmt.FLAG_PARTIAL:
        w.append("partial profile: a snapshot, not written at MPI_Finalize")
    if not prof.is_summary and len(prof.ranks):
        ovf = prof.ranks["overflow"]
        for bit, table in fmt.OVERFLOW_BITS.items():
            n = int(np.count_nonzero(ovf & bit))
            first = f"(first: rank {int(np.flatnonzero(ovf & bit)[0])})" if n else ""
            if n and table in fmt.OVERFLOW_NOTES:
                w.append(f"{n} rank(s) {fmt.OVERFLOW_NOTES[table]} {first}")
            elif n:
                w.append(f"{n} rank(s) filled their {table} table: some data was dropped {first}")
        over = np.flatnonzero(prof.ranks["mpi"] > prof.ranks["wall"])
        if len(over):
            threads = int(prof.ranks["threads"][over].max())
            why = f" (MPI time is summed over the {threads} threads that called MPI)" \
                if threads > 1 else ""
            w.append(f"{len(over)} rank(s) spent more time in MPI than their wall time{why}, "
                     f"so their compute time is negative (first: rank {int(over[0])})")
    elif prof.flags & fmt.FLAG_OVERFLOW:
        w.append("some rank filled a fixed table: some data was dropped")
    if not prof.is_summary and not ppn and prof.nranks > 1 and len(prof.peers) and \
            len(np.unique(prof.ranks["node"])) == 1:
        w.append("all ranks ran on one node, so every message is on-node; "
                 "--ppn N models N consecutive ranks per node")
    return w
