"""Where the MPI-IO aggregators of collectively written files land (seed 000).

The PMPI layer sees each rank's own collective read/write calls, not the
two-phase I/O inside the MPI library, so the aggregators are derived from the
hints the runtime read with MPI_File_get_info (``cb_nodes``,
``cb_config_list``, in ``meta['io_files']``) and the selection rule:

* ``romio`` (MPICH's ROMIO, and Cray MPICH since 5.5.5): ``cb_config_list``
  ``*:N`` takes the first N ranks of each node, nodes in order of their
  lowest rank, until ``cb_nodes`` aggregators are chosen;
* ``stride`` (Cray MPICH before 5.5.5, the WRF case): ranks
  i * nranks / cb_nodes, whatever node they are on - after a rank reorder
  several can share a node.

Aggregators crowd when they sit on fewer nodes than min(cb_nodes, nodes).
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import UserError

RULES = ("romio", "stride")


def collective_io_bytes(profile) -> np.ndarray:
    """Bytes each rank moved through collective MPI-IO calls (read + write)."""
    names = profile.functions
    ids = [i for i, n in enumerate(names)
           if n.startswith("MPI_File_") and (n.endswith("_all") or "_all_" in n
                                             or "ordered" in n)]
    out = np.zeros(profile.nranks, np.int64)
    if len(profile.funcs) and ids:
        f = profile.funcs[np.isin(profile.funcs["func"], ids)]
        np.add.at(out, f["rank"].astype(np.int64),
                  (f["bytes_sent"] + f["bytes_recv"]).astype(np.int64))
    return out


def _per_node(cb_config_list: str | None) -> int:
    m = re.fullmatch(r"\*:(\d+|\*)", (cb_config_list or "*:1").strip())
    if not m:
        return 1
    return 1 << 30 if m.group(1) == "*" else int(m.group(1))


def _count_or_stride(cb_nodes: int, nranks: int, rule: str) -> tuple[int, np.ndarray | None]:
    """cb_nodes clamped to 1..nranks, and the ``stride`` rule's aggregators (which need no
    node map), or None for ``romio``; an unknown rule is a usage error."""
    if rule not in RULES:
        raise UserError(f"unknown aggregator rule {rule!r}: use {' or '.join(RULES)}")
    cb_nodes = max(1, min(int(cb_nodes), nranks))
    if rule == "stride":
        return cb_nodes, (np.arange(cb_nodes, dtype=np.int64) * nranks) // cb_nodes
    return cb_nodes, None


def aggregator_ranks(node: np.ndarray, cb_nodes: int, cb_config_list: str | None,
                     rule: str) -> np.ndarray:
    """Ranks that act as aggregators under a selection rule (see module doc)."""
    nranks = len(node)
    cb_nodes, stride = _count_or_stride(cb_nodes, nranks, rule)
    if stride is not None:
        return stride
    per_node = _per_node(cb_config_list)
    chosen, taken = [], {}
    for r in range(nranks):
        n = int(node[r])
        if taken.get(n, 0) < per_node:
            taken[n] = taken.get(n, 0) + 1
            chosen.append(r)
    first_seen: dict[int, int] = {}
    for r in chosen:
        first_seen.setdefault(int(node[r]), r)
    by_node = sorted(chosen, key=lambda r: (first_seen[int(node[r])], r))
    return np.array(by_node[:cb_nodes], np.int64)


def aggregators_in_blocks(nranks: int, ppn: int, cb_nodes: int, cb_config_list: str | None,
                          rule: str) -> np.ndarray:
    """aggregator_ranks when consecutive ranks fill nodes of ``ppn`` (a summary-mode profile
    modelled with --ppn): the same ranks, in O(cb_nodes) time and memory instead of a
    per-rank node array, since a summary profile's rank count is not bounded by its size."""
    cb_nodes, stride = _count_or_stride(cb_nodes, nranks, rule)
    if stride is not None:
        return stride
    per_node = min(_per_node(cb_config_list), ppn)
    k = np.arange(cb_nodes, dtype=np.int64)  # the k-th chosen: rank k % per_node of node k // per_node
    ranks = (k // per_node) * ppn + k % per_node
    return ranks[ranks < nranks]  # a partial last node has fewer ranks


def _hint_int(value) -> int | None:
    """An integer MPI-IO hint, or None when absent or not a number: the hints come from
    the profile, which is input (a malformed one must not crash a report)."""
    try:
        return None if value is None else int(str(value).strip())
    except ValueError:
        return None


def aggregator_report(profile, node: np.ndarray | None, rule: str = "romio",
                      ppn: int | None = None) -> list[dict]:
    """Per collectively opened file: its hints, aggregators, their nodes and the
    bytes they passed to collective MPI-IO calls (all files together: the
    profile keeps bytes per function, not per file), a warning if crowded.

    ``node``: node of every rank; None for consecutive ranks on nodes of ``ppn``
    (summary mode: no per-rank bytes either, so those fields are None)."""
    files = profile.meta.get("io_files") or []
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        raise UserError("corrupt mpiscope profile: META io_files is not a list of files")
    if not files:
        raise UserError("the profile records no collectively opened MPI-IO file")
    if node is None:
        if not ppn or ppn < 1:
            raise UserError("ranks per node must be >= 1")
        nnodes = -(-profile.nranks // ppn)
        io_bytes = None
    else:
        nnodes = int(node.max()) + 1 if len(node) else 0
        io_bytes = collective_io_bytes(profile)
    out = []
    for f in files:
        cb_nodes = _hint_int(f.get("cb_nodes")) or nnodes or 1
        if node is None:
            ranks = aggregators_in_blocks(profile.nranks, ppn, cb_nodes, f.get("cb_config_list"),
                                          rule)
            nodes = (ranks // ppn).tolist()
        else:
            ranks = aggregator_ranks(node, cb_nodes, f.get("cb_config_list"), rule)
            nodes = [int(node[r]) for r in ranks]
        used = sorted(set(nodes))
        want = min(len(ranks), nnodes)
        entry = {"name": f.get("name", "?"), "cb_nodes": cb_nodes,
                 "cb_nodes_hint": f.get("cb_nodes"),
                 "cb_config_list": f.get("cb_config_list"), "rule": rule,
                 "aggregators": ranks.tolist(), "nodes": nodes,
                 "aggregator_io_bytes": None if io_bytes is None else
                 [int(io_bytes[r]) for r in ranks],
                 "ranks_with_collective_io": None if io_bytes is None else
                 int(np.count_nonzero(io_bytes)),
                 "collective_io_bytes": None if io_bytes is None else int(io_bytes.sum()),
                 "distinct_nodes": len(used), "crowded": len(used) < want}
        if entry["crowded"]:
            entry["warning"] = (f"{len(ranks)} aggregators of {entry['name']} sit on "
                                f"{len(used)} of {nnodes} nodes; spread them "
                                f"(cb_config_list, or a rank order that keeps them apart)")
        out.append(entry)
    return out
