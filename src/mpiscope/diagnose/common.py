"""What every rule shares: the finding dict, the ranks field, per-rank sums.

A finding is the contract of docs/diagnose.md (and BRIEF): rule id, title,
cost in seconds and % of the run, ranks, evidence, fix, next command. Rules
build it with :func:`finding`; renderers only read it.
"""

from __future__ import annotations

import shlex

import numpy as np

from ..profile import Profile

# A finding that costs less than this share of the run is not worth a user's attention:
# below it, run-to-run noise on a loaded machine is of the same size (docs/diagnose.md).
MIN_COST_PCT = 5.0

# Ranks listed by number when at most this many are involved; otherwise count + min/max only.
LIST_MAX = 16


def stat(rep: dict, metric: str) -> dict:
    """The report's summary row (STATS) of a rank metric: wall, compute, mpi, wait, sync."""
    return next(r for r in rep["summary"] if r["metric"] == metric)


def runtime(rep: dict) -> float:
    """The run's elapsed time: the longest rank's wall time."""
    return float(stat(rep, "wall")["max"])


def pct(seconds: float, rep: dict) -> float:
    t = runtime(rep)
    return 100.0 * seconds / t if t > 0 else 0.0


def ranks_field(ranks, minmax: tuple[int, int] | None = None) -> dict:
    """{"count", "min_pe", "max_pe", "list"} of a set of ranks (list only when short)."""
    ranks = np.unique(np.asarray(ranks, np.int64))
    if len(ranks) == 0:
        return {"count": 0, "min_pe": None, "max_pe": None, "list": None}
    return {"count": int(len(ranks)), "min_pe": int(ranks[0]), "max_pe": int(ranks[-1]),
            "list": ranks.tolist() if len(ranks) <= LIST_MAX else None}


def ev(label: str, value, unit: str = "") -> dict:
    """One evidence item: a number from the profile that supports the finding."""
    if isinstance(value, (np.integer,)):
        value = int(value)
    elif isinstance(value, (np.floating,)):
        value = float(value)
    return {"label": label, "value": value, "unit": unit}


def finding(rule: str, title: str, cost_s: float, rep: dict, ranks: dict,
            evidence: list[dict], fix: str, command: str | None = None) -> dict:
    return {"rule": rule, "title": title, "cost_s": float(max(cost_s, 0.0)),
            "cost_pct": float(max(pct(cost_s, rep), 0.0)), "ranks": ranks,
            "evidence": evidence, "fix": fix, "command": command}


def worth(cost_s: float, rep: dict, min_pct: float = MIN_COST_PCT) -> bool:
    return pct(cost_s, rep) >= min_pct


def kinds(prof: Profile) -> np.ndarray:
    """Kind of every function id (META function_kinds), 'other' past its end."""
    return np.array(prof.function_kinds + ["other"] * max(0, len(prof.functions)
                                                          - len(prof.function_kinds)))


def per_rank(prof: Profile, field: str, func_ids) -> np.ndarray:
    """Per-rank sum of a FUNCS field over the given function ids (full mode)."""
    f = prof.funcs
    mask = np.isin(f["func"], np.asarray(list(func_ids), np.int64))
    return np.bincount(f["rank"][mask], weights=f[field][mask].astype(np.float64),
                       minlength=prof.nranks)


def ids_of_kind(prof: Profile, *wanted: str) -> list[int]:
    k = kinds(prof)
    return [i for i in range(len(prof.functions)) if k[i] in wanted]


def negative_useful(prof: Profile, rep: dict) -> bool:
    """MPI time summed over threads exceeds wall time somewhere: useful time is unknown."""
    return float(stat(rep, "compute")["min"]) < 0


def program_command(prof: Profile, prefix: str) -> str:
    """``prefix -- mpirun -n N <program argv>``: the rerun command a fix names."""
    argv = prof.meta.get("argv")
    if not isinstance(argv, list) or not argv:
        argv = [str(prof.meta.get("program") or "./app")]
    return f"{prefix} -- mpirun -n {prof.nranks} " + " ".join(shlex.quote(str(a)) for a in argv)


def profile_arg(prof: Profile) -> str:
    return shlex.quote(prof.path or "PROFILE")
