"""Plotly figures (as plain dicts) of the views: per-rank stacks, matrix, sizes, traffic.

Each function turns data already computed (report dict, :mod:`.ranks`
buckets, :mod:`.matrix` blocks) into a figure; none reads a profile. Every
label that comes from the profile goes through ``plot_text``.
"""

from __future__ import annotations

import numpy as np

from ..report.tables import fmt_bytes
from .escape import plot_text
from .matrix import BlockMatrix
from .ranks import Buckets

# Stack parts: (key, label, colour); the same colours on every page.
PART_COLOURS = {"compute": "#4c78a8", "mpi_other": "#f58518", "wait": "#e45756",
                "sync": "#72b7b2", "mpi": "#f58518"}
PART_LABELS = {"compute": "compute", "mpi_other": "MPI (other)", "wait": "wait and probe",
               "sync": "collective sync", "mpi": "MPI"}
MARK_COLOUR = "#222222"


# Sorted per-rank charts label every bar with its rank up to this many bars.
RANK_TICKS = 64

def _r(a: np.ndarray, digits: int = 6) -> list:
    """Values rounded for a smaller page (seconds to the microsecond)."""
    return np.round(np.asarray(a, dtype=np.float64), digits).tolist()


def rank_stack(b: Buckets, title: str, sorted_by: str | None = None,
               marks: list[tuple[int, float, str]] = (), ymax: float | None = None) -> dict:
    """Stacked bars of the parts of ``b``, one bar per bucket.

    Arguments:
        b: buckets (see ranks.bucketize); x is the position in the order.
        title: figure title (already plot-safe).
        sorted_by: None for rank order, else the name of the sort key (for labels).
        marks: (position, y, label) arrows, e.g. the minPE and maxPE ranks.
        ymax: top of the y axis (None: plotly's autorange).
    """
    x = b.start + (b.size - 1) / 2.0
    if b.exact:
        where = "rank %{customdata[0]}"
    elif sorted_by is None:
        where = "ranks %{customdata[0]}-%{customdata[1]} (average)"
    else:
        where = "positions %{customdata[2]}-%{customdata[3]} (average)"
    custom = np.stack([b.first_rank, b.last_rank, b.start, b.start + b.size - 1], axis=1)
    data = []
    for key, avg in b.avg.items():
        data.append({"type": "bar", "name": PART_LABELS.get(key, key), "x": _r(x, 1),
                     "y": _r(avg), "width": b.size.tolist(), "customdata": custom.tolist(),
                     "marker": {"color": PART_COLOURS.get(key), "line": {"width": 0}},
                     "hovertemplate": f"{where}<br>{PART_LABELS.get(key, key)} %{{y:.4g}} s"
                                      "<extra></extra>"})
    if not b.exact:
        # Lines, not markers: one SVG path each, whatever the number of buckets.
        for name, vals, who, dash in (("max of the bar's ranks", b.hi, b.hi_rank, "solid"),
                                      ("min of the bar's ranks", b.lo, b.lo_rank, "dot")):
            data.append({"type": "scatter", "mode": "lines", "name": name, "x": _r(x, 1),
                         "y": _r(vals), "customdata": who.tolist(),
                         "line": {"color": MARK_COLOUR, "width": 1, "dash": dash,
                                  "shape": "hvh"},
                         "hovertemplate": f"{name}: rank %{{customdata}} %{{y:.4g}} s"
                                          "<extra></extra>"})
    xaxis: dict = {"title": {"text": "rank"}}
    if sorted_by is not None:
        # the x of a sorted chart is a position in the order: label the bars with their
        # ranks where they fit, else say what x is (the hover names each bar's ranks)
        if b.exact and len(b.start) <= RANK_TICKS:
            xaxis = {"title": {"text": f"rank, sorted by {sorted_by}, largest first"},
                     "tickmode": "array", "tickvals": _r(x, 1),
                     "ticktext": [str(int(r)) for r in b.first_rank]}
        else:
            xaxis = {"title": {"text": f"position when sorted by {sorted_by}, largest first "
                                       "(hover: the ranks)"}}
    layout = {"title": {"text": title}, "barmode": "stack", "bargap": 0,
              "xaxis": xaxis, "yaxis": {"title": {"text": "seconds"},
                        **({"range": [0, ymax]} if ymax else {})},
              "legend": {"orientation": "h", "y": -0.25},
              "annotations": [{"x": px, "y": py, "text": label, "showarrow": True,
                               "arrowhead": 2, "ax": 0, "ay": -30, "font": {"size": 11}}
                              for px, py, label in marks]}
    return {"data": data, "layout": layout}


