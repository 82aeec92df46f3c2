"""The page of ``mpiscope compare A B --html``: the compare dict's tables with the
changes coloured, and the two profiles' views side by side.

Numbers come from the compare dict (``mpiscope.compare.compare``, schema in
docs/compare.md); the side-by-side figures reuse the single-profile views
(:mod:`.profile_page`) so A and B are drawn exactly as on their own pages,
with the same y range for the per-rank stacks.
"""

from __future__ import annotations

from ..report.tables import fmt_bytes, fmt_count, fmt_pe, fmt_time
from . import charts, page, tables
from .explain import POP_METRICS
from .matrix import block_matrix
from .page import Markup, cell
from .profile_page import rank_parts, rank_views
from .timeline import compare_section as timeline_compare_section

# A change smaller than this (% of A) is not coloured: timing noise.
NOISE_PCT = 5.0


def _change_cell(ch: dict, higher_is_worse: bool = True, fmt=fmt_time, pct: bool = True):
    """The change of a CHANGE dict as a cell: "+12.3%" (or the delta), coloured worse/better."""
    d, cp = ch.get("delta"), ch.get("change_pct")
    if d is None:
        return cell("-", None)
    shown = f"{cp:+.1f}%" if pct and cp is not None else (
        ("+" if d > 0 else "") + fmt(d) if fmt is not None else f"{d:+.3g}")
    cls = None
    big = abs(cp) > NOISE_PCT if cp is not None else d != 0
    if big:
        cls = "worse" if (d > 0) == higher_is_worse else "better"
    return cell(shown, cp if cp is not None else d, cls=cls)


def _ab(ch: dict, fmt=fmt_time) -> list:
    return [cell(fmt(ch.get("a")), ch.get("a")), cell(fmt(ch.get("b")), ch.get("b"))]


def _moved(pe: dict) -> str:
    """maxPE in A -> in B ("-" where a run has none)."""
    return f"{fmt_pe(pe.get('a'))} -> {fmt_pe(pe.get('b'))}"


def _pct_value(v):
    return "-" if v is None else f"{100.0 * v:.1f}%"


def _sides(c: dict) -> Markup:
    cols = []
    for key in ("a", "b"):
        s = c[key]
        cols.append(page.el("div", page.el("h3", key.upper()), page.facts([
            ("Program", s["program"] or "?"),
            ("Arguments", tables.arguments_text(s.get("argv"))),
            ("Profile", s["path"] or None), ("Processes", f"{s['nranks']:,}"),
            ("Mode", s["mode"] + (", MPISCOPE_SYNC on" if s.get("sync") else "")),
            ("Runtime", f"{fmt_time(s['runtime'])} s"), ("MPI library", s.get("mpi_library_line"))])))
    return page.side_by_side(*cols)


def _summary_table(c: dict) -> Markup:
    rows = [[m["label"], *_ab(m["avg"]), _change_cell(m["avg"]), *_ab(m["max"]),
             _change_cell(m["max"]),
             *_ab(m["imbalance_pct"], lambda v: "-" if v is None else f"{v:.1f}%"),
             _moved(m["max_pe"])] for m in c["summary"]]
    return page.table(["seconds per rank", "avg A", "avg B", "change", "max A", "max B", "change",
                       "imb. A", "imb. B", "maxPE"], rows,
                      caption="Profile summary, A -> B (red: worse by more than 5 %, "
                              "green: better)")


def _pop_table(c: dict) -> Markup | None:
    pop = c.get("pop") or {}
    if not pop.get("whole"):
        return None
    rows = []
    for scope, metrics in [("whole run", pop["whole"])] + [(r["name"], r)
                                                             for r in pop.get("regions", [])]:
        row = [scope]
        for k, _ in POP_METRICS:
            ch = metrics.get(k) or {}
            a, b, d = ch.get("a"), ch.get("b"), ch.get("delta")
            cls = None
            if d is not None and abs(d) > NOISE_PCT / 100:
                cls = "better" if d > 0 else "worse"
            row.append(cell(f"{_pct_value(a)} -> {_pct_value(b)}", d, cls=cls))
        rows.append(row)
    return page.table(["scope", *(label for _, label in POP_METRICS)], rows,
                      caption="POP efficiency metrics, A -> B (1 = ideal; a fall is worse)")


def _functions_table(c: dict) -> Markup:
    rows = []
    for f in c["functions"]:
        name = f["name"] + ("" if f["in"] == "both" else f" (only {f['in'].upper()})")
        rows.append([name, *_ab(f["time"]), _change_cell(f["time"]),
                     *_ab(f["calls"], lambda v: fmt_count(round(v)) if v is not None else "-"),
                     *_ab(f["bytes"], lambda v: fmt_bytes(round(v)) if v is not None else "-"),
                     _change_cell(f["bytes"]),
                     *_ab(f["imbalance_pct"], lambda v: "-" if v is None else f"{v:.1f}%"),
                     _moved(f["max_pe"])])
    return page.table(["Function", "time A", "time B", "change", "calls A", "calls B", "bytes A",
                       "bytes B", "change", "imb. A", "imb. B", "maxPE"], rows,
                      caption="MPI functions per rank (average over ranks), biggest growth "
                              "first; click a header to sort")


def _regions_table(c: dict) -> Markup | None:
    if not c["regions"]:
        return None
    rows = [[r["name"] + ("" if r["in"] == "both" else f" (only {r['in'].upper()})"),
             *_ab(r["wall"]), _change_cell(r["wall"]), *_ab(r["mpi"]), _change_cell(r["mpi"]),
             _moved(r["wall_max_pe"])] for r in c["regions"]]
    return page.table(["Region", "wall A", "wall B", "change", "MPI A", "MPI B", "change",
                       "wall maxPE"], rows,
                      caption="Regions: wall and MPI time per rank (average, inclusive)")


