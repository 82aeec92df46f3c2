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


def job_time(rep: dict) -> float:
    """The whole job as MPI sees it: the longest MPI_Init + the run (runtime) + the longest
    wait in MPI_Finalize; the run alone when the profile has no environment records."""
    env = rep.get("environment") or {}
    if not env.get("available"):
        return runtime(rep)
    return float(env["init"]["max"]) + runtime(rep) + float(env["finalize"]["max"])


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


def all_ranks(prof: Profile) -> dict:
    """The ranks field of a finding that concerns every rank."""
    n = prof.nranks
    return {"count": n, "min_pe": 0, "max_pe": n - 1, "list": None if n > LIST_MAX else list(range(n))}


def p2p_by_bucket(rep: dict) -> list[tuple[dict, int]]:
    """(histogram row, point-to-point calls in it) per size bucket; bucket 0 is left out:
    0-byte calls (MPI_PROC_NULL at a domain's edge, empty messages) carry nothing."""
    kinds = {r["name"]: r["kind"] for r in rep["functions"]}
    return [(h, sum(c for f, c in h["by_function"].items() if kinds.get(f) == "p2p"))
            for h in rep["histogram"] if h["bucket"] != 0]


def p2p_time(rep: dict) -> float:
    """Point-to-point time per rank (p2p and wait kinds, avg over ranks)."""
    return sum(r["time_per_rank"]["avg"] for r in rep["functions"] if r["kind"] in ("p2p", "wait"))


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
            "cost_pct": float(max(pct(cost_s, rep), 0.0)), "pct_of": "run", "ranks": ranks,
            "evidence": evidence, "fix": fix, "command": command}


def of_job(f: dict, rep: dict) -> dict:
    """The finding with cost_pct as a share of the job (job_time), for costs outside the run
    (MPI_Init, the wait in MPI_Finalize)."""
    job = job_time(rep)
    f["cost_pct"] = 100.0 * f["cost_s"] / job if job > 0 else 0.0
    f["pct_of"] = "job"
    return f


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


def program_command(prof: Profile, prefix: str, launcher_opts: str = "") -> str:
    """``prefix -- mpirun [launcher_opts] -n N <program argv>``: the rerun command a fix names."""
    argv = prof.meta.get("argv")
    if not isinstance(argv, list) or not argv:
        argv = [str(prof.meta.get("program") or "./app")]
    opts = f"{launcher_opts} " if launcher_opts else ""
    return f"{prefix} -- mpirun {opts}-n {prof.nranks} " + " ".join(shlex.quote(str(a)) for a in argv)


def mpi_family(prof: Profile) -> str:
    """"openmpi", "mpich", "intel" or "other", from META mpi_library (MPI_Get_library_version)."""
    lib = str(prof.meta.get("mpi_library") or "")
    if "Open MPI" in lib:
        return "openmpi"
    if "Intel(R) MPI" in lib or "Intel MPI" in lib:
        return "intel"
    if "MPICH" in lib:
        return "mpich"
    return "other"


def env_of(rep: dict) -> dict | None:
    """The report's environment section when the profile has one (docs/report.md)."""
    env = rep.get("environment")
    return env if env and env.get("available") else None


# How each launcher binds each rank to its own cores (threads: cores per rank).
BIND_FLAGS = {"openmpi": ("--bind-to core --map-by core", "--map-by slot:PE={t} --bind-to core"),
              "mpich": ("-bind-to core", "-bind-to core:{t}"),
              "intel": ("-genv I_MPI_PIN=1", "-genv I_MPI_PIN_DOMAIN={t}")}
BIND_ANYWHERE = ("Slurm: srun --cpu-bind=cores (with --cpus-per-task=T for T threads); "
                 "Open MPI: mpirun --bind-to core (--map-by slot:PE=T); MPICH: mpiexec "
                 "-bind-to core (-bind-to core:T); Cray: aprun -d T, as the Cray MPI tips show")


def bind_command(prof: Profile, threads: int = 1) -> str | None:
    """The rerun with every rank bound to its own cores (``threads`` per rank), for this MPI."""
    flags = BIND_FLAGS.get(mpi_family(prof))
    if not flags:
        return None
    opts = flags[0] if threads <= 1 else flags[1].format(t=threads)
    return program_command(prof, "mpiscope run", opts)


def profile_arg(prof: Profile) -> str:
    return shlex.quote(prof.path or "PROFILE")
