"""The report dict's tables as sortable HTML tables (same numbers and formats as the terminal).

Cells show the terminal's formatting (``report.tables.fmt_*``) and sort by the
exact value.
"""

from __future__ import annotations

from ..report.tables import (ENV_TIME_ROWS, NA, affinity_caption, comm_texts, fmt_bytes, fmt_count,
                             fmt_pct, fmt_pe, fmt_time, fmt_utc, fmt_value, masks_text)
from . import page
from .page import Markup, cell



def arguments_text(argv: list[str] | None) -> str | None:
    """The program's arguments without the program itself (argv[0], shown as "Program"):
    "(none)" when there are none, None when the profile does not say."""
    if not argv:
        return None
    return " ".join(argv[1:]) or "(none)"

def _stat_cells(s: dict | None, fmt=fmt_time) -> list:
    if s is None:
        return ["-"] * 6
    return [cell(fmt(s["min"]), s["min"]), cell(fmt(s["max"]), s["max"]),
            cell(fmt(s["avg"]), s["avg"]), cell(fmt_pe(s["min_pe"]), s["min_pe"]),
            cell(fmt_pe(s["max_pe"]), s["max_pe"]),
            cell(fmt_pct(s["imbalance_pct"]), s["imbalance_pct"])]


STAT_COLUMNS = ["min", "max", "avg", "minPE", "maxPE", "imb."]


def run_facts(rep: dict) -> Markup:
    """Program, arguments, ranks, nodes, mode, MPI library, start, job, host, runtime."""
    p = rep["profile"]
    nodes = None if p["nnodes"] is None else f"{p['nnodes']:,}" + (
        f" (modelled as {p['ppn_model']} ranks per node)" if p["ppn_model"] else "")
    when = fmt_utc(p["start_time"]) if p["start_time"] else None
    flags = ", ".join(f for f, on in (("partial (snapshot)", p["partial"]),
                                      ("a table overflowed", p["overflow"]),
                                      ("MPISCOPE_SYNC on", p["sync"])) if on) or None
    return page.facts([
        ("Program", p["program"] or "?"), ("Arguments", arguments_text(p["argv"])),
        ("Profile", p["path"] or None), ("Processes", f"{p['nranks']:,}"), ("Nodes", nodes),
        ("Mode", p["mode"]), ("Flags", flags), ("MPI library", p["mpi_library_line"]),
        ("Started", when), ("Job", p["job_id"]), ("Host (rank 0)", p["hostname"]),
        ("Runtime", p["runtime_version"])])


def summary_table(rep: dict) -> Markup:
    rows = [[row["label"], *_stat_cells(row)] for row in rep["summary"]]
    return page.table(["seconds per rank", *STAT_COLUMNS], rows,
                      caption="Profile summary (Cray profiler wording)")


def function_table(rows: list[dict], caption: str) -> Markup:
    """The per-function table of the report (``rep["functions"]`` or a region's)."""
    out = []
    for r in rows:
        s = r["time_per_rank"] or {}
        out.append([r["name"], cell(fmt_pct(r["pct_mpi"]), r["pct_mpi"]),
                    cell(fmt_time(r["time"]), r["time"]), cell(fmt_count(r["calls"]), r["calls"]),
                    cell(fmt_bytes(r["bytes_sent"]), r["bytes_sent"]),
                    cell(fmt_bytes(r["bytes_recv"]), r["bytes_recv"]),
                    cell(fmt_time(s.get("avg")), s.get("avg")),
                    cell(fmt_time(s.get("min")), s.get("min")),
                    cell(fmt_time(s.get("max")), s.get("max")),
                    cell(fmt_pe(s.get("min_pe")), s.get("min_pe")),
                    cell(fmt_pe(s.get("max_pe")), s.get("max_pe")),
                    cell(fmt_pct(s.get("imbalance_pct")), s.get("imbalance_pct"))])
    return page.table(["Function", "% MPI", "total time", "calls", "bytes sent", "bytes recv",
                       "avg/rank", "min/rank", "max/rank", "minPE", "maxPE", "imb."], out,
                      caption=caption)


