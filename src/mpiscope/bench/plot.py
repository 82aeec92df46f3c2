"""Draw benchmark results with the shared helpers of ``mpiscope.plots``.

``panels(result)`` turns one result into a list of panel-drawing functions
(one per figure cell); ``plot_results`` puts several results of one kernel
side by side, one column each, with shared y scales per row.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from .. import plots
from ..errors import UserError
from .results import rows


def _col(rs: list[dict], key: str) -> np.ndarray:
    return np.array([r.get(key, np.nan) for r in rs], dtype=float)


def _grouped(rs: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = defaultdict(list)
    for r in rs:
        out[tuple(r.get(k) for k in keys)].append(r)
    return out


def _stat_series(label: str, rs: list[dict], x: str, name: str, scale: float = 1.0) -> plots.Series:
    rs = sorted(rs, key=lambda r: r[x])
    return plots.Series(label, _col(rs, x), _col(rs, f"{name}_avg") * scale,
                        _col(rs, f"{name}_min") * scale, _col(rs, f"{name}_max") * scale)


def _with_best(label: str, rs: list[dict], x: str, name: str, best: str, color: str,
               scale: float = 1.0) -> list[plots.Series]:
    """The OSU mean (line, band min..max over ranks) and, dotted, the fastest batch's mean."""
    main = _stat_series(label, rs, x, name, scale)
    main.style = {"color": color}
    out = [main]
    if rs and f"{best}_avg" in rs[0]:
        rs = sorted(rs, key=lambda r: r[x])
        out.append(plots.Series(f"{label} (best batch)", _col(rs, x),
                                _col(rs, f"{best}_avg") * scale,
                                style={"color": color, "linestyle": ":", "marker": None}))
    return out


# Each bandwidth method, named as the OSU benchmark whose method it follows.
_P2P_BW = (("p2p", "ping-pong (osu_latency)", "-"), ("p2p_bw", "window (osu_bw)", "--"),
           ("p2p_bibw", "bidirectional (osu_bibw)", "-."))


def _p2p(result: dict):
    data = rows(result, "p2p")
    groups = _grouped(data, ("locality", "pairs"))
    lat, bw = [], []
    for i, ((loc, k), rs) in enumerate(groups.items()):
        label = f"{loc}, {k} pair{'s' * (k > 1)}"
        lat += _with_best(label, rs, "size", "latency_us", "latency_best_us", f"C{i}")
        for table, method, dash in _P2P_BW:
            rs_m = sorted(rows(result, table, locality=loc, pairs=k), key=lambda r: r["size"])
            if rs_m:
                line = _stat_series(f"{label}, {method}", rs_m, "size", "bandwidth_MBps")
                line.style = {"color": f"C{i}", "linestyle": dash}
                bw.append(line)
    out = [
        lambda ax: plots.line_plot(ax, lat, xlabel="message size (bytes)", ylabel="latency (us)",
                                   logx=True, logy=True, sizes=True,
                                   title="ping-pong latency, osu_latency's method "
                                         "(band: min..max over pairs; dotted: fastest batch)"),
        lambda ax: plots.line_plot(ax, bw, xlabel="message size (bytes)",
                                   ylabel="bandwidth per pair (MB/s)", logx=True, logy=True,
                                   sizes=True, title="bandwidth by method (OSU's)"),
    ]
    mr = rows(result, "p2p_mbw_mr")
    if mr:
        agg = [plots.Series(f"{loc}, {k} pair{'s' * (k > 1)}",
                            _col(sorted(rs, key=lambda r: r["size"]), "size"),
                            _col(sorted(rs, key=lambda r: r["size"]), "aggregate_MBps"))
               for (loc, k), rs in _grouped(mr, ("locality", "pairs")).items()]
        rate = [plots.Series(s.label, s.x, s.y * 1e6 / s.x) for s in agg]
        out.append(lambda ax: plots.line_plot(ax, agg, xlabel="message size (bytes)",
                                              ylabel="aggregate bandwidth (MB/s)", logx=True,
                                              logy=True, sizes=True,
                                              title="multi-pair bandwidth (osu_mbw_mr)"))
        out.append(lambda ax: plots.line_plot(ax, rate, xlabel="message size (bytes)",
                                              ylabel="messages per second", logx=True, logy=True,
                                              sizes=True,
                                              title="multi-pair message rate (osu_mbw_mr)"))
    return out


