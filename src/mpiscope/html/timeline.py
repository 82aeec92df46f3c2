"""The timeline on the HTML page: ranks x time heat map of the MPI share, the kinds' shares
stacked over time, the least / average / most MPI share per bin, the phases and bursts.

Numbers come from the report's "timeline" dict; only the heat map reads the profile's
per-rank bins (full mode), reduced once, in Python, to at most MAX_ROWS x MAX_COLS cells:
consecutive ranks averaged into row groups (as the communication matrix does) with the
whole run's extreme ranks (least and most MPI time) kept as rows of their own, bins
averaged into columns when there are more than MAX_COLS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..profile import Profile
from ..report.tables import fmt_time
from ..report.timeline import CHUNK
from . import page
from .escape import plot_text

MAX_ROWS = 256
MAX_COLS = 256
KIND_COLOURS = {"p2p": "#f58518", "wait": "#e45756", "coll": "#b279a2", "sync": "#72b7b2",
                "rma": "#9d755d", "io": "#eeca3b", "comm": "#bab0ac", "other": "#ff9da6",
                "compute": "#4c78a8"}


@dataclass
class RankTime:
    """The heat map's cells. z: [rows, cols] MPI share (time in MPI / time of the cells);
    labels: each row's ranks; start: each column's start (s); width: its seconds."""
    z: np.ndarray
    labels: list
    start: np.ndarray
    width: np.ndarray
    block: int


def _columns(nb: int, max_cols: int) -> np.ndarray:
    """First bin of each column (bins averaged into at most max_cols columns)."""
    return np.unique(np.linspace(0, nb, min(nb, max_cols) + 1).astype(np.int64)[:-1])


def rank_time(prof: Profile, max_rows: int = MAX_ROWS, max_cols: int = MAX_COLS) -> RankTime | None:
    """The MPI share per (rank group, column); None without per-rank bins (summary mode)."""
    tl = prof.timeline_bins
    if tl is None or tl.values is None:
        return None
    P, nb = tl.nranks, tl.bins
    width = np.clip(np.minimum(tl.starts + tl.bin_seconds, tl.end_seconds) - tl.starts, 0, None)
    cols = _columns(nb, max_cols)
    cwidth = np.add.reduceat(width, cols)
    kinds = [tl.rows.index(k) for k in tl.kinds]
    extra = 2 if P > max_rows else 0
    block = max(1, -(-P // (max_rows - extra)))
    ngroups = -(-P // block)
    groups = np.zeros((ngroups, len(cols)))
    total = np.zeros(P)
    for first in range(0, P, CHUNK):
        mpi = np.asarray(tl.values[first:first + CHUNK])[:, kinds, :].sum(axis=1) if kinds else \
            np.zeros((min(CHUNK, P - first), nb))
        total[first:first + len(mpi)] = mpi.sum(axis=1)
        c = np.add.reduceat(mpi, cols, axis=1)                   # [ranks, cols]
        g = (np.arange(first, first + len(mpi)) // block)
        np.add.at(groups, g, c)
    sizes = np.bincount(np.arange(P) // block, minlength=ngroups)
    safe = np.where(cwidth > 0, cwidth, 1.0)
    z = groups / sizes[:, None] / safe
    labels = [f"rank {g * block}" if block == 1 else
              f"ranks {g * block}-{min(P, (g + 1) * block) - 1}" for g in range(ngroups)]
    if extra:    # the run's extreme ranks, never averaged away
        rows = []
        for r, what in ((int(np.argmin(total)), "least MPI"), (int(np.argmax(total)), "most MPI")):
            mpi = np.asarray(tl.values[r])[kinds, :].sum(axis=0) if kinds else np.zeros(nb)
            rows.append(np.add.reduceat(mpi, cols) / safe)
            labels.insert(len(rows) - 1, f"rank {r} ({what})")
        z = np.vstack([np.array(rows), z])
    return RankTime(z=z, labels=labels, start=tl.starts[cols], width=cwidth, block=block)


def heatmap(rt: RankTime, title: str) -> dict:
    y = list(range(len(rt.labels)))
    data = [{"type": "heatmap", "x": np.round(rt.start, 6).tolist(), "y": y,
             "z": np.round(np.clip(rt.z, 0, None), 3).tolist(), "zmin": 0, "zmax": 1,
             "text": [[plot_text(lab)] * len(rt.start) for lab in rt.labels],
             "colorscale": "Viridis", "colorbar": {"title": {"text": "MPI share"}},
             "hovertemplate": "%{text}<br>from %{x:.4g} s: %{z:.0%} in MPI<extra></extra>"}]
    ticks = y if len(y) <= 32 else y[::max(1, len(y) // 16)]
    layout = {"title": {"text": title},
              "xaxis": {"title": {"text": "seconds since MPI_Init"}},
              "yaxis": {"title": {"text": "ranks"}, "autorange": "reversed",
                        "tickvals": ticks, "ticktext": [plot_text(rt.labels[i]) for i in ticks]}}
    return {"data": data, "layout": layout}


def areas(tl: dict, title: str) -> dict:
    """The kinds' shares of the time per rank, and the time outside MPI, stacked over time."""
    x = (np.asarray(tl["start"]) + np.asarray(tl["width"]) / 2).round(6).tolist()
    data = []
    for key in tl["kinds"] + ["compute"]:
        label = "outside MPI" if key == "compute" else key
        data.append({"type": "scatter", "mode": "lines", "stackgroup": "one", "name": label,
                     "x": x, "y": np.round(tl["share"][key], 4).tolist(),
                     "line": {"width": 0.5, "color": KIND_COLOURS.get(key)},
                     "hovertemplate": f"{label}: %{{y:.0%}} at %{{x:.4g}} s<extra></extra>"})
    layout = {"title": {"text": title}, "xaxis": {"title": {"text": "seconds since MPI_Init"}},
              "yaxis": {"title": {"text": "share of the time per rank"}, "tickformat": ".0%"},
              "legend": {"orientation": "h", "y": -0.25}}
    return {"data": data, "layout": layout}


