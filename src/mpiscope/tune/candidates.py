"""From a diagnosis to the changes tune tries: one candidate per finding with a mechanical fix.

tune reads a finding's ``rule`` (which problem) and, for the eager limit, the
``VAR=value`` its ``fix`` names; everything else comes from the Profile and the launch
command, so diagnose's costs and wording may change without touching this file.

    unbound-ranks, cpu-overlap   bind each rank to its own core, with the flags of the
                                 launcher in use (Open MPI: --bind-to core, adding
                                 :overload-allowed when a node runs more ranks than CPUs;
                                 hydra: -bind-to core; srun: --cpu-bind=cores)
    openmp-oversubscribed        OMP_NUM_THREADS = the CPUs each rank has
    eager-limit                  the variable and value the finding names
    off-node-placement           the rank order `mpiscope place from-profile` writes
                                 (METIS on the measured traffic), in the format of the
                                 launcher in use, applied as `mpiscope run --order` does;
                                 and, when the program made a Cartesian communicator of
                                 all ranks (MPI_Cart_create, its dims in the communicator's
                                 name), Cray's grid_order for that grid (row-major, as MPI
                                 numbers it) with the cell of ppn ranks that leaves the
                                 fewest measured bytes off-node, when that is fewer than
                                 the run left

A candidate is a dict: kind (the rule), change (one line for people), options (launcher
options put right after the launcher), drop (launcher options it replaces), env
(variables added), order (the order file's text and format, or None) and knobs (what it
sets, to tell independent candidates apart). Other findings have no mechanical fix: they
are listed, not tried.
"""

from __future__ import annotations

import re

import numpy as np

from ..profile import Profile
from ..run.launcher_args import LaunchCommand

BINDING_RULES = ("unbound-ranks", "cpu-overlap")
EAGER_RULE = "eager-limit"
OMP_RULE = "openmp-oversubscribed"
ORDER_RULE = "off-node-placement"
# A wrapper that pins every rank alike: binding by the launcher does not undo it.
PINNING_WRAPPERS = ("taskset", "numactl", "hwloc-bind")

# The kinds of candidate tune makes (--only).
KINDS = ("binding", "omp-threads", "eager-limit", "rank-order", "grid-order")
_ASSIGNMENT = re.compile(r"\b([A-Z][A-Za-z0-9_]*)=(\d+)\b")
# Launcher option names (as mpiscope.run.launcher_args gives them) that bind ranks.
_BIND_OPTIONS = {"openmpi": ("bind-to", "bind-to-core", "bind-to-socket", "cpu-set", "cpu-list"),
                 "hydra": ("bind-to",), "srun": ("cpu-bind",)}


def _candidate(kind: str, change: str, knobs: list[str], options=(), drop=(), env=None,
               order=None) -> dict:
    return {"kind": kind, "change": change, "options": list(options), "drop": list(drop),
            "env": dict(env or {}), "order": order, "knobs": sorted(knobs)}


def _forwarded(cmd: LaunchCommand, env: dict) -> list[str]:
    """Open MPI's mpirun passes a variable to ranks on other hosts only when named with -x."""
    return [w for name in env for w in ("-x", name)] if cmd.kind == "openmpi" else []


def binding(prof: Profile, cmd: LaunchCommand) -> dict | None:
    """Each rank bound to a core of its own, by the launcher in use (None: no launcher
    option can do it here)."""
    if cmd.kind not in _BIND_OPTIONS:
        return None
    if cmd.program and cmd.program[0].rsplit("/", 1)[-1] in PINNING_WRAPPERS:
        return None
    if cmd.kind == "openmpi":
        per_node = np.bincount(prof.ranks["node"].astype(np.int64)).max() if prof.nranks else 0
        cpus = int(prof.env["node_cpus"].min()) if len(prof.env) else 0
        # more ranks than CPUs on a node: Open MPI refuses core binding unless told
        spec = "core:overload-allowed" if cpus and per_node > cpus else "core"
        options = ["--bind-to", spec]
    elif cmd.kind == "hydra":
        options = ["-bind-to", "core"]
    else:
        options = ["--cpu-bind=cores"]
    return _candidate("binding", "bind each rank to a core: " + " ".join(options),
                      ["binding"], options, _BIND_OPTIONS[cmd.kind])