def _collectives(result: dict):
    data = rows(result, "collectives")
    out = []
    barrier = sorted(rows(result, "collectives", op="barrier"), key=lambda r: r["comm_size"])
    if barrier:
        s = _with_best("barrier", barrier, "comm_size", "time_us", "time_best_us", "C0")
        out.append(lambda ax, s=s: plots.line_plot(
            ax, s, xlabel="communicator size", ylabel="time (us)", logx=True, logy=True,
            title="MPI_Barrier vs ranks, OSU mean (band: min..max over ranks)"))
    ops = [op for op in dict.fromkeys(r["op"] for r in data) if op != "barrier"]
    for op in ops:
        groups = _grouped([r for r in data if r["op"] == op], ("comm_size",))
        s = [line for i, ((n,), rs) in enumerate(sorted(groups.items()))
             for line in _with_best(f"{n} ranks", rs, "size", "time_us", "time_best_us", f"C{i}")]
        out.append(lambda ax, s=s, op=op: plots.line_plot(
            ax, s, xlabel="bytes per rank", ylabel="time (us)", logx=True, logy=True, sizes=True,
            title=f"MPI_{op.capitalize()}, OSU mean (dotted: fastest batch)"))
    return out


def _jitter(result: dict):
    series = {r["mode"]: r for r in rows(result, "series")}
    times = {m: np.array(r["time_us"]) for m, r in series.items()}
    spread = {m: np.array(r["spread_us"]) for m, r in series.items()}
    late = {m: r["rank_lateness_us"] for m, r in series.items()}
    nr = max((len(v) for v in late.values()), default=0)
    return [
        lambda ax: plots.series_plot(ax, times, xlabel="repetition", ylabel="allreduce time (us)",
                                     logy=True, title="slowest rank's allreduce time per repetition"),
        lambda ax: plots.distribution_plot(ax, times, xlabel="allreduce time (us)",
                                           title="distribution (dashed: median, p90, p99)"),
        lambda ax: plots.distribution_plot(ax, spread, xlabel="arrival spread (us)",
                                           title="latest minus earliest entry"),
        lambda ax: plots.bar_plot(ax, [str(i) for i in range(nr)], late, ylabel="mean lateness (us)",
                                  title="per-rank arrival lateness"),
    ]


def _halo(result: dict):
    data = rows(result, "halo")
    out = []
    for (nb,), rs in sorted(_grouped(data, ("neighbours",)).items()):
        groups = _grouped(rs, ("strategy", "compute_us"))
        strategies = list(dict.fromkeys(st for st, _ in groups))
        s = []
        for (st, c), g in groups.items():
            series = _stat_series(f"{st}" + (f" +{c:g}us compute" if c else ""), g, "size",
                                  "time_best_us" if "time_best_us_avg" in g[0] else "time_us")
            series.style = {"color": f"C{strategies.index(st)}", "linestyle": "--" if c else "-"}
            s.append(series)
        grid = rs[0].get("grid", "")
        out.append(lambda ax, s=s, nb=nb, grid=grid: plots.line_plot(
            ax, s, xlabel="bytes per neighbour", ylabel="time per exchange (us)", logx=True,
            logy=True, sizes=True,
            title=f"{nb} neighbours, {grid} grid: fastest batch, min..max band"))
    return out


