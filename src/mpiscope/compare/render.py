"""Print a compare dict (``compare``) as rich tables; computes nothing."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from ..report.tables import NA, POP_COLUMNS, fmt_bytes, fmt_pe, fmt_time, sparkline
from .environment import change_lines

# Function rows shown in the terminal (--json has all).
TOP = 20


def _table(title: str, *cols: str) -> Table:
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    for i, c in enumerate(cols):
        t.add_column(c, justify="left" if i == 0 else "right", no_wrap=i == 0)
    return t


def _pct(v) -> str:
    return NA if v is None else f"{v:+.1f}%"


def _num(v, fmt=fmt_time) -> str:
    return NA if v is None else fmt(v)


def _count(v) -> str:
    return NA if v is None else (f"{v:,.0f}" if v >= 100 or float(v).is_integer() else f"{v:,.2f}")


def _frac(v) -> str:
    return NA if v is None else f"{100 * v:.1f}%"


def timeline_lines(t: dict) -> list[str]:
    """Both runs' shares on one time axis: per kind a row for A and one for B."""
    if not t.get("available"):
        return [f"timeline: {t['why']}"] if t.get("why") else []
    widths = [t["column_seconds"]] * t["columns"]
    lines = [f"Timeline, A over B, one column = {fmt_time(t['column_seconds'])} s since "
             f"MPI_Init (share of the time per rank; blank past a run's end):"]

    def row(values):
        shown = sparkline([0.0 if v is None else v for v in values], widths)
        return "".join(" " if v is None else ch for v, ch in zip(values, shown))

    for k in t["kinds"] + ["compute"]:
        for side in ("a", "b"):
            lines.append(f"  {k:<8} {side.upper()} |{row(t[side][k])}|")
    for side in ("a", "b"):
        ph = "; ".join(f"{p['label']} {fmt_time(p['start'])}-{fmt_time(p['end'])} s MPI "
                       f"{100 * p['mpi_share']:.0f}%" for p in t["phases"][side])
        b = t["bursts"][side]
        lines.append(f"  phases {side.upper()}: {ph}" + (
            f"; bursts every {fmt_time(b['period'])} s, {fmt_time(b['duration'])} s each"
            if b else ""))
    return lines


