"""The page of one profile: every view of ``mpiscope html``, as a list of sections.

Reads the Profile only for per-rank arrays (downsampled in :mod:`.ranks`) and
the PEERS records (aggregated in :mod:`.matrix`); every other number comes
from the report dict, the POP dict (``rep["pop"]``) and the diagnosis dict.
"""

from __future__ import annotations

import numpy as np

from ..profile import Profile
from ..report.build import _descendants
from ..report.tables import environment_lines, fmt_bytes, samples_lines
from . import charts, page, tables
from .escape import plot_text
from .explain import diagnosis_section, pop_section
from .matrix import block_matrix
from .page import Markup
from .ranks import NBUCKETS, bucketize, position_of, sort_order
from .timeline import timeline_section


def rank_parts(prof: Profile) -> dict[str, np.ndarray]:
    """Per-rank stack: compute + MPI (other) + wait + sync = wall time.

    MPI time includes wait and sync time (docs/report.md), so the "other" part
    is what remains; parts are clipped at 0 (a multi-threaded rank's MPI time
    can exceed its wall time, which the report warns about).
    """
    wall = prof.rank_metric("wall")
    mpi, wait, sync = (prof.rank_metric(k) for k in ("mpi", "wait", "sync"))
    return {"compute": np.maximum(wall - mpi, 0.0),
            "mpi_other": np.maximum(mpi - wait - sync, 0.0),
            "wait": np.maximum(wait, 0.0), "sync": np.maximum(sync, 0.0)}


def _stat(rep: dict, metric: str) -> dict:
    return next(r for r in rep["summary"] if r["metric"] == metric)


def rank_views(parts: dict[str, np.ndarray], key: str, key_stats: dict, title: str,
               anchor_text: str, nbuckets: int = NBUCKETS, sort: bool = True,
               ymax: float | None = None) -> list[Markup]:
    """The stack in rank order and (if ``sort``) sorted by ``key`` (largest first),
    with the minPE and maxPE of ``key`` marked; ``ymax`` fixes the y range (to compare
    two runs)."""
    total = sum(parts.values())
    n = len(total)
    out = []
    orders = [(None, None)] + ([(sort_order(parts[key]), anchor_text)] if sort else [])
    for order, sorted_by in orders:
        b = bucketize(parts, order, nbuckets)
        marks = []
        pes = [(key_stats.get(k), label) for k, label in (("max_pe", "maxPE"), ("min_pe", "minPE"))]
        if pes[0][0] is not None and pes[0][0] == pes[1][0]:
            pes = [(pes[0][0], "maxPE and minPE")]  # one rank (or all equal): one label, not two
        for rank, label in pes:
            if rank is None or not 0 <= rank < n:
                continue
            pos = rank if order is None else position_of(order, rank)
            marks.append((pos, float(total[rank]), f"{label} {rank} ({anchor_text})"))
        how = "" if b.exact else f" (average of {int(b.size.max()):,} ranks per bar, " \
                                 "min and max kept)"
        out.append(page.figure(charts.rank_stack(
            b, plot_text(title) + ("" if sorted_by is None else ", sorted") + how,
            sorted_by, marks, ymax), height=380))
    return out


def _per_rank_section(prof: Profile, rep: dict) -> Markup:
    if prof.is_summary or len(prof.ranks) == 0:
        return page.section("Per rank", page.note(
            "A summary-mode profile has no per-rank rows: the runtime kept min/max/avg "
            "and minPE/maxPE only (see the summary table)."), anchor="ranks")
    parts = rank_parts(prof)
    figs = rank_views(parts, "compute", _stat(rep, "compute"),
                      "Time per rank: compute, MPI, wait, collective sync", "compute")
    return page.section(
        "Per rank", page.note(
            "Each bar is one rank's wall time split into compute (wall - MPI), wait and probe "
            "time, collective sync time (MPISCOPE_SYNC barriers) and the rest of its MPI time. "
            "Above 500 ranks a bar is the average of consecutive ranks; the markers give "
            "each bar's min and max rank, so no extreme rank is hidden."), *figs,
        anchor="ranks")


def _collective_bytes(rep: dict, top: int = 4) -> list[tuple[str, float]]:
    """(collective, bytes its calls sent over all ranks), largest first, at most ``top``."""
    rows = sorted(((r["name"], float(r["bytes_sent"])) for r in rep["functions"]
                   if r["kind"] == "coll" and r["bytes_sent"]), key=lambda x: -x[1])
    return rows[:top]


