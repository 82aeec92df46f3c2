"""Shared matplotlib helpers: line plots over sizes on log axes, distributions, time series,
bars, and grids of panels where several results sit side by side with the same scales.

Kept generic (no knowledge of benchmarks or profiles): callers pass plain
numpy arrays and labels. Rendering uses the non-interactive Agg backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


@dataclass
class Series:
    """One line: y against x, with an optional band from lo to hi (e.g. min and max over ranks)."""
    label: str
    x: np.ndarray
    y: np.ndarray
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    style: dict | None = None   # extra matplotlib line properties (color, linestyle, ...)


def size_formatter(value: float, _pos=None) -> str:
    """Bytes as 1, 512, 4K, 1M, 2G for axis ticks."""
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if value >= div:
            return f"{value / div:g}{unit}"
    return f"{value:g}"


def line_plot(ax, series: Sequence[Series], *, xlabel: str, ylabel: str, logx: bool = False,
              logy: bool = False, sizes: bool = False, title: str | None = None) -> None:
    """Lines with markers; bands where lo/hi are given; x ticks as byte sizes if ``sizes``."""
    for s in series:
        x, y = np.asarray(s.x, float), np.asarray(s.y, float)
        keep = np.isfinite(y) & ((x > 0) if logx else True) & ((y > 0) if logy else True)
        props = {"marker": "o", "markersize": 3, **(s.style or {})}
        (line,) = ax.plot(x[keep], y[keep], label=s.label, **props)
        if s.lo is not None and s.hi is not None:
            ax.fill_between(x[keep], np.asarray(s.lo, float)[keep], np.asarray(s.hi, float)[keep],
                            color=line.get_color(), alpha=0.2, linewidth=0)
    if logx:
        ax.set_xscale("log", base=2)
        if not sizes:
            _plain_log_ticks(ax.xaxis, base=2)
    if logy:
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis)
    if sizes:
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(size_formatter))
    _finish(ax, xlabel, ylabel, title, legend=len(series) > 1, ncol=2 if len(series) > 6 else 1)


def distribution_plot(ax, values: dict[str, np.ndarray], *, xlabel: str, bins: int = 50,
                      percentiles: Sequence[float] = (50, 90, 99), title: str | None = None,
                      logx: bool | None = None) -> None:
    """Histograms (log counts) of each sample set, with dashed lines at the given percentiles.

    ``logx`` None: logarithmic bins and x axis when the positive values span more
    than two decades (long tails, as jitter has).
    """
    finite = [np.asarray(v, float) for v in values.values() if len(v)]
    if not finite:
        _finish(ax, xlabel, "count", title, legend=False)
        return
    lo = min(v.min() for v in finite)
    hi = max(v.max() for v in finite)
    if logx is None:
        logx = lo > 0 and hi / lo > 100
    if logx:
        edges = np.geomspace(lo, hi, bins + 1)
        ax.set_xscale("log")
    else:
        edges = np.linspace(lo, hi if hi > lo else lo + 1, bins + 1)
    for label, v in values.items():
        v = np.asarray(v, float)
        _, _, patches = ax.hist(v, bins=edges, alpha=0.5, label=label)
        color = patches[0].get_facecolor() if len(patches) else None
        for p in percentiles:
            ax.axvline(np.percentile(v, p), color=color, linestyle="--", linewidth=0.8, alpha=0.9)
    ax.set_yscale("log")
    if logx:
        _plain_log_ticks(ax.xaxis)
    _finish(ax, xlabel, "count", title, legend=len(values) > 1)


def series_plot(ax, values: dict[str, np.ndarray], *, xlabel: str, ylabel: str,
                title: str | None = None, logy: bool = False) -> None:
    """Time series (index on x), thin lines."""
    for label, v in values.items():
        ax.plot(np.arange(len(v)), np.asarray(v, float), linewidth=0.6, label=label)
    if logy:
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis)
    _finish(ax, xlabel, ylabel, title, legend=len(values) > 1)


def bar_plot(ax, categories: Sequence[str], groups: dict[str, Sequence[float]], *, ylabel: str,
             logy: bool = False, title: str | None = None) -> None:
    """Grouped bars: one group per category, one bar per key of ``groups``."""
    n = max(len(groups), 1)
    width = 0.8 / n
    x = np.arange(len(categories))
    for i, (label, vals) in enumerate(groups.items()):
        ax.bar(x + (i - (n - 1) / 2) * width, np.asarray(vals, float), width, label=label)
    ax.set_xticks(x, list(categories))
    if logy:
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis)
    _finish(ax, "", ylabel, title, legend=len(groups) > 1)


def _plain_log_ticks(axis, base: int = 10) -> None:
    """Log-axis ticks as 1, 2, 5, 10, 20 (or powers of 2) rather than 2x10^0.

    Call after drawing: over more than three decades of data only powers are labelled.
    """
    lo, hi = axis.get_data_interval()
    wide = lo > 0 and hi / lo > 1e3
    subs = (1.0,) if base == 2 or wide else (1.0, 2.0, 5.0)
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=base, subs=subs))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _finish(ax, xlabel: str, ylabel: str, title: str | None, legend: bool, ncol: int = 1) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        ax.legend(fontsize=6 if ncol > 1 else 7, ncol=ncol)


Panel = Callable[[object], None]


def side_by_side(columns: Sequence[Sequence[Panel]], column_titles: Sequence[str], path: Path,
                 *, panel_size: tuple[float, float] = (5.0, 3.4), share_y: bool = True) -> Path:
    """Draw ``grid(...)`` into ``path``."""
    fig = grid(columns, column_titles, panel_size=panel_size, share_y=share_y)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def grid(columns: Sequence[Sequence[Panel]], column_titles: Sequence[str],
         *, panel_size: tuple[float, float] = (5.0, 3.4), share_y: bool = True):
    """A figure: one column per result, one row per panel; rows share y scales.

    ``columns[c][r]`` draws panel r of column c on the axes it is given. A panel title
    wider than its axes is wrapped onto more lines (a long one ran into the next
    column's), and each column's title sits just above its first panel's title.
    """
    ncols = len(columns)
    nrows = max((len(c) for c in columns), default=0)
    if nrows == 0:
        raise ValueError("nothing to draw")
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
                             squeeze=False)
    for c, panels in enumerate(columns):
        for r in range(nrows):
            ax = axes[r][c]
            if r < len(panels):
                panels[r](ax)
            else:
                ax.set_visible(False)
    if share_y and ncols > 1:
        for r in range(nrows):
            row = [axes[r][c] for c in range(ncols) if axes[r][c].get_visible()]
            if row and all(a.get_yscale() == row[0].get_yscale() for a in row):
                lo = min(a.get_ylim()[0] for a in row)
                hi = max(a.get_ylim()[1] for a in row)
                if row[0].get_yscale() == "log":  # keep markers at the edges visible
                    lo, hi = lo / 1.15, hi * 1.15
                for a in row:
                    a.set_ylim(lo, hi)
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    for ax in axes.flat:
        if ax.get_visible():
            _wrap_title(ax, renderer)
    for c, title in enumerate(column_titles):
        # anchored to the panel title's box: above it however many lines it has
        axes[0][c].annotate(title, xy=(0.5, 1.0), xycoords=axes[0][c].title, xytext=(0, 8),
                            textcoords="offset points", ha="center", va="bottom",
                            fontsize=10, fontweight="bold")
    fig.tight_layout()
    return fig


def _wrap_title(ax, renderer) -> None:
    """Break the axes title between words so that no line is wider than the axes."""
    title = ax.title
    words = title.get_text().split(" ")
    if len(words) < 2:
        return
    width = ax.get_window_extent(renderer).width
    lines = [words[0]]
    for w in words[1:]:
        title.set_text(f"{lines[-1]} {w}")
        if title.get_window_extent(renderer).width > width:
            lines.append(w)
        else:
            lines[-1] += f" {w}"
    title.set_text("\n".join(lines))