def omp_threads(prof: Profile, cmd: LaunchCommand) -> dict | None:
    """OMP_NUM_THREADS set to the CPUs of the most crowded oversubscribed rank."""
    e = prof.env
    if not len(e):
        return None
    over = (e["threads"] > e["ncpus"]) & (e["ncpus"] > 0)
    if not over.any():
        return None
    env = {"OMP_NUM_THREADS": str(int(e["ncpus"][over].min()))}
    return _candidate("omp-threads", f"OMP_NUM_THREADS={env['OMP_NUM_THREADS']} (the CPUs "
                      f"each rank has)", ["OMP_NUM_THREADS"], _forwarded(cmd, env), (), env)


def eager_limit(finding: dict, cmd: LaunchCommand) -> dict | None:
    """The eager limit the finding's fix names (its first VAR=number)."""
    m = _ASSIGNMENT.search(finding.get("fix") or "")
    if not m:
        return None
    env = {m[1]: m[2]}
    return _candidate("eager-limit", f"raise the eager limit: {m[1]}={m[2]}", [m[1]],
                      _forwarded(cmd, env), (), env)


_ORDER_FORMAT = {"srun": "slurm", "openmpi": "openmpi", "hydra": "hydra"}


def _order_frame(prof: Profile, cmd: LaunchCommand) -> dict | None:
    """What any rank order for this run needs: the launcher's format, the ranks per node
    (None: no order file for this launcher, no traffic, or nodes of uneven size), the
    measured pairs and the run's hosts (node j of an order = the run's node j)."""
    from ..place.orders.partition import traffic_arrays

    if cmd.kind not in _ORDER_FORMAT or prof.is_summary or not len(prof.peers):
        return None
    node = prof.ranks["node"].astype(np.int64)
    per_node = np.bincount(node)
    ppn = int(per_node.max())
    if prof.nranks % ppn or np.any(per_node[per_node > 0] != ppn):
        return None  # uneven nodes: a block order would not fit them
    src, dst, msgs, nbytes = traffic_arrays(prof.peers)
    names = {int(n["node"]): n["hostname"].decode(errors="replace") for n in prof.nodes}
    hosts = [names.get(j, f"+n{j}") for j in sorted(set(node.tolist()))]
    return {"ppn": ppn, "node": node, "src": src, "dst": dst, "msgs": msgs, "nbytes": nbytes,
            "hosts": hosts, "format": _ORDER_FORMAT[cmd.kind]}


def _order_candidate(kind: str, change: str, frame: dict, order: np.ndarray,
                     comment: str) -> dict:
    from ..place.output.writers import render

    text = render(order, frame["ppn"], frame["format"], frame["hosts"], comment)
    return _candidate(kind, change, ["binding", "placement"],
                      order={"format": frame["format"], "text": text, "ppn": frame["ppn"]})


def rank_order(prof: Profile, cmd: LaunchCommand) -> dict | None:
    """The partitioned order of ``mpiscope place from-profile``, for the launcher in use, on
    the hosts the run used."""
    from ..errors import UserError
    from ..place.orders.partition import partition_order

    frame = _order_frame(prof, cmd)
    if frame is None:
        return None
    ppn = frame["ppn"]
    try:
        order = partition_order(prof.nranks, frame["src"], frame["dst"], frame["nbytes"], ppn)
    except UserError:
        return None
    return _order_candidate("rank-order", f"rank order of place from-profile ({ppn} ranks per "
                            "node, METIS on the measured traffic)", frame, order,
                            f"mpiscope tune: place from-profile -n {ppn}")


_CART = re.compile(r"^cart (\d+(?:x\d+)*) of world$")


