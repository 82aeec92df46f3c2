"""Small profiles with exactly known numbers for the cost models of mpiscope diagnose
(tests/explain/test_diagnose_costs.py, test_next_commands.py): every rank's wall and MPI time,
its environment record (CPU time, run-queue wait, node's idle time, mask, threads), functions
with their per-call minimum, the size histogram, and the launch mpiscope run recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mpiscope import format as fmt
from mpiscope import read, testing

OPEN_MPI = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
MPICH = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu May  5 15:04:28 CDT 2022\nMPICH ABI:\t14:2:2\nMPICH Device:\tch4:ucx"

# function name -> kind, for the profiles' function tables
KINDS = {"MPI_Send": "p2p", "MPI_Recv": "wait", "MPI_Isend": "p2p", "MPI_Irecv": "p2p",
         "MPI_Waitall": "wait", "MPI_Sendrecv": "wait", "MPI_Allreduce": "coll",
         "MPI_Allreduce:sync": "sync", "MPI_Barrier": "coll"}


def make(tmp_path: Path, *, n: int = 2, wall=10.0, mpi=1.0, library: str = OPEN_MPI,
         launch: str | None = "mpirun.openmpi -n 2 /bin/app", argv=("/bin/app",),
         funcs=(), hist=(), node=None, cpus=None, env: dict | None = None,
         variables: dict | None = None, flags: int = 0, name: str = "p") -> object:
    """A full-mode profile file (and its Profile).

    Arguments:
        wall, mpi: per rank (scalar or list).
        funcs: (rank, name, calls, time, time_min) rows.
        hist: (rank, name, bucket, count, time) rows.
        node: node id per rank (default all 0); cpus: CPU list text per rank (default "0-1").
        env: ENV fields per rank (scalar or list): cpu_time, run_delay, node_idle, node_cpus,
            threads, ncpus, load, overlap, flags (bit 0 unbound)...
    """
    names = sorted({f[1] for f in funcs} | {h[1] for h in hist} | {"MPI_Barrier"})
    ranks = np.zeros(n, fmt.RANK)
    ranks["rank"] = np.arange(n)
    ranks["node"] = np.zeros(n) if node is None else node
    ranks["wall"], ranks["mpi"], ranks["threads"] = wall, mpi, 1
    f = testing.records(fmt.FUNC, [{"rank": r, "func": names.index(nm), "calls": c, "time": t,
                                    "time_min": tm, "time_max": t}
                                   for r, nm, c, t, tm in funcs])
    h = testing.records(fmt.HIST, [{"rank": r, "func": names.index(nm), "bucket": b, "count": c,
                                    "time": t} for r, nm, b, c, t in hist])
    lists = list(cpus or ["0-1"] * n)
    ids = {c: fmt.fnv1a64(c) for c in set(lists)}
    vtext = "".join(f"{k}={v}\n" for k, v in sorted((variables or {}).items()))
    e = np.zeros(n, fmt.ENV)
    e["rank"] = np.arange(n)
    e["cpus"] = [ids[c] for c in lists]
    e["vars"] = fmt.fnv1a64(vtext)
    e["ncpus"] = [len(_cpu_list(c)) for c in lists]
    e["threads"], e["load"], e["node_cpus"] = 1, 1.0, 2
    e["overlap_rank"] = fmt.ENV_NO_RANK
    e["cpu_time"] = wall
    for k, v in (env or {}).items():
        e[k] = v
    meta = testing.default_meta(names, [KINDS.get(x, "other") for x in names],
                                program=argv[0], argv=list(argv), mpi_library=library,
                                settings={"MPISCOPE_MODE": "full",
                                          **({"MPISCOPE_LAUNCH": launch} if launch else {})},
                                environment={"cpus": {f"{i:016x}": c for c, i in ids.items()},
                                             "variables": {f"{fmt.fnv1a64(vtext):016x}":
                                                           variables or {}}})
    nodes = np.zeros(0, fmt.NODE)
    path = testing.write_profile(tmp_path / f"{name}.mpiscope", nranks=n, meta=meta, ranks=ranks,
                                 funcs=f, hist=h, nodes=nodes, env=e, flags=flags)
    return read(str(path))


def _cpu_list(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def dump(obj) -> str:
    return json.dumps(obj, indent=1)