def heatmap(m: BlockMatrix, title: str) -> dict:
    """The block matrix as a heat map of log10(bytes), empty cells blank."""
    with np.errstate(divide="ignore"):
        z = np.where(m.nbytes > 0, np.log10(np.maximum(m.nbytes, 1)), np.nan)
    edges = np.arange(m.nblocks) * m.block
    who = "rank" if m.block == 1 else "ranks from"
    shapes = [{"type": "rect", "xref": "x", "yref": "y",
               "x0": a * m.block - 0.5, "x1": e * m.block - 0.5,
               "y0": a * m.block - 0.5, "y1": e * m.block - 0.5,
               "line": {"color": MARK_COLOUR, "width": 1.5}} for a, e in m.outlines]
    data = [{"type": "heatmap", "x": edges.tolist(), "y": edges.tolist(),
             "z": np.round(z, 3).tolist(), "customdata": m.nbytes.astype(np.int64).tolist(),
             "colorscale": "Viridis", "colorbar": {"title": {"text": "log10 bytes"}},
             "hoverongaps": False, "xgap": 0, "ygap": 0,
             "hovertemplate": f"sender {who} %{{y}}<br>receiver {who} %{{x}}"
                              "<br>%{customdata:,} bytes<extra></extra>"}]
    layout = {"title": {"text": title}, "shapes": shapes,
              "xaxis": {"title": {"text": "receiver rank"}, "constrain": "domain"},
              "yaxis": {"title": {"text": "sender rank"}, "autorange": "reversed",
                        "scaleanchor": "x"}}
    return {"data": data, "layout": layout}


def size_histogram(rows: list[dict], title: str) -> dict:
    """Calls per log2 message-size bucket, one stacked trace per function."""
    labels = ["0 B" if r["bucket"] == 0 else f"{fmt_bytes(r['lo'])}-{fmt_bytes(r['hi'])}"
              for r in rows]
    funcs = sorted({f for r in rows for f in r["by_function"]},
                   key=lambda f: -sum(r["by_function"].get(f, 0) for r in rows))
    data = [{"type": "bar", "name": plot_text(f), "x": labels,
             "y": [r["by_function"].get(f, 0) for r in rows],
             "hovertemplate": f"{plot_text(f)}<br>%{{x}}: %{{y:,}} calls<extra></extra>"}
            for f in funcs]
    layout = {"title": {"text": title}, "barmode": "stack",
              "xaxis": {"title": {"text": "message size"}, "type": "category"},
              "yaxis": {"title": {"text": "calls"}}}
    return {"data": data, "layout": layout}


def traffic(p2p: dict, title: str) -> dict:
    """On-node vs off-node share of point-to-point messages and bytes."""
    data = []
    for key, label, colour in (("on_node", "on-node", "#54a24b"),
                               ("off_node", "off-node", "#e45756")):
        vals = [p2p[f"{key}_msgs"], p2p[f"{key}_bytes"]]
        tots = [p2p["total_msgs"] or 1, p2p["total_bytes"] or 1]
        data.append({"type": "bar", "orientation": "h", "name": label,
                     "y": ["messages", "bytes"], "x": [100.0 * v / t for v, t in zip(vals, tots)],
                     "customdata": [f"{v:,}" for v in vals[:1]] + [fmt_bytes(vals[1])],
                     "marker": {"color": colour},
                     "hovertemplate": f"{label}: %{{customdata}} (%{{x:.1f}}%)<extra></extra>"})
    layout = {"title": {"text": title}, "barmode": "stack",
              "xaxis": {"title": {"text": "% of point-to-point traffic"}, "range": [0, 100]}}
    return {"data": data, "layout": layout}