def cart_dims(prof: Profile) -> tuple[int, ...] | None:
    """The dims of a Cartesian communicator of every rank the program made from
    MPI_COMM_WORLD (the runtime names it "cart 4x4 of world"), else None."""
    for info in (prof.meta.get("communicators") or {}).values():
        m = _CART.match(str(info.get("name") or ""))
        if m:
            dims = tuple(int(d) for d in m[1].split("x"))
            if int(np.prod(dims)) == prof.nranks:
                return dims
    return None


def grid_order(prof: Profile, cmd: LaunchCommand) -> dict | None:
    """Cray's grid_order for the program's own Cartesian grid: of the cells of ppn ranks
    that tile it, the one leaving the fewest measured bytes off-node; None when the program
    has no such grid or the best cell does not move fewer bytes off-node than the run."""
    from ..place.evaluate import node_of_rank, traffic_of_pairs
    from ..place.orders import grid_order as go
    from ..place.orders.search import factorisations

    frame = _order_frame(prof, cmd)
    dims = cart_dims(prof)
    if frame is None or dims is None:
        return None
    ppn, args = frame["ppn"], (frame["src"], frame["dst"], frame["msgs"], frame["nbytes"])
    run_off = traffic_of_pairs(frame["node"], *args).off_bytes
    best = None
    for cell in factorisations(ppn, len(dims)):
        if any(g % c for g, c in zip(dims, cell)):
            continue
        order = go.order(dims, cell, "R")
        off = traffic_of_pairs(node_of_rank(order, ppn), *args).off_bytes
        # fewest bytes off-node; then the squarest cell (smallest largest side)
        if best is None or (off, max(cell)) < (best[0], max(best[1])):
            best = (off, cell, order)
    if best is None or best[0] >= run_off:
        return None
    off, cell, order = best
    g, c = ",".join(map(str, dims)), ",".join(map(str, cell))
    return _order_candidate(
        "grid-order", f"rank order of grid_order -R -g {g} -c {c} (the program's "
        f"MPI_Cart_create grid, {ppn} ranks per node; measured off-node bytes {run_off:,} -> "
        f"{off:,})", frame, order, f"mpiscope tune: place grid -R -g {g} -c {c}")


def candidates(prof: Profile, diag: dict, cmd: LaunchCommand) -> tuple[list[dict], list[dict]]:
    """(candidates to try, findings with no mechanical fix) for a baseline's diagnosis.

    Each candidate carries ``findings``: the rules it answers (and their cost in the
    baseline). One binding candidate answers every binding finding.
    """
    out: dict[str, dict] = {}
    manual = []
    for f in diag["findings"]:
        rule = f["rule"]
        if rule in BINDING_RULES:
            made = [binding(prof, cmd)]
        elif rule == OMP_RULE:
            made = [omp_threads(prof, cmd)]
        elif rule == EAGER_RULE:
            made = [eager_limit(f, cmd)]
        elif rule == ORDER_RULE:
            made = [rank_order(prof, cmd), grid_order(prof, cmd)]
        else:
            made = []
        made = [c for c in made if c is not None]
        if not made:
            manual.append({"rule": rule, "title": f["title"], "fix": f.get("fix")})
        for cand in made:
            entry = out.setdefault(cand["kind"], {**cand, "findings": []})
            entry["findings"].append({"rule": rule, "title": f["title"], "cost_s": f["cost_s"]})
    return list(out.values()), manual


def independent(cands: list[dict]) -> bool:
    """No two candidates set the same knob (their changes can be combined)."""
    seen: set[str] = set()
    for c in cands:
        if seen & set(c["knobs"]):
            return False
        seen |= set(c["knobs"])
    return True


def combine(cands: list[dict]) -> dict:
    """One candidate applying every change of ``cands`` (independent ones)."""
    order = next((c["order"] for c in cands if c["order"]), None)
    return _candidate("combined", " + ".join(c["change"] for c in cands),
                      [k for c in cands for k in c["knobs"]],
                      [o for c in cands for o in c["options"]],
                      [d for c in cands for d in c["drop"]],
                      {k: v for c in cands for k, v in c["env"].items()}, order) | {
        "findings": [f for c in cands for f in c["findings"]],
        "parts": [c["kind"] for c in cands]}