def spread(tl: dict, title: str) -> dict:
    """Per bin the least, average and most MPI share of any rank (minPE / maxPE on hover)."""
    x = (np.asarray(tl["start"]) + np.asarray(tl["width"]) / 2).round(6).tolist()
    data = []
    for key, label, dash, pe in (("mpi_max", "most in MPI (maxPE)", "solid", "max_pe"),
                                 (None, "average rank", "dot", None),
                                 ("mpi_min", "least in MPI (minPE)", "solid", "min_pe")):
        y = tl["share"]["mpi"] if key is None else tl[key]
        trace = {"type": "scatter", "mode": "lines", "name": label, "x": x,
                 "y": np.round(y, 4).tolist(), "line": {"dash": dash, "shape": "hvh"}}
        if pe:
            trace["customdata"] = tl[pe]
            trace["hovertemplate"] = f"{label}: rank %{{customdata}} %{{y:.0%}}<extra></extra>"
        data.append(trace)
    layout = {"title": {"text": title}, "xaxis": {"title": {"text": "seconds since MPI_Init"}},
              "yaxis": {"title": {"text": "share of the bin in MPI"}, "tickformat": ".0%"},
              "legend": {"orientation": "h", "y": -0.25},
              "shapes": [{"type": "rect", "xref": "x", "yref": "paper", "x0": p["start"],
                          "x1": p["end"], "y0": 0, "y1": 1, "line": {"width": 0},
                          "fillcolor": "#888888", "opacity": 0.08 if i % 2 else 0.0}
                         for i, p in enumerate(tl["phases"])]}
    return {"data": data, "layout": layout}


def phases_table(tl: dict) -> page.Markup:
    rows = []
    for p in tl["phases"]:
        rows.append([page.cell(str(p["index"] + 1), p["index"]), p["label"],
                     page.cell(fmt_time(p["start"]), p["start"]),
                     page.cell(fmt_time(p["end"]), p["end"]),
                     page.cell(f"{100 * p['share_of_run']:.0f}%", p["share_of_run"]),
                     page.cell(f"{100 * p['mpi_share']:.0f}%", p["mpi_share"]),
                     p["top_kind"] or "-",
                     page.cell(f"{100 * p['spread']:.0f}%", p["spread"]),
                     "-" if p["least_mpi_rank"] is None else str(p["least_mpi_rank"])])
    return page.table(["#", "phase", "from (s)", "to (s)", "of the run", "MPI per rank",
                       "main kind", "ranks apart", "least in MPI"], rows,
                      caption="Phases of the run")


