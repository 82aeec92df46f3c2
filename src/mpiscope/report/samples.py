"""Compute by function (sampled): CrayPat's sampling experiment in the report's layout.

The runtime (MPISCOPE_SAMPLE, docs/sampling.md) counts, per thread, the program counters
its CPU-time timer interrupted outside MPI as (module, offset), and per wrapped MPI
function the samples taken inside one. Here the addresses are symbolized with the call
sites' symbolizer (mpiscope.symbols: the same modules, the same rules) and grouped by the
function the user wrote (an inlined system-header function counts where it was inlined).

Each row: the function, its file and its most sampled line, its share of the compute
samples with the standard error of that share, sqrt(p (1 - p) / n) for n compute
samples (a binomial proportion: the samples are taken at a steady rate of CPU time, so
they are a sample of where it went), and the estimated CPU time per rank (its samples /
Hz) with min/max/avg, minPE/maxPE and CrayPat's imbalance. The schema is in
docs/report.md ("samples").

A summary-mode profile holds the same per function, reduced in the job (one record per
function start over all ranks: sum, min, max, minPE, maxPE): the same rows, without the
most sampled line, per-rank seconds or per-thread rows.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .. import format as fmt
from ..symbols import Symbolizer, user_frame
from .callsites import modules_of, symbolizer_from_env
from .imbalance import imbalance_pct, rank_stats, summary_stats

DEFAULT_TOP = 20
PER_RANK_FUNCTIONS = 8      # functions whose per-rank seconds the dict carries (HTML, diagnose)
PER_RANK_MAX_RANKS = 65536  # ... up to this many ranks (beyond, only the stats)
THREAD_ROWS_MAX = 1024      # per-thread rows of ranks sampled on more than one thread
OTHER = "(other addresses: not kept, see MPISCOPE_SAMPLE_MAX)"
UNKNOWN = "(in no loaded object)"
LAYER = "(MPI library or wrapper code outside a recorded call)"


def share_se(k: float, n: float) -> float:
    """Standard error of the share k / n of n samples (a binomial proportion)."""
    if n <= 0:
        return 0.0
    p = k / n
    return math.sqrt(max(p * (1.0 - p), 0.0) / n)


def _labels(prof, recs: np.ndarray, sym: Symbolizer) -> tuple[list[tuple], list[int | None], list]:
    """Per compute record: its function's key (function, file, module path), the line it
    resolved to, and the status of the modules involved."""
    mods = modules_of(prof)
    want: dict[int, set[int]] = {}
    for key, off in zip(recs["module"].tolist(), recs["offset"].tolist()):
        if key in mods:
            want.setdefault(key, set()).add(int(off))
    resolved = {key: sym.resolve(mods[key], offs) for key, offs in want.items()}
    keys, lines = [], []
    for key, off in zip(recs["module"].tolist(), recs["offset"].tolist()):
        m = mods.get(key)
        if m is None:
            keys.append((UNKNOWN, None, None))
            lines.append(None)
            continue
        uf = user_frame(resolved[key].get(int(off), ()))
        if uf is not None and uf.function:
            keys.append((uf.function, uf.file, m.path))
            lines.append(uf.line)
        else:
            keys.append((f"({m.name}: no symbol)", None, m.path))
            lines.append(None)
    status = [sym.module_report(mods[key], resolved[key])
              for key in sorted(want, key=lambda k: mods[k].path)]
    return keys, lines, status


def record_labels(prof, sym: Symbolizer | None = None) -> tuple[list[str], list, list[bool]]:
    """Per SAMPLES record: the function it counts for (the sampled function, or the MPI
    function, or OTHER / LAYER), its file (None in MPI) and whether it is MPI time."""
    s = prof.samples
    func = s["func"]
    comp = (func == fmt.SAMPLE_COMPUTE)
    keys, _, _ = _labels(prof, s[comp], sym or symbolizer_from_env()) if comp.any() else ([], [], [])
    it = iter(keys)
    names, files, mpi = [], [], []
    for f in func.tolist():
        if f == fmt.SAMPLE_COMPUTE:
            k = next(it)
            names.append(k[0])
            files.append(k[1])
        else:
            names.append(OTHER if f == fmt.SAMPLE_OTHER else LAYER if f == fmt.SAMPLE_MPI_LAYER
                         else prof.functions[f])
            files.append(None)
        mpi.append(f != fmt.SAMPLE_COMPUTE and f != fmt.SAMPLE_OTHER)
    return names, files, mpi


def samples_section(prof, top: int | None = DEFAULT_TOP, sym: Symbolizer | None = None) -> dict:
    """The report's "samples" dict ("recorded": False when the run was not sampled)."""
    hz = prof.sample_hz
    out = {"recorded": hz is not None and len(prof.samples) > 0,
           "hz": hz, "top": top, "functions": [], "mpi": [], "threads": [], "per_rank": None,
           "samples": 0, "compute_samples": 0, "mpi_samples": 0, "modules": [], "notes": []}
    if hz is None:
        return out
    if prof.is_summary:
        return _summary_section(prof, out, sym or symbolizer_from_env())
    s = prof.samples
    if not len(s):
        out["notes"].append("sampling was on but no thread ran long enough to be sampled")
        return out
    P = prof.nranks
    period = 1.0 / hz
    compute = s[(s["func"] == fmt.SAMPLE_COMPUTE) | (s["func"] == fmt.SAMPLE_OTHER)]
    in_mpi = s[s["func"] < fmt.SAMPLE_MPI_LAYER]
    layer = s[s["func"] == fmt.SAMPLE_MPI_LAYER]
    sym = sym or symbolizer_from_env()
    keys, lines, out["modules"] = _labels(prof, compute, sym)
    for i, f in enumerate(compute["func"].tolist()):
        if f == fmt.SAMPLE_OTHER:
            keys[i], lines[i] = (OTHER, None, None), None
    index: dict[tuple, int] = {}
    idx = np.array([index.setdefault(k, len(index)) for k in keys], dtype=np.int64)
    nf = len(index)
    counts = compute["samples"].astype(np.float64)
    per_rank = np.zeros((nf, P))
    np.add.at(per_rank, (idx, compute["rank"].astype(np.int64)), counts)
    n = float(counts.sum())
    out["samples"] = int(s["samples"].sum())
    out["compute_samples"] = int(n)
    out["mpi_samples"] = int(in_mpi["samples"].sum() + layer["samples"].sum())
    names = list(index)
    rows = []
    for g, (func, file, module) in enumerate(names):
        k = float(per_rank[g].sum())
        mine = idx == g
        hot = None
        by_line: dict[int, float] = {}
        for ln, c in zip((lines[i] for i in np.flatnonzero(mine)), counts[mine]):
            if ln:
                by_line[ln] = by_line.get(ln, 0.0) + c
        if by_line:
            hot = max(by_line, key=lambda ln: (by_line[ln], -ln))
        st = rank_stats(per_rank[g] * period)
        rows.append({"function": func, "file": file, "line": hot, "module": module,
                     "samples": int(k), "share": k / n if n else 0.0,
                     "share_se": share_se(k, n), "time_per_rank": st,
                     "imbalance_time": st["max"] - st["avg"], "_g": g})
    rows.sort(key=lambda r: (-r["samples"], r["function"]))
    for i, r in enumerate(rows, start=1):
        r["rank_by_samples"] = i
    if P <= PER_RANK_MAX_RANKS:
        shown = rows[:PER_RANK_FUNCTIONS]
        rest = per_rank.sum(axis=0) - sum(per_rank[r["_g"]] for r in shown) if shown else \
            per_rank.sum(axis=0)
        out["per_rank"] = {"functions": [r["function"] for r in shown] + ["(rest)"],
                           "seconds": [(per_rank[r["_g"]] * period).tolist() for r in shown]
                           + [(np.maximum(rest, 0.0) * period).tolist()]}
    out["threads"] = _threads(compute, idx, names, P, period)
    for r in rows:
        del r["_g"]
    out["functions"] = rows
    mpi_names = prof.functions
    mpi_counts = np.bincount(in_mpi["func"].astype(np.int64), weights=in_mpi["samples"],
                             minlength=len(mpi_names)) if len(in_mpi) else np.zeros(0)
    out["mpi"] = _mpi_rows(mpi_names, mpi_counts.tolist(),
                           float(layer["samples"].sum()) if len(layer) else 0.0, float(out["samples"]))
    _notes(out, hz)
    return out