def render(c: dict, console: Console) -> None:
    a, b = c["a"], c["b"]
    console.print(f"A: {a['program']}  ({a['path']}), {a['nranks']:,} ranks, {a['mode']} mode, "
                  f"{a['runtime']:.3f} s", highlight=False, markup=False)
    console.print(f"B: {b['program']}  ({b['path']}), {b['nranks']:,} ranks, {b['mode']} mode, "
                  f"{b['runtime']:.3f} s", highlight=False, markup=False)
    for w in c["warnings"]:
        console.print(f"warning: {w}", style="yellow", highlight=False, markup=False)
    for n in c["notes"]:
        console.print(f"note: {n}", style="dim", highlight=False, markup=False)
    env = c.get("environment")
    if env:
        lines = change_lines(env)
        console.print("Environment changed, A -> B:" if lines else
                      "Environment: the same in A and B" + ("" if env["available"] else
                                                            f" as far as known ({env['why_not']})"),
                      style="bold" if lines else "dim", highlight=False, markup=False)
        for line in lines:
            console.print(f"  - {line}", highlight=False, markup=False)
    console.print("Worse in B:" if c["worse"] else "Nothing got worse in B (beyond 5 % noise).",
                  style="bold", highlight=False, markup=False)
    for s in c["worse"]:
        console.print(f"  - {s}", highlight=False, markup=False)

    if c["pop"]["whole"]:
        t = _table("POP efficiency metrics, A -> B", "", *(lbl for _, lbl in POP_COLUMNS))
        rows = [("whole run", c["pop"]["whole"])] + [(f"region {r['name']!r}", r)
                                                     for r in c["pop"]["regions"]]
        for label, m in rows:
            t.add_row(label, *(f"{_frac(m[k]['a'])} -> {_frac(m[k]['b'])}" for k, _ in POP_COLUMNS))
        console.print(t)

    t = _table("Profile summary (seconds per rank), A -> B", "", "avg A", "avg B", "change",
               "max A", "max B", "imb. A", "imb. B", "maxPE A", "maxPE B")
    for m in c["summary"]:
        t.add_row(m["label"], _num(m["avg"]["a"]), _num(m["avg"]["b"]), _pct(m["avg"]["change_pct"]),
                  _num(m["max"]["a"]), _num(m["max"]["b"]),
                  _num(m["imbalance_pct"]["a"], lambda v: f"{v:.1f}%"),
                  _num(m["imbalance_pct"]["b"], lambda v: f"{v:.1f}%"),
                  fmt_pe(m["max_pe"]["a"]), fmt_pe(m["max_pe"]["b"]))
    console.print(t)

    t = _table(f"MPI functions, per rank, biggest growth first (top {TOP}; --json has all)",
               "Function", "time A", "time B", "change", "calls A", "calls B", "bytes A",
               "bytes B", "imb. A", "imb. B", "maxPE A", "maxPE B")
    for f in c["functions"][:TOP]:
        name = f["name"] + ("" if f["in"] == "both" else f" (only {f['in'].upper()})")
        t.add_row(name, _num(f["time"]["a"]), _num(f["time"]["b"]), _pct(f["time"]["change_pct"]),
                  _count(f["calls"]["a"]), _count(f["calls"]["b"]),
                  _num(f["bytes"]["a"], fmt_bytes), _num(f["bytes"]["b"], fmt_bytes),
                  _num(f["imbalance_pct"]["a"], lambda v: f"{v:.1f}%"),
                  _num(f["imbalance_pct"]["b"], lambda v: f"{v:.1f}%"),
                  fmt_pe(f["max_pe"]["a"]), fmt_pe(f["max_pe"]["b"]))
    console.print(t)

    if c.get("callsites"):
        t = _table(f"Call sites, per rank, biggest growth first (top {TOP}; --json has all)",
                   "Function", "Site (parent function)", "time A", "time B", "change", "calls A",
                   "calls B", "imb. A", "imb. B", "maxPE A", "maxPE B")
        for r in c["callsites"][:TOP]:
            where = r["location"] + (f" ({r['parent']})" if r["parent"] else "") + \
                ("" if r["in"] == "both" else f" (only {r['in'].upper()})")
            t.add_row(r["function"], where, _num(r["time"]["a"]), _num(r["time"]["b"]),
                      _pct(r["time"]["change_pct"]), _count(r["calls"]["a"]), _count(r["calls"]["b"]),
                      _num(r["imbalance_pct"]["a"], lambda v: f"{v:.1f}%"),
                      _num(r["imbalance_pct"]["b"], lambda v: f"{v:.1f}%"),
                      fmt_pe(r["max_pe"]["a"]), fmt_pe(r["max_pe"]["b"]))
        console.print(t)

    if c.get("samples"):
        t = _table(f"Compute by function (sampled; estimated CPU seconds per rank), biggest growth "
                   f"first (top {TOP}; --json has all)", "Function", "Where", "avg A", "avg B",
                   "change", "% compute A", "% compute B", "imb. A", "imb. B", "maxPE A",
                   "maxPE B")
        for r in c["samples"][:TOP]:
            where = r["where"] + ("" if r["in"] == "both" else f" (only {r['in'].upper()})")
            t.add_row(r["function"], where, _num(r["seconds"]["a"]), _num(r["seconds"]["b"]),
                      _pct(r["seconds"]["change_pct"]),
                      _num(r["share_pct"]["a"], lambda v: f"{v:.1f}%"),
                      _num(r["share_pct"]["b"], lambda v: f"{v:.1f}%"),
                      _num(r["imbalance_pct"]["a"], lambda v: f"{v:.1f}%"),
                      _num(r["imbalance_pct"]["b"], lambda v: f"{v:.1f}%"),
                      fmt_pe(r["max_pe"]["a"]), fmt_pe(r["max_pe"]["b"]))
        console.print(t)

    if c["regions"]:
        t = _table("Regions (seconds per rank, inclusive), A -> B", "Region", "wall A", "wall B",
                   "change", "MPI A", "MPI B", "imb. A", "imb. B", "maxPE A", "maxPE B")
        for r in c["regions"]:
            name = r["name"] + ("" if r["in"] == "both" else f" (only {r['in'].upper()})")
            t.add_row(name, _num(r["wall"]["a"]), _num(r["wall"]["b"]),
                      _pct(r["wall"]["change_pct"]), _num(r["mpi"]["a"]), _num(r["mpi"]["b"]),
                      _num(r["wall_imbalance_pct"]["a"], lambda v: f"{v:.1f}%"),
                      _num(r["wall_imbalance_pct"]["b"], lambda v: f"{v:.1f}%"),
                      fmt_pe(r["wall_max_pe"]["a"]), fmt_pe(r["wall_max_pe"]["b"]))
        console.print(t)

    for line in timeline_lines(c.get("timeline") or {}):
        console.print(line, highlight=False, markup=False)

    rk = c["ranks"]
    moved = [f"{m}: {v['a']} -> {v['b']}" for m, v in rk["max_pe"].items() if v["a"] != v["b"]]
    console.print("maxPE moved: " + ("; ".join(moved) if moved else "no"), highlight=False, markup=False)
    if rk["mpi_grew"]:
        console.print("MPI time grew most on: " + ", ".join(
            f"rank {r['rank']} ({fmt_time(r['a'])} -> {fmt_time(r['b'])} s)"
            for r in rk["mpi_grew"]), highlight=False, markup=False)
    elif rk["why_not"]:
        console.print(f"ranks whose MPI time grew: not shown, {rk['why_not']}", style="dim",
                      highlight=False, markup=False)