def timeline_section(prof: Profile, rep: dict) -> page.Markup | None:
    tl = rep.get("timeline")
    if not tl:
        return None
    if not tl["available"]:
        return page.section("Timeline", page.note(tl["why"]), anchor="timeline")
    parts = [page.note(
        f"{len(tl['width'])} bins of {fmt_time(tl['bin_seconds'])} s from MPI_Init (the ranks' "
        f"clocks agree to {fmt_time(tl['clock_offset_max'])} s). Shares are of the time per "
        "rank: averaged over the ranks, the kinds of MPI call and the time outside MPI add "
        "up to the whole bin.")]
    rt = rank_time(prof)
    if rt is not None:
        what = "per rank" if rt.block == 1 else \
            f"ranks averaged in blocks of {rt.block:,}, the least and most MPI rank on top"
        parts.append(page.figure(heatmap(rt, f"Share of the time in MPI, {what}"),
                                 height=min(720, 240 + 6 * len(rt.labels))))
    else:
        parts.append(page.note("A summary-mode profile has no per-rank bins: the runtime "
                               "reduced each bin to the least, average and most MPI time "
                               "and their ranks (below)."))
    parts.append(page.figure(areas(tl, "Where the time goes, over the run"), height=380))
    parts.append(page.figure(spread(tl, "MPI share of the least, average and most waiting "
                                        "rank (phases shaded)"), height=380))
    if tl["phases"]:
        parts.append(phases_table(tl))
    b = tl.get("bursts")
    if b:
        parts.append(page.para(
            f"Periodic bursts: every {fmt_time(b['period'])} s ({b['count']} times from "
            f"{fmt_time(b['first'])} s), {fmt_time(b['duration'])} s each; MPI share per rank "
            f"{100 * b['mpi_share_in']:.0f}% in them, {100 * b['mpi_share_out']:.0f}% between."))
    return page.section("Timeline", *parts, anchor="timeline")


def compare_overlay(t: dict, title: str) -> dict:
    """The compare dict's timeline: A's and B's MPI share per rank on one time axis."""
    x = (np.asarray(t["start"]) + t["column_seconds"] / 2).round(6).tolist()
    # a run that ended within one column has one value: a marker, as a line would draw nothing
    data = [{"type": "scatter", "name": f"{side.upper()}: MPI share",
             "mode": "lines" if sum(v is not None for v in t[side]["mpi"]) > 1 else "markers",
             "x": x, "y": [None if v is None else round(v, 4) for v in t[side]["mpi"]],
             "line": {"shape": "hvh", "dash": "solid" if side == "a" else "dot"},
             "hovertemplate": f"{side.upper()}: %{{y:.0%}} in MPI at %{{x:.4g}} s<extra></extra>"}
            for side in ("a", "b")]
    layout = {"title": {"text": title}, "xaxis": {"title": {"text": "seconds since MPI_Init"}},
              "yaxis": {"title": {"text": "share of the time per rank in MPI"},
                        "tickformat": ".0%"}, "legend": {"orientation": "h", "y": -0.25}}
    return {"data": data, "layout": layout}


def compare_section(c: dict, rep_a: dict, rep_b: dict) -> page.Markup | None:
    """Both timelines: MPI share overlaid on one axis, each run's kinds stacked side by side."""
    t = c.get("timeline")
    if not t:
        return None
    if not t["available"]:
        return page.section("Timeline, A | B", page.note(t["why"]), anchor="timeline")
    stacks = [page.figure(areas(rep["timeline"], f"{key}: where the time goes"), height=360)
              for key, rep in (("A", rep_a), ("B", rep_b))]
    return page.section("Timeline, A | B", page.note(
        "Both runs on one axis, seconds since MPI_Init: the same moment of the two runs "
        "one above the other."), page.figure(compare_overlay(t, "MPI share per rank, A and B"),
                                             height=360),
        page.side_by_side(*stacks), anchor="timeline")
