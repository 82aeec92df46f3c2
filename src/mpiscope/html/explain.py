"""The diagnosis and the POP metrics, rendered from their dicts (shared contracts, docs/html.md).

Both are optional: a page shows what the dicts hold and says what is missing;
nothing here computes a metric or a finding.
"""

from __future__ import annotations

from ..report.tables import fmt_count, fmt_time
from . import page
from .page import Markup, cell

POP_METRICS = [("parallel_efficiency", "Parallel efficiency"),
               ("load_balance", "Load balance"),
               ("communication_efficiency", "Communication efficiency"),
               ("serialisation", "Serialisation"),
               ("transfer", "Transfer")]


def diagnose_or_none(prof, rep) -> dict | None:
    """The diagnosis dict if ``mpiscope.diagnose`` is installed, else None."""
    try:
        from ..diagnose import diagnose
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("mpiscope.diagnose"):
            return None
        raise
    return diagnose(prof, rep)


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int):
        return fmt_count(v)
    return str(v)


def _ranks(r: dict | None) -> str | None:
    if not r:
        return None
    parts = [f"{fmt_count(r.get('count'))} rank(s)"]
    if r.get("list"):
        shown = r["list"][:20]
        parts.append("ranks " + ", ".join(map(str, shown)) + (" ..." if len(r["list"]) > 20 else ""))
    if r.get("max_pe") is not None:
        parts.append(f"maxPE {r['max_pe']}")
    if r.get("min_pe") is not None:
        parts.append(f"minPE {r['min_pe']}")
    return "; ".join(parts)


def finding(f: dict) -> Markup:
    """One finding: title, cost, ranks, evidence table, fix and next command."""
    from ..diagnose.common import cost_text  # here: the page works without diagnose installed

    cost = cost_text({"cost_pct": 0.0, **f}, fmt_time) if f.get("cost_s") is not None else None
    evidence = f.get("evidence") or []
    return page.el(
        "div",
        page.el("h3", f.get("title") or f.get("rule") or "finding"),
        page.facts([("Rule", f.get("rule")), ("Cost", cost), ("How", f.get("method")),
                    ("Ranks", _ranks(f.get("ranks"))), ("To tell", f.get("settle")),
                    ("Fix", f.get("fix")),
                    ("Next", page.el("code", f["command"]) if f.get("command") else None)]),
        page.table(["evidence", "value", "unit"],
                   [[e.get("label", ""), cell(_value(e.get("value")),
                                              e.get("value") if isinstance(e.get("value"),
                                                                           (int, float)) else None),
                     e.get("unit", "")] for e in evidence], sortable=False)
        if evidence else None,
        cls="finding")


def diagnosis_section(diag: dict | None) -> Markup | None:
    if diag is None:
        return None
    parts = [page.para(page.el("strong", diag.get("headline") or ""))]
    if diag.get("clean"):
        parts.append(page.note("No finding above the rules' thresholds."))
    parts += [finding(f) for f in diag.get("findings") or []]
    if diag.get("limits"):
        parts.append(page.note("Limits: ", "; ".join(str(x) for x in diag["limits"])))
    return page.section("Diagnosis", *parts, anchor="diagnosis")


def _pct(v) -> object:
    return cell("-", None) if v is None else cell(f"{100.0 * v:.1f}%", v)


def pop_section(pop: dict | None) -> Markup | None:
    """POP efficiencies of the whole run and of each region (as fractions shown in %)."""
    if pop is None:
        return None
    if not pop.get("available"):
        return page.section("POP metrics", page.note("Not available: ",
                                                     pop.get("why_not") or "no reason given"),
                            anchor="pop")
    rows = [["whole run", *(_pct((pop.get("whole") or {}).get(k)) for k, _ in POP_METRICS)]]
    rows += [[r.get("name", "?"), *(_pct(r.get(k)) for k, _ in POP_METRICS)]
             for r in pop.get("regions") or []]
    parts = [page.table(["scope", *(label for _, label in POP_METRICS)], rows,
                        caption="POP efficiency metrics (1 = ideal; - where the profile "
                                "cannot support the number)")]
    parts += [page.note(n) for n in pop.get("notes") or []]
    return page.section("POP metrics", *parts, anchor="pop")