def _ranks_part(c: dict) -> list[Markup]:
    r = c["ranks"]
    out = [page.para("maxPE moved: ", "; ".join(f"{k}: {_moved(v)}"
                                                  for k, v in r["max_pe"].items()))]
    if r["mpi_grew"]:
        out.append(page.table(["rank", "MPI time A", "MPI time B", "growth"],
                              [[cell(str(x["rank"]), x["rank"]), cell(fmt_time(x["a"]), x["a"]),
                                cell(fmt_time(x["b"]), x["b"]),
                                cell(fmt_time(x["delta"]), x["delta"], cls="worse")]
                               for x in r["mpi_grew"]],
                              caption="Ranks whose MPI time grew most"))
    elif r.get("why_not"):
        out.append(page.note(r["why_not"]))
    return out


def _side_views(prof_a, rep_a, prof_b, rep_b, ppn) -> list[Markup]:
    """Per-rank stacks (same y range), matrices and size histograms of A and B side by side."""
    out = []
    full = [not p.is_summary and len(p.ranks) > 0 for p in (prof_a, prof_b)]
    if all(full):
        parts = [rank_parts(p) for p in (prof_a, prof_b)]
        ymax = max(float(sum(x.values()).max()) for x in parts) * 1.05
        figs = []
        for key, prt, rep in (("A", parts[0], rep_a), ("B", parts[1], rep_b)):
            stats = next(r for r in rep["summary"] if r["metric"] == "compute")
            figs.append(rank_views(prt, "compute", stats, f"{key}: time per rank", "compute",
                                   ymax=ymax))
        out.append(page.section("Per rank, A | B", page.note(
            "The same y range on both sides; rank order above, sorted by compute time below."),
            page.side_by_side(figs[0][0], figs[1][0]), page.side_by_side(figs[0][1], figs[1][1]),
            anchor="ranks", level=2))
    else:
        out.append(page.section("Per rank, A | B", page.note(
            "Per-rank views need full-mode profiles on both sides."), anchor="ranks"))
    mats = []
    for key, prof in (("A", prof_a), ("B", prof_b)):
        if prof.is_summary or not len(prof.peers):
            mats.append(page.note(f"{key}: no per-peer records"))
            continue
        bm = block_matrix(prof.peers, prof.nranks,
                          prof.node_of_rank(ppn) if len(prof.ranks) else None)
        what = "per rank" if bm.block == 1 else f"in blocks of {bm.block:,} ranks"
        mats.append(page.figure(charts.heatmap(bm, f"{key}: bytes sent, {what}"), height=460))
    traffic = [tables.traffic_table(rep["p2p"]) if rep["p2p"]["total_msgs"]
               else page.note("no point-to-point traffic") for rep in (rep_a, rep_b)]
    out.append(page.section("Communication, A | B", page.side_by_side(*mats),
                            page.side_by_side(*traffic), anchor="comm"))
    hists = [page.figure(charts.size_histogram(rep["histogram"], f"{key}: calls per message "
                                               "size")) if rep["histogram"]
             else page.note(f"{key}: no message sizes") for key, rep in (("A", rep_a),
                                                                        ("B", rep_b))]
    out.append(page.section("Message sizes, A | B", page.side_by_side(*hists), anchor="sizes"))
    return out


def _environment_part(c: dict):
    """What changed in the environment (variables, binding, threads, the launch)."""
    from ..compare.environment import change_lines

    env = c.get("environment")
    if not env:
        return None
    lines = change_lines(env)
    body = page.el("ul", *(page.el("li", line) for line in lines)) if lines else page.para(
        "The same in A and B" + ("." if env["available"] else f" as far as known: {env['why_not']}."))
    return page.section("Environment, A -> B", body, anchor="environment")


def compare_page(c: dict, prof_a, rep_a, prof_b, rep_b, ppn: int | None = None) -> str:
    """The whole HTML page of a comparison (``c`` from ``mpiscope.compare.compare``)."""
    worse = [page.el("li", w) for w in c["worse"]]
    head = [page.para("warning: ", w, cls="warn") for w in c["warnings"]] + \
        [page.note(n) for n in c["notes"]]
    sections = [
        page.section("Runs", _sides(c), *head, anchor="runs"),
        _environment_part(c),
        page.section("Worse in B", page.el("ul", *worse, cls="worse") if worse
                     else page.para("Nothing got worse in B."), anchor="worse"),
        page.section("POP metrics", _pop_table(c), anchor="pop") if _pop_table(c) else None,
        page.section("Summary", _summary_table(c), anchor="summary"),
        page.section("MPI functions", _functions_table(c), anchor="functions"),
        page.section("Regions", _regions_table(c), anchor="regions") if c["regions"] else None,
        page.section("Ranks", *_ranks_part(c), anchor="moved"),
        timeline_compare_section(c, rep_a, rep_b),
        *_side_views(prof_a, rep_a, prof_b, rep_b, ppn),
    ]
    sections = [s for s in sections if s is not None]
    titles = {"runs": "Runs", "environment": "Environment", "worse": "Worse in B", "pop": "POP", "summary": "Summary",
              "functions": "Functions", "regions": "Regions", "moved": "Ranks",
              "timeline": "Timeline", "ranks": "Per rank", "comm": "Communication", "sizes": "Message sizes"}
    nav = [(a, label) for a, label in titles.items() if f'id="{a}"' in "".join(sections)]
    return page.document("mpiscope compare: A -> B", sections, nav=nav,
                         subtitle=f"A {c['a']['program'] or '?'} ({c['a']['nranks']:,} ranks) -> "
                                  f"B {c['b']['program'] or '?'} ({c['b']['nranks']:,} ranks)")
