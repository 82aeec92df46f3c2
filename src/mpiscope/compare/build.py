"""Build the compare dict from two profiles and their reports (pure; no printing)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from ..errors import UserError
from ..profile import Profile
from ..report.pop import KEYS as POP_KEYS
from .environment import environment_changes
from .timeline import compare_timelines, worse_items as timeline_worse

SCHEMA = "mpiscope-compare/1"
# Ranks listed in "mpi_grew" (same rank count, full mode both).
TOP_RANKS = 5
# A change smaller than this share of the larger value is "unchanged" in the worse-first list.
NOISE_PCT = 5.0


def kept_for_compare(prof: Profile) -> Profile:
    """The part of a profile ``compare`` reads once its report is built: the per-rank rows
    (copied) and the summary records. Dropping the rest unmaps the file, so comparing two
    1,048,576-rank profiles holds one mapped file at a time, not two (docs/performance.md)."""
    # every other record array, so no view of the mapped file survives (ENV, COMMS, MPIT...)
    empty = {f.name: np.zeros(0, getattr(prof, f.name).dtype) for f in dataclasses.fields(prof)
             if isinstance(getattr(prof, f.name), np.ndarray) and f.name not in ("ranks", "summary")}
    return dataclasses.replace(prof, ranks=np.array(prof.ranks), summary=np.array(prof.summary),
                               **empty)


def _side(prof: Profile, rep: dict) -> dict:
    p = rep["profile"]
    wall = next(r for r in rep["summary"] if r["metric"] == "wall")
    return {"path": prof.path, "program": p["program"], "argv": p["argv"], "nranks": prof.nranks,
            "mode": prof.mode, "sync": p["sync"], "runtime": float(wall["max"]),
            "mpi_library": p["mpi_library"], "mpi_library_line": p["mpi_library_line"]}


def _change(a, b) -> dict:
    """{"a", "b", "delta", "change_pct"} of two numbers (either may be None)."""
    if a is None or b is None:
        return {"a": a, "b": b, "delta": None, "change_pct": None}
    d = b - a
    return {"a": a, "b": b, "delta": d, "change_pct": 100.0 * d / a if a else None}


def _program(p: dict) -> str:
    return os.path.basename(p["program"] or "?")


def compare(prof_a: Profile, rep_a: dict, prof_b: Profile, rep_b: dict,
            strict: bool = False) -> dict:
    """What changed from profile A to profile B.

    Arguments:
        prof_a, rep_a / prof_b, rep_b: each profile and its ``build_report``.
        strict: refuse (UserError) when the two come from different programs.
    """
    a, b = _side(prof_a, rep_a), _side(prof_b, rep_b)
    warnings = []
    if _program(a) != _program(b):
        msg = f"the profiles come from different programs ({_program(a)} and {_program(b)})"
        if strict:
            raise UserError(msg + ": --strict refuses to compare them")
        warnings.append(msg + ": the comparison may mean little")
    elif (a["argv"] or [])[1:] != (b["argv"] or [])[1:]:
        warnings.append("the two runs had different arguments: "
                        f"A {' '.join((a['argv'] or [])[1:]) or '(none)'}; "
                        f"B {' '.join((b['argv'] or [])[1:]) or '(none)'}")
    if a["mode"] != b["mode"]:
        warnings.append(f"A is a {a['mode']}-mode profile and B a {b['mode']}-mode one: "
                        "per-rank comparisons need full mode on both")
    if a["mpi_library"] != b["mpi_library"]:
        warnings.append("the two runs used different MPI libraries")
    per_rank = a["nranks"] != b["nranks"]
    notes = ["times, calls and bytes are per-rank averages (sum over ranks / ranks)"]
    if per_rank:
        notes.append(f"A has {a['nranks']:,} ranks and B {b['nranks']:,}: per-rank averages "
                     "compare the runs; totals would not")
    summary = [{"metric": ra["metric"], "label": ra["label"],
                "avg": _change(ra["avg"], rb["avg"]), "max": _change(ra["max"], rb["max"]),
                "imbalance_pct": _change(ra["imbalance_pct"], rb["imbalance_pct"]),
                "max_pe": {"a": ra["max_pe"], "b": rb["max_pe"]}}
               for ra, rb in zip(rep_a["summary"], rep_b["summary"])]
    functions, only_f = _functions(rep_a["functions"], rep_b["functions"], a["nranks"], b["nranks"])
    regions, only_r = _regions(rep_a, rep_b)
    warnings += only_r
    out = {
        "schema": SCHEMA, "a": a, "b": b, "per_rank_averages": True,
        "different_rank_counts": per_rank, "warnings": warnings, "notes": notes,
        "runtime": _change(a["runtime"], b["runtime"]),
        "pop": _pop(rep_a.get("pop"), rep_b.get("pop")),
        "summary": summary, "functions": functions, "functions_in_one_only": only_f,
        "regions": regions, "ranks": _ranks(prof_a, rep_a, prof_b, rep_b),
        "timeline": compare_timelines(rep_a.get("timeline"), rep_b.get("timeline")),
        "callsites": _callsites(rep_a.get("callsites"), rep_b.get("callsites"),
                                a["nranks"], b["nranks"]),
        "samples": _samples(rep_a.get("samples"), rep_b.get("samples")),
        "environment": environment_changes(prof_a, rep_a, prof_b, rep_b),
    }
    out["worse"] = _worse(out)
    return out


def _fkey(rows: list[dict]) -> dict[str, dict]:
    return {r["name"]: r for r in rows}


def _frow(r: dict | None, n: int) -> dict:
    if r is None:
        return {"time": 0.0, "calls": 0.0, "bytes": 0.0, "imbalance_pct": None, "max_pe": None}
    s = r["time_per_rank"]
    return {"time": r["time"] / n, "calls": r["calls"] / n,
            "bytes": (r["bytes_sent"] + r["bytes_recv"]) / n,
            "imbalance_pct": s["imbalance_pct"], "max_pe": s["max_pe"]}


def _functions(fa: list[dict], fb: list[dict], na: int, nb: int) -> tuple[list[dict], dict]:
    ka, kb = _fkey(fa), _fkey(fb)
    rows = []
    for name in sorted(set(ka) | set(kb)):
        x, y = _frow(ka.get(name), max(na, 1)), _frow(kb.get(name), max(nb, 1))
        rows.append({"name": name, "kind": (ka.get(name) or kb.get(name))["kind"],
                     "in": "both" if name in ka and name in kb else ("a" if name in ka else "b"),
                     "time": _change(x["time"], y["time"]), "calls": _change(x["calls"], y["calls"]),
                     "bytes": _change(x["bytes"], y["bytes"]),
                     "imbalance_pct": _change(x["imbalance_pct"], y["imbalance_pct"]),
                     "max_pe": {"a": x["max_pe"], "b": y["max_pe"]}})
    rows.sort(key=lambda r: (-r["time"]["delta"], r["name"]))
    only = {"a": sorted(set(ka) - set(kb)), "b": sorted(set(kb) - set(ka))}
    return rows, only


def site_key(r: dict) -> tuple:
    """What identifies a call site across two runs: the function, its line (or module+offset)
    with the function holding it, and the callers' lines (depth > 1)."""
    from ..report.tables import callsite_frame_text
    return (r["function"], r["location"], r["parent"],
            tuple(callsite_frame_text(f) for f in r["frames"][1:]))


