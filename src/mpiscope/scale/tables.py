"""Render a scale report dict (build.py) as rich tables, in the style of seed 000's scaling tables."""

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


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", title_style="bold", box=None,
                 pad_edge=False, show_edge=False, min_width=len(title))


def points_table(rep: dict) -> Table:
    kind = rep["study"]["kind"]
    rows = rep["points"]
    pop_cols = [(k, label) for k, label in POP_COLUMNS
                if any((r["pop"] or {}).get(k) is not None for r in rows)]
    t = _table(f"{'Strong' if kind == 'strong' else 'Weak'} scaling: {rep['study']['name']} "
               f"(wall time = slowest rank, median of repetitions)")
    t.add_column("P", justify="right")
    t.add_column("reps", justify="right")
    t.add_column("wall (s)", justify="right")
    t.add_column("min", justify="right")
    t.add_column("max", justify="right")
    if kind == "strong":
        t.add_column("speedup", justify="right")
        t.add_column("parallel eff.", justify="right")
    else:
        t.add_column("eff. vs smallest", justify="right")
    t.add_column("MPI %", justify="right")
    for _, label in pop_cols:
        t.add_column(label, justify="right")
    t.add_column("launch (s)", justify="right")
    for r in rows:
        w = r["wall_s"]
        cells = [str(r["np"]), str(r["reps"]), _s(w["median"]), _s(w["min"]), _s(w["max"])]
        if kind == "strong":
            cells += ["-" if r["speedup"] is None else f"{r['speedup']:.2f}",
                      _pct(r["efficiency"])]
        else:
            cells.append(_pct(r["efficiency"]))
        cells.append(f"{r['mpi_pct']:.1f}%")
        cells += [_pct((r["pop"] or {}).get(k)) for k, _ in pop_cols]
        cells.append(_s(r["elapsed_s"]["median"]))
        t.add_row(*cells)
    return t


def functions_table(rep: dict) -> Table:
    nps = rep["points"]
    t = _table("Time per rank by function (s, median of repetitions; (compute) = wall - MPI)")
    t.add_column("function")
    for r in nps:
        t.add_column(f"P={r['np']}", justify="right")
    for f in rep["functions"]:
        t.add_row(f["name"], *(_s(v) for v in f["median"]))
    return t


def models_tables(rep: dict) -> list:
    out = []
    a = rep["amdahl"]
    if a["available"]:
        err = "" if a["serial_fraction_err"] is None else f" ± {a['serial_fraction_err']:.2g}"
        cap = "-" if a["max_speedup"] is None else f"{a['max_speedup']:.3g}"
        out.append(f"[bold]Amdahl[/bold]: serial fraction f = {a['serial_fraction']:.3g}{err}, "
                   f"T(1) = {_s(a['t1_s'])} s, speedup limit 1/f = {cap}")
    else:
        out.append(f"[bold]Amdahl[/bold]: {a['why_not']}")
    if rep["karp_flatt"]:
        t = _table("Karp-Flatt serial fraction e")
        t.add_column("P", justify="right")
        t.add_column("e", justify="right")
        for k in rep["karp_flatt"]:
            t.add_row(str(k["np"]), "-" if k["serial_fraction"] is None
                      else f"{k['serial_fraction']:.4f}")
        out.append(t)
    m = rep["models"]
    if m["available"]:
        t = _table("Per-function models (Extra-P; time per rank T(P) in s)")
        t.add_column("function")
        t.add_column("modelled")
        t.add_column("T(P)")
        t.add_column("SMAPE of T", justify="right")
        for f in m["functions"]:
            t.add_row(f["name"], f["modelled"], f["formula"], f"{f['smape_pct']:.1f}%")
        out.append(t)
        t = _table("Extrapolation (95% intervals of the models)")
        t.add_column("P", justify="right")
        t.add_column("wall per rank (s)", justify="right")
        t.add_column("efficiency", justify="right")
        t.add_column("dominant function")
        for e in rep["extrapolation"]:
            eff = "-" if e["efficiency"] is None else (
                f"{_pct(e['efficiency'])} ({_pct(e['efficiency_lo'])} to "
                f"{'unbounded' if e['efficiency_hi'] is None else _pct(e['efficiency_hi'])})")
            share = "" if e["dominant_share"] is None else f" ({100 * e['dominant_share']:.0f}%)"
            t.add_row(f"{e['np']} ({e['multiple']}x)",
                      f"{_s(e['time_s'])} ({_s(e['time_lo_s'])} to {_s(e['time_hi_s'])})", eff,
                      f"{e['dominant']}{share}")
        out.append(t)
    else:
        out.append(f"[bold]Per-function models[/bold]: {m['why_not']}")
    return out


def render(rep: dict, console: Console) -> None:
    console.print(f"Study {rep['study']['name']} ({rep['study']['kind']} scaling) in "
                  f"{rep['study']['dir']}")
    if rep["study"]["program"]:
        console.print(f"Program {rep['study']['program']}")
    console.print()
    console.print(points_table(rep))
    console.print()
    console.print(functions_table(rep))
    for item in models_tables(rep):
        console.print()
        console.print(item)
    for note in rep["notes"]:
        console.print(f"[yellow]note:[/yellow] {note}")