def _comm_section(prof: Profile, rep: dict, ppn: int | None) -> Markup | None:
    p2p = rep["p2p"]
    parts = []
    if not prof.is_summary and len(prof.peers):
        bm = block_matrix(prof.peers, prof.nranks,
                          prof.node_of_rank(ppn) if len(prof.ranks) else None)
        what = "per rank" if bm.block == 1 else f"in blocks of {bm.block:,} ranks"
        parts.append(page.figure(charts.heatmap(
            bm, f"Point-to-point bytes sent, sender x receiver, {what}"),
            height=560, cls="plot square"))
        parts.append(page.note(
            "On-node runs of ranks are outlined." if bm.outlines else
            f"No on-node outlines: {bm.outline_why}. The split below counts on- and off-node "
            "traffic exactly."))
    coll = _collective_bytes(rep)
    if coll:
        parts.append(page.note(
            "The matrix and the split are point-to-point traffic only: the profile keeps no "
            "partner for a collective's bytes. Collectives moved " + "; ".join(
                f"{name} {fmt_bytes(b)}" for name, b in coll) + " (sent, all ranks)."))
    if p2p["total_msgs"]:
        parts.append(page.figure(charts.traffic(p2p, "On-node vs off-node point-to-point"),
                                 height=220))
        parts.append(tables.traffic_table(p2p))
    if rep["top_pairs"]:
        parts.append(tables.pairs_table(rep["top_pairs"]))
    if not parts:
        return None
    return page.section("Communication", *parts, anchor="comm")


def _region_rank_parts(prof: Profile, rid: int, nested: set[int]) -> dict[str, np.ndarray]:
    regs = prof.regions
    wall = np.bincount(regs["rank"][regs["region"] == rid].astype(np.int64),
                       weights=regs["wall"][regs["region"] == rid], minlength=prof.nranks)
    # One comparison per nested region (a few) is faster than np.isin's sort of 10^6 ids.
    inside = np.zeros(len(prof.funcs), bool)
    for r in nested:
        inside |= prof.funcs["region"] == np.uint64(r)
    mpi = np.bincount(prof.funcs["rank"][inside].astype(np.int64),
                      weights=prof.funcs["time"][inside], minlength=prof.nranks)
    return {"compute": np.maximum(wall - mpi, 0.0), "mpi": mpi}


def _regions_section(prof: Profile, rep: dict) -> Markup | None:
    if not rep["regions"]:
        return None
    nested = {}
    if not prof.is_summary and len(prof.regions):
        ids = np.unique(prof.regions["region"]).tolist()
        nested = _descendants(prof.regions, ids)
    subs = []
    for reg in rep["regions"]:
        head = f"depth {reg['depth']}" if reg.get("depth") is not None else "summary mode"
        if reg.get("parent"):
            head += f", inside {reg['parent']}"
        if reg.get("entries") is not None:
            head += f", {reg['entries']:,} entries on {reg.get('ranks', 0):,} ranks"
        parts = [page.note(head)]
        if reg.get("wall") is not None:
            parts.append(tables.region_stats_table(reg))
        rid = int(reg["id"], 16)
        if rid in nested:
            mpi_stats = reg.get("mpi") or {}
            parts += rank_views(_region_rank_parts(prof, rid, nested[rid]), "mpi", mpi_stats,
                                f"Region {reg['name']}: time per rank", "MPI in region",
                                sort=False)
        if reg["functions"]:
            parts.append(tables.function_table(
                reg["functions"], "MPI functions in the region (exclusive of nested regions)"))
        subs.append(page.section(f"Region {reg['name']}", *parts, level=3))
    return page.section("Regions (MPI_Pcontrol)", page.note(
        "One view per region: its wall time and MPI time per rank (inclusive of nested "
        "regions) and its own function table."), *subs, anchor="regions")


# Call sites whose time per rank is drawn (most time first).
SITE_BARS = 3


def _callsites_section(prof: Profile, rep: dict) -> Markup | None:
    """Every call site in a sortable table, and the top sites' time per rank."""
    cs = rep.get("callsites")
    if not cs or not cs["rows"]:
        return None
    from ..report.callsites import site_rank_times
    parts = [tables.callsites_table(cs)] + [page.note(n) for n in cs["notes"]]
    for r in cs["rows"][:SITE_BARS]:
        t = site_rank_times(prof, r)
        if t is None:
            break
        parts += rank_views({"site": t}, "site", r["time_per_rank"],
                            f"{r['function']} at {r['location']}: its time per rank", "site time")
    if prof.is_summary:
        parts.append(page.note("A summary-mode profile has no per-rank rows: each site's "
                               "min/max/avg per rank and minPE/maxPE are in the table."))
    return page.section("Call sites", *parts, anchor="callsites")


