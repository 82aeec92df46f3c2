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


P2P_KINDS = ("p2p", "wait")  # sends and receives: MPI_Recv and MPI_Sendrecv are "wait" kind


def p2p_by_bucket(rep: dict) -> list[tuple[dict, int]]:
    """(histogram row, point-to-point calls in it) per size bucket: sends and receives,
    blocking or not (a completion call, MPI_Wait*, has no size and is in no bucket); bucket 0
    is left out: 0-byte calls (MPI_PROC_NULL at a domain's edge, empty messages) carry
    nothing."""
    kinds = {r["name"]: r["kind"] for r in rep["functions"]}
    return [(h, sum(c for f, c in h["by_function"].items() if kinds.get(f) in P2P_KINDS))
            for h in rep["histogram"] if h["bucket"] != 0]


def hist_cells(prof: Profile) -> dict[tuple[str, int], tuple[float, float]]:
    """(calls, seconds) summed over ranks and regions per (function name, size bucket), from
    the HIST section (per rank in full mode, summed by the runtime in summary mode)."""
    h = prof.hist
    if not len(h):
        return {}
    key = h["func"].astype(np.int64) * 256 + h["bucket"].astype(np.int64)
    keys, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    calls = np.bincount(inv, weights=h["count"].astype(np.float64))
    time = np.bincount(inv, weights=h["time"])
    names = prof.functions
    return {(names[int(k) // 256] if int(k) // 256 < len(names) else "?", int(k) % 256):
            (float(c), float(t)) for k, c, t in zip(keys.tolist(), calls, time)}



def p2p_calls_cost(prof: Profile, rep: dict, buckets: set[int],
                   posts_at_average: bool) -> tuple[float, float]:
    """(the point-to-point calls of these size buckets at their own cost, their time), per
    rank. A call's own cost is its function's fastest call anywhere in the run (what it costs
    when nothing makes it wait), never more than the average call of its size; with
    ``posts_at_average`` a call that never waits for its partner (kind p2p: MPI_Isend,
    MPI_Irecv, an eager MPI_Send) counts at that average."""
    kinds = {r["name"]: r["kind"] for r in rep["functions"]}
    n = max(prof.nranks, 1)
    cost = spent = 0.0
    for (name, bucket), (calls, time) in hist_cells(prof).items():
        if bucket not in buckets or kinds.get(name) not in P2P_KINDS or calls <= 0:
            continue
        avg, floor = time / calls, call_floor(rep, name)
        per_call = avg if floor is None or (posts_at_average and kinds[name] == "p2p") \
            else min(floor, avg)
        cost += calls * per_call / n
        spent += time / n
    return cost, spent

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
            evidence: list[dict], fix: str, command: str | None = None, *,
            bound: str | None = None, cost_max_s: float | None = None,
            settle: str | None = None, method: str | None = None,
            change: dict | None = None) -> dict:
    """The finding dict (docs/diagnose.md "JSON").

    Arguments:
        cost_s: what the fix gains, estimated from the profile (seconds per rank).
        bound: "upper" when cost_s is what the fix gains at most ("up to"), "lower" when at
            least; None for an estimate.
        cost_max_s: an upper bound above the estimate, when the evidence cannot tell how much
            of a time the fix removes (waiting vs latency); ``settle`` says what would tell.
        settle: the measurement that settles an ambiguous case (--sync, a bound run).
        method: how the cost was computed, in one sentence.
        change: the fix in machine-readable form (``rerun.change``), when it is a rerun.
    """
    out = {"rule": rule, "title": title, "cost_s": float(max(cost_s, 0.0)),
           "cost_pct": float(max(pct(cost_s, rep), 0.0)), "pct_of": "run", "ranks": ranks,
           "evidence": evidence, "fix": fix, "command": command, "bound": bound,
           "cost_max_s": None, "cost_max_pct": None, "settle": settle, "method": method,
           "change": change}
    if cost_max_s is not None:
        out["cost_max_s"] = float(max(cost_max_s, cost_s, 0.0))
        out["cost_max_pct"] = float(max(pct(out["cost_max_s"], rep), 0.0))
    return out


def of_job(f: dict, rep: dict) -> dict:
    """The finding with cost_pct as a share of the job (job_time), for costs outside the run
    (MPI_Init, the wait in MPI_Finalize)."""
    job = job_time(rep)
    f["cost_pct"] = 100.0 * f["cost_s"] / job if job > 0 else 0.0
    if f.get("cost_max_s") is not None:
        f["cost_max_pct"] = 100.0 * f["cost_max_s"] / job if job > 0 else 0.0
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


def program_command(prof: Profile, prefix: str = "mpiscope run", launcher_opts: str = "",
                    rep: dict | None = None) -> str:
    """The rerun of the profile's own launch (``rerun.command``), with ``launcher_opts`` added
    and ``prefix``'s mpiscope run options (e.g. "mpiscope run --sync") and leading
    ``VAR=value`` words kept."""
    from . import rerun

    words = shlex.split(prefix)
    env = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    opts = [w for w in words[2:]] if words[:2] == ["mpiscope", "run"] else []
    ch = rerun.change("launch", env=env, launcher_add=shlex.split(launcher_opts),
                      run_options=opts)
    return rerun.command(prof, rep or {}, ch)


def mpi_family(prof: Profile) -> str:
    """"openmpi", "mpich", "intel" or "other", from META mpi_library (MPI_Get_library_version)."""
    from .rerun import mpi_family as family
    return family(prof)


def env_of(rep: dict) -> dict | None:
    """The report's environment section when the profile has one (docs/report.md)."""
    env = rep.get("environment")
    return env if env and env.get("available") else None


# How each launcher binds each rank to its own cores (threads: cores per rank), as
# (options the change replaces, words for one core per rank, words for T cores per rank).
BIND = {"openmpi": (("--bind-to", "core", "--map-by", "core"),
                    ("--map-by", "slot:PE={t}", "--bind-to", "core")),
        "hydra": (("-bind-to", "core"), ("-bind-to", "core:{t}")),
        "srun": (("--cpu-bind=cores",), ("--cpus-per-task={t}", "--cpu-bind=cores"))}
BIND_ANYWHERE = ("Slurm: srun --cpu-bind=cores (with --cpus-per-task=T for T threads); "
                 "Open MPI: mpirun --bind-to core (--map-by slot:PE=T); MPICH: mpiexec "
                 "-bind-to core (-bind-to core:T); Cray: aprun -d T, as the Cray MPI tips show")


def bind_change(prof: Profile, rep: dict, threads: int = 1, env: dict | None = None) -> dict | None:
    """The change that binds every rank to its own cores (``threads`` per rank) with the
    launcher of the profile's launch, dropping any binding the launch had and a pinning wrapper
    (taskset, numactl); None where the launcher has no binding options (Intel MPI: pinning
    variables)."""
    from . import rerun

    words, _ = rerun.user_launch(prof, rep)
    kind = rerun.parse(words, rerun.IMPL.get(mpi_family(prof))).kind
    flags = BIND.get(kind)
    if flags is None:
        if mpi_family(prof) != "intel":
            return None
        env = {**(env or {}), "I_MPI_PIN": "1"} | ({"I_MPI_PIN_DOMAIN": str(threads)}
                                                    if threads > 1 else {})
        return rerun.change("launch", env=env, threads=threads, unwrap=True)
    add = [w.format(t=threads) for w in flags[0 if threads <= 1 else 1]]
    return rerun.change("launch", env=env, launcher_add=add,
                        launcher_remove=rerun.BINDING[kind], unwrap=True,
                        threads=threads if threads > 1 else None)


def bind_command(prof: Profile, threads: int = 1, rep: dict | None = None) -> str | None:
    """The rerun with every rank bound to its own cores (``threads`` per rank), for this MPI."""
    from . import rerun

    ch = bind_change(prof, rep or {}, threads)
    return None if ch is None else rerun.command(prof, rep or {}, ch)


def call_floor(rep: dict, name: str) -> float | None:
    """The fastest call of a function anywhere in the run (the report's call_time_min): what
    a call costs when nothing makes it wait."""
    row = next((r for r in rep["functions"] if r["name"] == name), None)
    v = None if row is None else row.get("call_time_min")
    return None if v is None else float(v)


def profile_arg(prof: Profile) -> str:
    return shlex.quote(prof.path or "PROFILE")


def cost_text(f: dict, fmt_time) -> str:
    """A finding's cost in words, for every view: "~2.1 s (12.0% of the run)", "up to ...",
    "at least ...", or the estimate with its upper bound when the evidence is ambiguous."""
    of = f.get("pct_of", "run")
    lead = {"upper": "up to ~", "lower": "at least ~"}.get(f.get("bound") or "", "~")
    text = f"{lead}{fmt_time(f['cost_s'])} s ({f['cost_pct']:.1f}% of the {of})"
    if f.get("cost_max_s") is not None and f["cost_max_s"] > f["cost_s"]:
        text += (f", up to {fmt_time(f['cost_max_s'])} s ({f['cost_max_pct']:.1f}%) if all "
                 "of the time it names is the problem's")
    return text