def _mpi_rows(names: list[str], counts: list[float], layer: float, total: float) -> list[dict]:
    """The samples taken in each MPI function (most first), then in the MPI layer."""
    def row(name: str, c: float) -> dict:
        return {"function": name, "samples": int(c), "share_of_samples": c / total if total else 0.0,
                "share_se": share_se(float(c), total)}
    rows = sorted((row(names[f], c) for f, c in enumerate(counts) if c),
                  key=lambda r: (-r["samples"], r["function"]))
    return rows + ([row(LAYER, layer)] if layer else [])


def _notes(out: dict, hz: float) -> None:
    out["notes"] += [m["note"] for m in out["modules"] if m["status"] != "ok"]
    out["notes"].append(
        f"{out['samples']:,} samples at {hz:g} Hz of each thread's CPU time "
        f"({out['compute_samples']:,} outside MPI): a share p of n samples has a standard "
        f"error of sqrt(p(1-p)/n) (the ± column); estimated time = samples / {hz:g} Hz, "
        f"CPU time, summed over a rank's threads")
    out["notes"].append("sampled: the threads that call MPI (each from its first MPI call) and "
                        "the threads they start outside MPI calls; docs/sampling.md")


def _summary_section(prof, out: dict, sym: Symbolizer) -> dict:
    """The "samples" dict of a summary-mode profile: its SAMPLE_SUMMARY records (one per
    function start, reduced over ranks in the job) symbolized and grouped by function as
    samples_section does; the stats per rank are the runtime's sum/min/max/minPE/maxPE."""
    s = prof.samples
    hz = out["hz"]
    if not len(s):
        out["notes"].append("sampling was on but no thread ran long enough to be sampled")
        return out
    P, period = prof.nranks, 1.0 / hz
    func = s["func"]
    total = float(s["sum"][func == fmt.SAMPLE_ALL].sum())
    n = float(s["sum"][func == fmt.SAMPLE_COMPUTE_ALL].sum())
    fns = s[(func == fmt.SAMPLE_COMPUTE) | (func == fmt.SAMPLE_OTHER)]
    keys, _, out["modules"] = _labels(prof, fns, sym)
    for i, f in enumerate(fns["func"].tolist()):
        if f == fmt.SAMPLE_OTHER:
            keys[i] = (OTHER, None, None)
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    rows, merged = [], 0
    for (name, file, module), idx in groups.items():
        recs = fns[idx]
        k = float(recs["sum"].sum())
        big = recs[int(np.argmax(recs["sum"]))]
        st = summary_stats(big, P)
        if len(recs) > 1:       # several starts of one name: sums exact, min/max bounds
            merged += 1
            st.update(min=float(recs["min"].sum()), max=float(recs["max"].sum()), sum=k, avg=k / P)
        st = {key: (v * period if key in ("min", "max", "avg", "sum") else v) for key, v in st.items()}
        st["imbalance_pct"] = imbalance_pct(st["max"], st["avg"], P)
        rows.append({"function": name, "file": file, "line": None, "module": module,
                     "samples": int(k), "share": k / n if n else 0.0, "share_se": share_se(k, n),
                     "time_per_rank": st, "imbalance_time": st["max"] - st["avg"],
                     "ranks_sampled": int(recs["nonzero"].max())})
    rows.sort(key=lambda r: (-r["samples"], r["function"]))
    for i, r in enumerate(rows, start=1):
        r["rank_by_samples"] = i
    out["functions"] = rows
    out["samples"], out["compute_samples"] = int(total), int(n)
    in_mpi = s[func < fmt.SAMPLE_COMPUTE_ALL]
    layer = float(s["sum"][func == fmt.SAMPLE_MPI_LAYER].sum())
    mpi_counts = np.bincount(in_mpi["func"].astype(np.int64), weights=in_mpi["sum"],
                             minlength=len(prof.functions)) if len(in_mpi) else np.zeros(0)
    out["mpi_samples"] = int(mpi_counts.sum() + layer)
    out["mpi"] = _mpi_rows(prof.functions, mpi_counts.tolist(), layer, total)
    cap = int((prof.meta.get("samples") or {}).get("max_records", 0))
    out["notes"].append(
        f"summary mode: reduced in the job, per function start (unwind tables) over all ranks; "
        f"at most {cap:,} functions, the rest in other; no per-line, per-rank or per-thread "
        f"samples (full mode has them)")
    if merged:
        out["notes"].append(f"{merged} function(s) sampled at several starts: their min/max per "
                            f"rank are the sums of each start's (bounds)")
    _notes(out, hz)
    return out


