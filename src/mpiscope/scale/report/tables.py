"""The scale report dict (build.py) as tables, in the style of seed 000's scaling tables.

Each ``*_grid`` function turns one part of the dict into (title, columns, rows)
with every cell a (text, sort value) pair; :func:`render` prints the grids with
rich, and html_page.py puts the same grids on the HTML page, so the terminal
and the page show the same text.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

POP_COLUMNS = [("parallel_efficiency", "PE"), ("load_balance", "LB"),
               ("communication_efficiency", "CommE"), ("serialisation", "Ser"),
               ("transfer", "Trf")]


def _s(v) -> str:
    if v is None:
        return "-"
    if v == 0:
        return "0"
    return f"{v:.3g}" if abs(v) < 1e-2 or abs(v) >= 1e4 else f"{v:.3f}"


def _pct(v) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.0f}%" if abs(v) >= 0.1 else f"{100 * v:.2g}%"


def points_grid(rep: dict):
    kind = rep["study"]["kind"]
    rows = rep["points"]
    pop_cols = [(k, label) for k, label in POP_COLUMNS
                if any((r["pop"] or {}).get(k) is not None for r in rows)]
    title = (f"{'Strong' if kind == 'strong' else 'Weak'} scaling: {rep['study']['name']} "
             f"(wall time = slowest rank, median of repetitions)")
    cols = ["P", "reps", "wall (s)", "min", "max"]
    cols += ["speedup", "parallel eff."] if kind == "strong" else ["eff. vs smallest"]
    cols += ["MPI %"] + [label for _, label in pop_cols] + ["launch (s)"]
    out = []
    for r in rows:
        w = r["wall_s"]
        cells = [(str(r["np"]), r["np"]), (str(r["reps"]), r["reps"])]
        cells += [(_s(w[k]), w[k]) for k in ("median", "min", "max")]
        if kind == "strong":
            cells.append(("-" if r["speedup"] is None else f"{r['speedup']:.2f}", r["speedup"]))
        cells.append((_pct(r["efficiency"]), r["efficiency"]))
        cells.append((f"{r['mpi_pct']:.1f}%", r["mpi_pct"]))
        cells += [(_pct((r["pop"] or {}).get(k)), (r["pop"] or {}).get(k)) for k, _ in pop_cols]
        cells.append((_s(r["elapsed_s"]["median"]), r["elapsed_s"]["median"]))
        out.append(cells)
    return title, cols, out


def functions_grid(rep: dict):
    title = "Time per rank by function (s, median of repetitions; (compute) = wall - MPI)"
    cols = ["function"] + [f"P={r['np']}" for r in rep["points"]]
    rows = [[(f["name"], f["name"]), *((_s(v), v) for v in f["median"])]
            for f in rep["functions"]]
    return title, cols, rows


def amdahl_line(rep: dict) -> str:
    a = rep["amdahl"]
    if not a["available"]:
        return f"Amdahl: {a['why_not']}"
    err = "" if a["serial_fraction_err"] is None else f" ± {a['serial_fraction_err']:.2g}"
    cap = "-" if a["max_speedup"] is None else f"{a['max_speedup']:.3g}"
    f = a["serial_fraction"]
    odd = "" if 0 <= f <= 1 else " (f outside 0..1: the time does not fall like 1/P at all)"
    return (f"Amdahl: serial fraction f = {f:.3g}{err}, "
            f"T(1) = {_s(a['t1_s'])} s, speedup limit 1/f = {cap}{odd}")


def karp_flatt_grid(rep: dict):
    rows = [[(str(k["np"]), k["np"]),
             ("-" if k["serial_fraction"] is None else f"{k['serial_fraction']:.4f}",
              k["serial_fraction"])] for k in rep["karp_flatt"]]
    return "Karp-Flatt serial fraction e", ["P", "e"], rows


def models_grid(rep: dict):
    rows = [[(f["name"], f["name"]), (f["modelled"], f["modelled"]),
             (f["formula"], f["formula"]), (f"{f['smape_pct']:.1f}%", f["smape_pct"])]
            for f in rep["models"]["functions"]]
    return ("Per-function models (Extra-P; time per rank T(P) in s)",
            ["function", "modelled", "T(P)", "SMAPE of T"], rows)


def extrapolation_grid(rep: dict):
    rows = []
    for e in rep["extrapolation"]:
        hi = "unbounded" if e["efficiency_hi"] is None else _pct(e["efficiency_hi"])
        eff = "-" if e["efficiency"] is None else \
            f"{_pct(e['efficiency'])} ({_pct(e['efficiency_lo'])} to {hi})"
        share = "" if e["dominant_share"] is None else f" ({100 * e['dominant_share']:.0f}%)"
        rows.append([(f"{e['np']} ({e['multiple']}x)", e["np"]),
                     (f"{_s(e['time_s'])} ({_s(e['time_lo_s'])} to {_s(e['time_hi_s'])})",
                      e["time_s"]),
                     (eff, e["efficiency"]), (f"{e['dominant']}{share}", e["dominant"])])
    return ("Extrapolation (95% intervals of the models)",
            ["P", "wall per rank (s)", "efficiency", "dominant function"], rows)


def model_parts(rep: dict) -> list:
    """The models section in order: lines (str) and grids (tuples)."""
    out = [amdahl_line(rep)]
    if rep["karp_flatt"]:
        out.append(karp_flatt_grid(rep))
    if rep["models"]["available"]:
        out += [models_grid(rep), extrapolation_grid(rep)]
    else:
        out.append(f"Per-function models: {rep['models']['why_not']}")
    return out


def _rich(grid) -> Table:
    title, cols, rows = grid
    t = Table(title=title, title_justify="left", title_style="bold", box=None,
              pad_edge=False, show_edge=False, min_width=len(title))
    for i, c in enumerate(cols):
        numeric = any(isinstance(r[i][1], (int, float)) for r in rows)
        t.add_column(c, justify="right" if numeric else "left")
    for r in rows:
        t.add_row(*(text for text, _ in r))
    return t


def render(rep: dict, console: Console) -> None:
    st = rep["study"]
    console.print(f"Study {st['name']} ({st['kind']} scaling) in {st['dir']}",
                  highlight=False)
    if st["program"]:
        console.print(f"Program {st['program']}", highlight=False)
    console.print()
    console.print(_rich(points_grid(rep)))
    console.print()
    console.print(_rich(functions_grid(rep)))
    for item in model_parts(rep):
        console.print()
        console.print(item if isinstance(item, str) else _rich(item), highlight=False)
    for note in rep["notes"]:
        console.print(f"note: {note}", style="yellow", highlight=False)