def _callsites(ca: dict | None, cb: dict | None, na: int, nb: int) -> list[dict]:
    """Per call site (matched by site_key), per-rank averages A -> B, biggest growth first;
    [] unless both runs recorded call sites."""
    if not ca or not cb or not ca.get("recorded") or not cb.get("recorded"):
        return []
    ka = {site_key(r): r for r in ca["rows"]}
    kb = {site_key(r): r for r in cb["rows"]}
    rows = []
    for key in sorted(set(ka) | set(kb), key=str):
        x, y = _frow(_as_frow(ka.get(key)), max(na, 1)), _frow(_as_frow(kb.get(key)), max(nb, 1))
        rows.append({"function": key[0], "location": key[1], "parent": key[2],
                     "called_from": list(key[3]),
                     "in": "both" if key in ka and key in kb else ("a" if key in ka else "b"),
                     "time": _change(x["time"], y["time"]), "calls": _change(x["calls"], y["calls"]),
                     "bytes": _change(x["bytes"], y["bytes"]),
                     "imbalance_pct": _change(x["imbalance_pct"], y["imbalance_pct"]),
                     "max_pe": {"a": x["max_pe"], "b": y["max_pe"]}})
    rows.sort(key=lambda r: (-r["time"]["delta"], r["function"], r["location"]))
    return rows


def _samples(sa: dict | None, sb: dict | None) -> list[dict]:
    """Per sampled function (matched by name and file, else module), its estimated CPU
    seconds per rank (avg) and share of the compute samples, A -> B, biggest growth first;
    [] unless both runs were sampled."""
    if not sa or not sb or not sa.get("recorded") or not sb.get("recorded"):
        return []

    def key(r: dict) -> tuple:
        return (r["function"], os.path.basename(r["file"] or r["module"] or ""))

    ka = {key(r): r for r in sa["functions"]}
    kb = {key(r): r for r in sb["functions"]}
    rows = []
    for k in sorted(set(ka) | set(kb)):
        x, y = ka.get(k), kb.get(k)
        rows.append({"function": k[0], "where": k[1],
                     "in": "both" if x and y else ("a" if x else "b"),
                     "seconds": _change(x["time_per_rank"]["avg"] if x else 0.0,
                                        y["time_per_rank"]["avg"] if y else 0.0),
                     "share_pct": _change(100 * x["share"] if x else 0.0,
                                          100 * y["share"] if y else 0.0),
                     "imbalance_pct": _change(x["time_per_rank"]["imbalance_pct"] if x else None,
                                              y["time_per_rank"]["imbalance_pct"] if y else None),
                     "max_pe": {"a": x["time_per_rank"]["max_pe"] if x else None,
                                "b": y["time_per_rank"]["max_pe"] if y else None}})
    rows.sort(key=lambda r: (-r["seconds"]["delta"], r["function"], r["where"]))
    return rows