def histogram_table(rows: list[dict]) -> Markup:
    total = sum(r["count"] for r in rows) or 1
    out = [[cell("0" if r["bucket"] == 0 else f"{fmt_bytes(r['lo'])} - {fmt_bytes(r['hi'])}",
                 r["lo"]),
            cell(fmt_count(r["count"]), r["count"]),
            cell(fmt_pct(100.0 * r["count"] / total), r["count"]),
            cell(fmt_time(r["time"]), r["time"]),
            ", ".join(f"{n} {fmt_count(c)}" for n, c in
                      sorted(r["by_function"].items(), key=lambda kv: (-kv[1], kv[0])))]
           for r in rows]
    return page.table(["bytes", "calls", "% calls", "time", "functions"], out,
                      caption="Message sizes (calls per log2 bucket, all ranks)")


def traffic_table(p2p: dict) -> Markup:
    tm, tb = p2p["total_msgs"] or 1, p2p["total_bytes"] or 1
    out = []
    for label, key in (("on-node", "on_node"), ("off-node", "off_node")):
        m, b = p2p[f"{key}_msgs"], p2p[f"{key}_bytes"]
        out.append([label, cell(fmt_count(m), m), cell(fmt_bytes(b), b),
                    fmt_pct(100.0 * m / tm), fmt_pct(100.0 * b / tb)])
    out.append(["total", fmt_count(p2p["total_msgs"]), fmt_bytes(p2p["total_bytes"]), "", ""])
    return page.table(["", "messages", "bytes", "% messages", "% bytes"], out, sortable=False)


def pairs_table(rows: list[dict]) -> Markup:
    out = [[cell(f"{r['a']} <-> {r['b']}", r["a"]), cell(fmt_count(r["msgs"]), r["msgs"]),
            cell(fmt_bytes(r["bytes"]), r["bytes"]), cell(fmt_bytes(r["bytes_ab"]), r["bytes_ab"]),
            cell(fmt_bytes(r["bytes_ba"]), r["bytes_ba"]),
            "-" if "on_node" not in r else ("on" if r["on_node"] else "off")] for r in rows]
    return page.table(["ranks", "messages", "bytes", "bytes a->b", "bytes b->a", "node"], out,
                      caption="Top communicating pairs (both directions)")


def region_stats_table(reg: dict) -> Markup:
    rows = []
    if reg.get("wall") is not None:
        rows.append(["Region wall time (inclusive)", *_stat_cells(reg["wall"])])
    if reg.get("mpi") is not None:
        rows.append(["MPI time in region (inclusive)", *_stat_cells(reg["mpi"])])
    return page.table(["seconds per rank", *STAT_COLUMNS], rows)


def io_table(files: list[dict]) -> Markup:
    keys = sorted({k for f in files for k in f if k != "name"})
    out = [[str(f.get("name", "?")), *("-" if f.get(k) is None else str(f[k]) for k in keys)]
           for f in files]
    return page.table(["file", *keys], out,
                      caption="MPI-IO files and hints (rank 0's view after MPI_File_open)")


def mpit_table(mpit: dict) -> Markup:
    """MPI_T performance variables (``rep["mpit"]``), as the terminal shows them."""
    out = []
    for v in mpit["variables"]:
        rows = [("at end", v["value"])] + ([("peak", v["peak"])] if v.get("kind") == "level" else [])
        for label, s in rows:
            s = s or {}
            out.append([v["name"], label,
                        *(cell(fmt_value(s.get(k)), s.get(k)) for k in ("min", "max", "avg")),
                        cell(fmt_pe(s.get("min_pe")), s.get("min_pe")),
                        cell(fmt_pe(s.get("max_pe")), s.get("max_pe")), v.get("what") or ""])
    return page.table(["variable", "", "min", "max", "avg", "minPE", "maxPE", "what"], out,
                      caption="MPI_T performance variables (per rank; peak = highest sample "
                              "of a level)")


def environment_table(env: dict) -> Markup:
    """MPI_Init, MPI_Finalize and CPU time per rank (``rep["environment"]``)."""
    rows = [[label.strip(), *_stat_cells(env[key])] for key, label in ENV_TIME_ROWS]
    return page.table(["seconds per rank", *STAT_COLUMNS], rows,
                      caption="MPI_Init, MPI_Finalize and CPU time")