def _samples_section(sm: dict | None) -> Markup | None:
    """Sampled compute by function (``mpiscope run --sample``): the table, the MPI share,
    and each rank's estimated CPU seconds stacked by its most sampled functions."""
    if not sm or sm.get("hz") is None:
        return None
    notes = [page.note(line) for line in samples_lines(sm)]
    if not sm["recorded"]:
        return page.section("Compute by function (sampled)", *notes, anchor="samples")
    parts = [tables.samples_table(sm), *notes]
    if sm["per_rank"] and sm["functions"]:
        top = sm["functions"][0]
        stack = {plot_text(f): np.asarray(sec, dtype=np.float64)
                 for f, sec in zip(sm["per_rank"]["functions"], sm["per_rank"]["seconds"])}
        parts += rank_views(stack, plot_text(top["function"]), top["time_per_rank"],
                            "Estimated CPU seconds per rank by function (sampled)",
                            plot_text(top["function"]))
    if sm["threads"]:
        parts.append(tables.sample_threads_table(sm["threads"]))
    return page.section("Compute by function (sampled)", *parts, anchor="samples")


def _mpit_section(mpit: dict | None) -> Markup | None:
    """MPI_T variables, or why there are none, when the run asked for them."""
    if not mpit or not mpit.get("recorded"):
        return None
    if mpit["variables"]:
        return page.section("MPI_T performance variables", tables.mpit_table(mpit), anchor="mpit")
    return page.section("MPI_T performance variables", page.para(f"MPI_T: {mpit['why_none']}"),
                        anchor="mpit")


def _environment_section(env: dict | None, nranks: int) -> Markup | None:
    """MPI_Init/MPI_Finalize time, OpenMP, CPU binding and tuning variables (report's
    Environment block), or why the profile has none."""
    if not env:
        return None
    if not env.get("available"):
        return page.section("Environment", page.para(env["why_not"]), anchor="environment")
    lines = [page.para(line) for line in environment_lines(env, nranks)]
    return page.section("Environment", tables.environment_table(env), *lines,
                        tables.affinity_table(env) if env["nodes"] else None,
                        anchor="environment")


def profile_sections(prof: Profile, rep: dict, diagnosis: dict | None,
                     ppn: int | None = None) -> tuple[list[Markup], list[tuple[str, str]]]:
    """Every section of one profile's page and the table-of-contents links.

    Arguments:
        prof: the profile (per-rank arrays, PEERS records).
        rep: its report dict (``build_report(prof, ppn=ppn)``), maybe with ``"pop"``.
        diagnosis: the diagnosis dict, or None when there is none.
        ppn: the ranks-per-node model of the report (node outlines follow it).
    """
    warn = [page.para("warning: ", w, cls="warn") for w in rep["warnings"]]
    sections = [
        page.section("Run", tables.run_facts(rep), *warn, tables.summary_table(rep),
                     anchor="run"),
        diagnosis_section(diagnosis),
        pop_section(rep.get("pop")),
        _per_rank_section(prof, rep),
        timeline_section(prof, rep),
        page.section("MPI functions", tables.function_table(
            rep["functions"], "MPI functions (time per rank in seconds); click a header to "
                              "sort"), anchor="functions") if rep["functions"] else None,
        _callsites_section(prof, rep),
        _samples_section(rep.get("samples")),
        _mpit_section(rep.get("mpit")),
        page.section("Communicators", tables.comm_table(rep["communicators"]), anchor="comms")
        if rep.get("communicators") else None,
        _comm_section(prof, rep, ppn),
        page.section("Message sizes", page.figure(charts.size_histogram(
            rep["histogram"], "Calls per message size, by function")),
            tables.histogram_table(rep["histogram"]), anchor="sizes")
        if rep["histogram"] else None,
        _regions_section(prof, rep),
        page.section("MPI-IO files", tables.io_table(rep["io_files"]), anchor="io")
        if rep["io_files"] else None,
        _environment_section(rep.get("environment"), prof.nranks),
    ]
    sections = [s for s in sections if s is not None]
    titles = {"run": "Run", "diagnosis": "Diagnosis", "pop": "POP", "ranks": "Per rank",
              "timeline": "Timeline", "functions": "Functions", "callsites": "Call sites",
              "samples": "Sampled compute", "mpit": "MPI_T",
              "comms": "Communicators",
              "comm": "Communication", "sizes": "Message sizes", "regions": "Regions",
              "io": "MPI-IO", "environment": "Environment"}
    nav = [(a, label) for a, label in titles.items() if f'id="{a}"' in "".join(sections)]
    return sections, nav


def profile_page(prof: Profile, rep: dict, diagnosis: dict | None,
                 ppn: int | None = None) -> str:
    """The whole HTML page of one profile (see :func:`profile_sections`)."""
    sections, nav = profile_sections(prof, rep, diagnosis, ppn)
    program = rep["profile"]["program"] or "?"
    return page.document(f"mpiscope: {program}", sections, nav=nav,
                         subtitle=f"{prof.nranks:,} ranks, {prof.mode} mode")