def _triad(result: dict):
    data = sorted(rows(result, "triad"), key=lambda r: r["ranks_per_node"])
    per = [_stat_series("per rank", data, "ranks_per_node", "bandwidth_MBps", 1e-3)]
    node = [plots.Series("node total", _col(data, "ranks_per_node"), _col(data, "node_MBps") * 1e-3)]
    return [lambda ax: plots.line_plot(ax, per + node, xlabel="active ranks per node",
                                       ylabel="triad bandwidth (GB/s)",
                                       title="STREAM triad: memory contention")]


def _mpimem(result: dict):
    data = rows(result, "mpimem")
    s = [_stat_series(stage, rs, "nranks", "rss_kib", 1 / 1024)
         for (stage,), rs in _grouped(data, ("stage",)).items()]
    return [lambda ax: plots.line_plot(ax, s, xlabel="ranks (P)", ylabel="resident memory (MiB)",
                                       logx=True, title="VmRSS per rank (band: min..max)")]


def _io(result: dict):
    data = rows(result, "io")
    s = [plots.Series(st, _col(sorted(rs, key=lambda r: r["size"]), "size"),
                      _col(sorted(rs, key=lambda r: r["size"]), "bandwidth_MBps"))
         for (st,), rs in _grouped(data, ("strategy",)).items()]
    meta = rows(result, "metadata")
    out = [lambda ax: plots.line_plot(ax, s, xlabel="bytes per rank", ylabel="write bandwidth (MB/s)",
                                      logx=True, logy=True, sizes=True, title="I/O strategies")]
    if meta:
        out.append(lambda ax: plots.bar_plot(
            ax, [r["op"] for r in meta], {"all ranks": [r["rate_per_s"] for r in meta]},
            ylabel="operations per second", logy=True, title="metadata rates, one shared directory"))
    return out


def _startup(result: dict):
    init = sorted(rows(result, "init"), key=lambda r: r["nranks"])
    fin = sorted(rows(result, "finalize"), key=lambda r: r["nranks"])
    wall = sorted(rows(result, "launch"), key=lambda r: r["nranks"])
    s = [_stat_series("MPI_Init", init, "nranks", "init_s"),
         _stat_series("MPI_Finalize", fin, "nranks", "finalize_s"),
         plots.Series("whole launch", _col(wall, "nranks"), _col(wall, "wall_s"))]
    return [lambda ax: plots.line_plot(ax, s, xlabel="ranks (P)", ylabel="seconds", logx=True,
                                       title="startup and shutdown (band: min..max over ranks)")]


PANELS = {"p2p": _p2p, "collectives": _collectives, "jitter": _jitter, "halo": _halo,
          "triad": _triad, "mpimem": _mpimem, "io": _io, "startup": _startup}


def panels(result: dict) -> list:
    try:
        return PANELS[result["kernel"]](result)
    except KeyError:
        raise UserError(f"no plot for kernel '{result['kernel']}'") from None


def column_title(result: dict) -> str:
    ps = sorted({r["nranks"] for r in result["runs"] if r.get("nranks")})
    ranks = ",".join(map(str, ps)) if ps else "?"
    lib = (result["mpi"].get("library_version") or result["mpi"]["impl"]).splitlines()[0]
    lib = " ".join(lib.split(",")[0].split())[:40]  # MPICH's version line holds a tab
    flag = " (partial)" if result.get("partial") else ""
    return f"{lib} - P={ranks} - {result['machine'].get('hostname', '?')}{flag}"


def plot_results(results_list: list[dict], path: Path) -> Path:
    """One column per result (all of one kernel), one row per panel."""
    kinds = {r["kernel"] for r in results_list}
    if len(kinds) != 1:
        raise UserError(f"results of different kernels cannot share a plot: {', '.join(sorted(kinds))}")
    if not any(r["rows"] for r in results_list):
        raise UserError("the result(s) hold no rows to plot")
    return plots.side_by_side([panels(r) for r in results_list],
                              [column_title(r) for r in results_list], Path(path))