def affinity_table(env: dict) -> Markup:
    """CPU affinity per node: which ranks run on which CPUs, and the binding problems."""
    out = []
    for n in env["nodes"]:
        out.append([cell(str(n["node"]), n["node"]), n["hostname"] or NA,
                    cell(fmt_count(n["ranks"]), n["ranks"]), masks_text(n),
                    cell(fmt_count(n["unbound"]), n["unbound"]),
                    cell(fmt_count(n["overlap"]), n["overlap"]),
                    cell(f"{n['load_max']:.2g}", n["load_max"])])
    return page.table(["node", "host", "ranks", "masks (ranks: CPUs x threads)", "unbound",
                       "overlap", "threads/CPU"], out,
                      caption=affinity_caption(env))


def comm_table(rows: list[dict]) -> Markup:
    """MPI per communicator (``rep["communicators"]``), members as world ranks."""
    out = []
    for r in rows:
        size, members, funcs = comm_texts(r)
        out.append([r["name"], cell(size, r["size"]), members,
                    cell(fmt_pct(r["pct_mpi"]), r["pct_mpi"]), cell(fmt_time(r["time"]), r["time"]),
                    cell(fmt_count(r["calls"]), r["calls"]),
                    cell(fmt_bytes(r["bytes_sent"]), r["bytes_sent"]),
                    cell(fmt_bytes(r["bytes_recv"]), r["bytes_recv"]), funcs])
    return page.table(["communicator", "size", "members", "% MPI", "total time", "calls",
                       "bytes sent", "bytes recv", "functions"], out,
                      caption="MPI per communicator (whole run; members as world ranks)")


def callsites_table(cs: dict) -> Markup:
    """Every call site (``rep["callsites"]``): where, parent function, totals, time per rank."""
    deep = (cs.get("depth") or 1) > 1
    from ..report.tables import callsite_frame_text
    out = []
    for r in cs["rows"]:
        s = r["time_per_rank"]
        callers = " < ".join(callsite_frame_text(f) for f in r["frames"][1:])
        inlined = "; ".join(f"inlined in {i['function'] or '?'} at "
                            f"{(i['file'] or '?').rsplit('/', 1)[-1]}:{i['line'] or '?'}"
                            for f in r["frames"][:1] for i in f["inlined_in"])
        out.append([cell(str(r["rank_by_time"]), r["rank_by_time"]), r["function"], r["location"],
                    r["parent"] or NA, *([callers or NA] if deep else []), inlined or NA,
                    cell(fmt_pct(r["pct_mpi"]), r["pct_mpi"]), cell(fmt_time(r["time"]), r["time"]),
                    cell(fmt_count(r["calls"]), r["calls"]),
                    cell(fmt_bytes(r["bytes_sent"] + r["bytes_recv"]), r["bytes_sent"] + r["bytes_recv"]),
                    *_stat_cells(s), cell(fmt_time(r["call_time_max"]), r["call_time_max"])])
    return page.table(["#", "function", "site", "parent function", *(["called from"] if deep else []),
                       "inlined", "% MPI", "total time", "calls", "bytes", *STAT_COLUMNS,
                       "slowest call"], out,
                      caption="Call sites, most time first (time per rank in seconds); click a "
                              "header to sort")


def samples_table(sm: dict) -> Markup:
    """Compute by function (``rep["samples"]``): share of the compute samples with its
    standard error, estimated CPU seconds per rank."""
    from ..report.samples import where
    out = []
    for r in sm["functions"]:
        out.append([cell(str(r["rank_by_samples"]), r["rank_by_samples"]), r["function"],
                    where(r), cell(fmt_pct(100 * r["share"]), r["share"]),
                    cell(fmt_pct(100 * r["share_se"]), r["share_se"]),
                    cell(fmt_count(r["samples"]), r["samples"]), *_stat_cells(r["time_per_rank"])])
    return page.table(["#", "function", "where", "% compute", "±", "samples", *STAT_COLUMNS], out,
                      caption=f"Compute by function (sampled at {sm['hz']:g} Hz; estimated CPU "
                              "seconds per rank), most samples first; click a header to sort")


def sample_threads_table(rows: list[dict]) -> Markup:
    """Ranks sampled on more than one thread: each thread's compute and its top functions."""
    out = [[cell(str(t["rank"]), t["rank"]), cell(str(t["thread"]), t["thread"]),
            cell(fmt_time(t["seconds"]), t["seconds"]),
            ", ".join(f"{f['function']} {fmt_time(f['seconds'])}" for f in t["functions"])]
           for t in rows]
    return page.table(["rank", "thread", "compute (s)", "most sampled functions (s)"], out,
                      caption="Per thread, where a rank was sampled on more than one thread")