# The OpenMP runtimes' libraries (GNU, LLVM, Intel): a thread's samples there are its
# waiting at barriers and for work (spinning), not the program's work.
OPENMP_RUNTIMES = ("libgomp.", "libomp.", "libiomp5.", "libiomp.")


def _threads(compute: np.ndarray, idx: np.ndarray, names: list[tuple], P: int,
             period: float) -> list[dict]:
    """Per (rank, thread) of the ranks sampled on more than one thread: its compute seconds,
    of which in the OpenMP runtime, and its three most sampled functions."""
    if not len(compute):
        return []
    in_omp = np.array([bool(m) and os.path.basename(m).startswith(OPENMP_RUNTIMES)
                       for _, _, m in names], bool)
    ranks = compute["rank"].astype(np.int64)
    threads = compute["thread"].astype(np.int64)
    multi = [r for r in np.unique(ranks).tolist()
             if len(np.unique(threads[ranks == r])) > 1]
    out = []
    for r in multi:
        for t in np.unique(threads[ranks == r]).tolist():
            mine = (ranks == r) & (threads == t)
            by_f = np.bincount(idx[mine], weights=compute["samples"][mine], minlength=len(names))
            topf = np.argsort(-by_f, kind="stable")[:3]
            out.append({"rank": r, "thread": t, "seconds": float(by_f.sum()) * period,
                        "openmp_runtime_seconds": float(by_f[in_omp].sum()) * period,
                        "functions": [{"function": names[g][0], "seconds": float(by_f[g]) * period}
                                      for g in topf if by_f[g] > 0]})
            if len(out) >= THREAD_ROWS_MAX:
                return out
    return out


def where(row: dict) -> str:
    """file:line of a row (its most sampled line), else the module's name, else "?"."""
    if row["file"]:
        return os.path.basename(row["file"]) + (f":{row['line']}" if row["line"] else "")
    if row["module"]:
        return os.path.basename(row["module"])
    return "?"
