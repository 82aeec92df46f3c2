"""Plots of a scale report dict: time, speedup and efficiency against P; stacked time per
function against P; each function's model curve with its measured points.

Uses the shared helpers of mpiscope.plots (Agg backend); each function writes one PNG.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...plots import Series, line_plot, plt

# What write_all writes (models.png only when there are models).
PLOT_FILES = ("scaling.png", "functions.png", "models.png")


def scaling_png(rep: dict, path: Path) -> Path:
    rows = rep["points"]
    P = np.array([r["np"] for r in rows], float)
    med = np.array([r["wall_s"]["median"] for r in rows])
    lo = np.array([r["wall_s"]["min"] for r in rows])
    hi = np.array([r["wall_s"]["max"] for r in rows])
    eff = np.array([np.nan if r["efficiency"] is None else 100 * r["efficiency"] for r in rows])
    strong = rep["study"]["kind"] == "strong"
    ideal_t = med[0] * P[0] / P if strong else np.full_like(P, med[0])
    panels = 3 if strong else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.6 * panels, 3.6))
    line_plot(axes[0], [Series("measured (min-max band)", P, med, lo, hi),
                        Series("ideal", P, ideal_t, style={"linestyle": "--", "marker": ""})],
              xlabel="ranks P", ylabel="wall time (s)", logx=True, logy=strong,
              title="Wall time")
    k = 1
    if strong:
        sp = np.array([r["speedup"] for r in rows], float)
        line_plot(axes[1], [Series("measured", P, sp),
                            Series("ideal", P, P / P[0], style={"linestyle": "--", "marker": ""})],
                  xlabel="ranks P", ylabel=f"speedup vs P={int(P[0])}", logx=True, logy=True,
                  title="Speedup")
        k = 2
    line_plot(axes[k], [Series("measured", P, eff)], xlabel="ranks P",
              ylabel="parallel efficiency (%)" if strong else "efficiency vs smallest (%)",
              logx=True, title="Efficiency")
    axes[k].set_ylim(0, max(110, np.nanmax(eff) * 1.1 if np.isfinite(eff).any() else 110))
    fig.suptitle(f"{rep['study']['name']} ({rep['study']['kind']} scaling)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def functions_png(rep: dict, path: Path) -> Path:
    funcs = rep["functions"]
    P = np.array([r["np"] for r in rep["points"]], float)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ys = np.array([f["median"] for f in funcs]) if funcs else np.zeros((0, len(P)))
    ax.stackplot(np.arange(len(P)), ys, labels=[f["name"] for f in funcs], alpha=0.85)
    ax.set_xticks(np.arange(len(P)), [str(int(p)) for p in P])
    ax.set_xlabel("ranks P")
    ax.set_ylabel("time per rank (s)")
    ax.set_title("Time per rank by function (stacked)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def models_png(rep: dict, path: Path) -> Path | None:
    """One panel per modelled function: the model (with its 95 % band) and the measured points."""
    fms = rep["models"]["functions"]
    if not fms:
        return None
    measured = {f["name"]: f for f in rep["functions"]}
    ncol = min(3, len(fms))
    nrow = -(-len(fms) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.4 * ncol, 3.2 * nrow), squeeze=False)
    for ax, fm in zip(axes.flat, fms):
        c = fm["curve"]
        m = measured[fm["name"]]
        Pm = np.repeat(m["np"], [len(v) for v in m["values"]]).astype(float)
        ym = np.concatenate([np.asarray(v, float) for v in m["values"]])
        line_plot(ax, [Series(f"model ({fm['modelled']})", np.array(c["np"]),
                              np.array(c["time_s"]), np.array(c["lo_s"]), np.array(c["hi_s"]),
                              style={"marker": ""})],
                  xlabel="ranks P", ylabel="time per rank (s)", logx=True, logy=False,
                  title=f"{fm['name']}: {fm['formula']}")
        ax.plot(Pm, ym, "o", color="black", markersize=3, label="measured")
        lowest = min(float(np.min(ym)), float(np.min(c["lo_s"])))
        if lowest > 0:
            ax.set_yscale("log")
        else:  # a model that crosses zero (e.g. a - b log P) cannot be drawn on log axes
            ax.set_yscale("symlog", linthresh=max(1e-9, float(np.max(np.abs(ym))) * 1e-2))
        ax.legend(fontsize=6)
        ax.title.set_fontsize(7)
    for ax in list(axes.flat)[len(fms):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_all(rep: dict, outdir: Path) -> list[Path]:
    """scaling.png, functions.png and (when there are models) models.png in outdir."""
    outdir.mkdir(parents=True, exist_ok=True)
    out = [scaling_png(rep, outdir / "scaling.png"), functions_png(rep, outdir / "functions.png")]
    m = models_png(rep, outdir / "models.png")
    if m is not None:
        out.append(m)
    return out