def _as_frow(r: dict | None) -> dict | None:
    """A call-site row in the shape _frow reads (a function row's)."""
    return None if r is None else {**r, "name": r["function"]}


def _rstat(r: dict | None, key: str):
    s = None if r is None else r.get(key)
    return None if s is None else s["avg"]


def _regions(rep_a: dict, rep_b: dict) -> tuple[list[dict], list[str]]:
    ka, kb = _fkey(rep_a["regions"]), _fkey(rep_b["regions"])
    rows, warnings = [], []
    for name in sorted(set(ka) | set(kb)):
        ra, rb = ka.get(name), kb.get(name)
        where = "both" if ra and rb else ("a" if ra else "b")
        if where != "both":
            warnings.append(f"region {name!r} is only in {where.upper()}: compared against nothing")
        rows.append({"name": name, "in": where,
                     "wall": _change(_rstat(ra, "wall"), _rstat(rb, "wall")),
                     "mpi": _change(_rstat(ra, "mpi"), _rstat(rb, "mpi")),
                     "wall_imbalance_pct": _change(
                         None if not ra or not ra.get("wall") else ra["wall"]["imbalance_pct"],
                         None if not rb or not rb.get("wall") else rb["wall"]["imbalance_pct"]),
                     "wall_max_pe": {"a": ra["wall"]["max_pe"] if ra and ra.get("wall") else None,
                                     "b": rb["wall"]["max_pe"] if rb and rb.get("wall") else None}})
    return rows, warnings


def _pop(pa: dict | None, pb: dict | None) -> dict:
    if not pa or not pb:
        return {"whole": {}, "regions": []}
    whole = {k: _change(pa["whole"][k], pb["whole"][k]) for k in POP_KEYS}
    ka, kb = _fkey(pa["regions"]), _fkey(pb["regions"])
    regions = [{"name": n, **{k: _change(ka[n][k] if n in ka else None,
                                         kb[n][k] if n in kb else None) for k in POP_KEYS}}
               for n in sorted(set(ka) | set(kb))]
    return {"whole": whole, "regions": regions}


def _ranks(prof_a: Profile, rep_a: dict, prof_b: Profile, rep_b: dict) -> dict:
    """Which ranks moved: the maxPE of each summary metric, and (same rank count, full mode)
    the ranks whose MPI time grew most."""
    max_pe = {r["metric"]: {"a": r["max_pe"], "b": s["max_pe"]}
              for r, s in zip(rep_a["summary"], rep_b["summary"])}
    out = {"max_pe": max_pe, "mpi_grew": [], "why_not": None}
    if prof_a.is_summary or prof_b.is_summary:
        out["why_not"] = "per-rank changes need full-mode profiles on both sides"
    elif prof_a.nranks != prof_b.nranks:
        out["why_not"] = "the runs have different rank counts: rank numbers do not correspond"
    else:
        d = prof_b.rank_metric("mpi") - prof_a.rank_metric("mpi")
        top = np.argsort(-d, kind="stable")[:TOP_RANKS]
        out["mpi_grew"] = [{"rank": int(r), "a": float(prof_a.ranks["mpi"][r]),
                            "b": float(prof_b.ranks["mpi"][r]), "delta": float(d[r])}
                           for r in top if d[r] > 0]
    return out


def _worse(c: dict) -> list[str]:
    """What got worse, costliest first, as sentences (the terminal's first lines)."""
    items = []
    rt = c["runtime"]
    if rt["delta"] is not None and rt["a"] and rt["delta"] > NOISE_PCT / 100 * rt["a"]:
        items.append((rt["delta"], f"runtime grew {rt['a']:.3g} s -> {rt['b']:.3g} s "
                                   f"(+{rt['change_pct']:.0f}%)"))
    for f in c["functions"]:
        t = f["time"]
        if t["delta"] > 0 and t["delta"] > NOISE_PCT / 100 * max(t["a"], t["b"]) and \
                t["delta"] > NOISE_PCT / 100 * c["b"]["runtime"] / 10:
            items.append((t["delta"], f"{f['name']}: {t['a']:.3g} -> {t['b']:.3g} s per rank"
                          + ("" if f["in"] == "both" else f" (only in {f['in'].upper()})")))
    for k, ch in c["pop"].get("whole", {}).items():
        if ch["delta"] is not None and ch["delta"] < -NOISE_PCT / 100:
            items.append((-ch["delta"] * c["b"]["runtime"],
                          f"{k.replace('_', ' ')} fell {100 * ch['a']:.1f}% -> {100 * ch['b']:.1f}%"))
    for m in c["summary"]:
        ch = m["imbalance_pct"]
        if m["metric"] == "compute" and ch["delta"] is not None and ch["delta"] > 10:
            items.append((0.0, f"compute imbalance grew {ch['a']:.1f}% -> {ch['b']:.1f}% "
                               f"(maxPE {m['max_pe']['a']} -> {m['max_pe']['b']})"))
    items += timeline_worse(c.get("timeline") or {})
    items.sort(key=lambda x: -x[0])
    return [s for _, s in items]
