"""Print a diagnosis dict (``diagnose``) on a rich console; computes nothing."""

from __future__ import annotations

from rich.console import Console

from ..report.tables import fmt_bytes, fmt_count, fmt_time, header_lines, pop_lines, pop_table
from .common import cost_text


def _value(e: dict) -> str:
    v, unit = e["value"], e["unit"]
    if isinstance(v, str):
        return v
    if unit == "s":
        return f"{fmt_time(v)} s"
    if unit == "B":
        return fmt_bytes(v)
    if unit == "%":
        return f"{v:.1f}%"
    if unit == "x":
        return f"{v:.2f}x"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.3g}"
    return fmt_count(v)


def _ranks(r: dict) -> str:
    if not r["count"]:
        return "-"
    if r["list"] is not None:
        return ", ".join(map(str, r["list"]))
    return f"{r['count']:,} ranks, minPE {r['min_pe']}, maxPE {r['max_pe']}"


def render(diag: dict, rep: dict, console: Console) -> None:
    for line in header_lines(rep):
        console.print(line, highlight=False, markup=False)
    pop = rep.get("pop")
    if pop is not None and pop["available"]:
        console.print(pop_table(pop))
    elif pop is not None:
        console.print(pop_lines(pop)[0], highlight=False, markup=False)
    console.print(diag["headline"], style="bold", highlight=False, markup=False)
    for i, f in enumerate(diag["findings"], 1):
        console.print()
        console.print(f"{i}. [{f['rule']}] {f['title']}", style="bold", highlight=False, markup=False)
        console.print(f"   cost: {cost_text(f, fmt_time)}", highlight=False, markup=False)
        if f.get("method"):
            console.print(f"   how: {f['method']}", highlight=False, markup=False)
        console.print(f"   ranks: {_ranks(f['ranks'])}", highlight=False, markup=False)
        for e in f["evidence"]:
            console.print(f"   - {e['label']}: {_value(e)}", highlight=False, markup=False)
        if f.get("settle"):
            console.print(f"   to tell: {f['settle']}", highlight=False, markup=False)
        console.print(f"   fix: {f['fix']}", highlight=False, markup=False)
        if f["command"]:
            console.print(f"   next: {f['command']}", highlight=False, markup=False, soft_wrap=True)
    if diag["limits"]:
        console.print()
        for line in diag["limits"]:
            console.print(f"limit: {line}", style="dim", highlight=False, markup=False)
