"""Hatchet export: a JSON file that ``hatchet.GraphFrame.from_json`` loads.

The file is Hatchet's own JSON layout (what ``GraphFrame.to_json`` writes):
a graph of nodes and a dataframe indexed by (node, rank), one row per node
per rank::

    import hatchet as ht
    gf = ht.GraphFrame.from_json(open("app.123.hatchet.json").read())

The tree: the program is the root; MPI_Pcontrol regions nest below it as the
runtime recorded them (a region under the parent of its first record, as
``mpiscope report`` places it); each MPI function is a node under the region
it was called in (outside every region: under the root), and its call sites
(``file:line (function)``, else ``module+offset``) are leaves under it. Call
sites are not split by region: a function called in several regions keeps its
sites in the report and the CSV export, not in this tree.

Metrics per (node, rank):
- ``time (inc)``: root: the rank's wall time; region: its wall time
  (inclusive of nested regions); function: its time.
- ``time``: exclusive: the inclusive time less the children's inclusive time
  (compute time outside nested regions and MPI calls; for a leaf, its time).
- ``calls`` (function calls; region entries), ``bytes_sent``, ``bytes_recv``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..profile import Profile

EXC_METRICS = ["time", "calls", "bytes_sent", "bytes_recv"]
INC_METRICS = ["time (inc)"]


def _pairs(prof: Profile) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Distinct (region id, function id) of the FUNCS records, and each record's index
    into them (region ids are 64-bit hashes: no room to pack both in one integer)."""
    f = prof.funcs
    if len(f) == 0:
        return [], np.zeros(0, np.int64)
    keys, inv = np.unique(np.stack([f["region"], f["func"].astype(np.uint64)]), axis=1,
                          return_inverse=True)
    return [(int(r), int(fn)) for r, fn in keys.T.tolist()], inv.ravel()


def _tree(prof: Profile) -> tuple[list[dict], dict[int, int], dict[tuple[int, int], int]]:
    """Nodes (name, type, parent index), region id -> node, (region id, func) -> leaf node."""
    names = prof.region_names
    program = os.path.basename(str(prof.meta.get("program") or "")) or "program"
    nodes = [{"name": program, "type": "program", "parent": None}]
    region_node = {0: 0}
    regs = prof.regions
    if len(regs):
        ids, first = np.unique(regs["region"], return_index=True)
        parent_of = {int(r): int(regs["parent"][i]) for r, i in zip(ids, first)}
        depth_of = {int(r): int(regs["depth"][regs["region"] == r].min()) for r in ids}
        # Parents before children: by depth, then by name for a stable file.
        for rid in sorted(parent_of, key=lambda r: (depth_of[r], names.get(r, ""))):
            region_node[rid] = len(nodes)
            nodes.append({"name": names.get(rid, f"{rid:016x}"), "type": "region",
                          "parent": None, "region": rid})
        for rid, node in list(region_node.items())[1:]:
            par = parent_of[rid]
            nodes[node]["parent"] = region_node.get(par, 0) if par != rid else 0
    leaf = {}
    for rid, fid in _pairs(prof)[0]:
        if rid not in region_node:  # a function record in a region with no REGIONS record
            region_node[rid] = len(nodes)
            nodes.append({"name": names.get(rid, f"{rid:016x}"), "type": "region", "parent": 0,
                          "region": rid})
        leaf[(rid, fid)] = len(nodes)
        nodes.append({"name": prof.functions[fid] if fid < len(prof.functions) else str(fid),
                      "type": "function", "parent": region_node[rid]})
    return nodes, region_node, leaf


def _site_nodes(prof: Profile, nodes: list[dict], leaf: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """Add each call site as a leaf under its function's node (functions recorded in one
    region only); (site id, function) -> node."""
    from .. import format as fmt
    from .frames import site_names

    cs = prof.callsites[prof.callsites["bucket"] == fmt.SITE_TOTAL]
    if not len(cs):
        return {}
    by_func: dict[int, list[int]] = {}
    for rid, fid in leaf:
        by_func.setdefault(fid, []).append(rid)
    names = site_names(prof)
    out = {}
    named: dict[tuple[int, str], int] = {}   # sites on one line (compiler copies) are one node
    pairs = np.unique(np.stack([cs["site"], cs["func"].astype(np.uint64)], axis=1), axis=0).tolist()

    def order(pair):     # a function's sites by file and line, not by site id (build-dependent)
        info = names.get(int(pair[0]), {})
        return (pair[1], info.get("file") or "", info.get("line") or 0, info.get("location") or "")
    for site, fid in sorted(pairs, key=order):
        regions = by_func.get(int(fid), [])
        if len(regions) != 1:
            continue
        info = names.get(int(site), {"location": f"{int(site):016x}", "parent": None})
        name = info["location"] + (f" ({info['parent']})" if info["parent"] else "")
        parent = leaf[(regions[0], int(fid))]
        if (parent, name) not in named:
            named[(parent, name)] = len(nodes)
            nodes.append({"name": name, "type": "callsite", "parent": parent})
        out[(int(site), int(fid))] = named[(parent, name)]
    return out


def frames(prof: Profile) -> tuple[list[dict], dict[str, np.ndarray]]:
    """The nodes and, per node, per-rank metric arrays (n_nodes x n_ranks each)."""
    if prof.is_summary:
        raise UserError("the hatchet export needs per-rank records, which a summary-mode "
                        "profile does not have")
    nodes, region_node, leaf = _tree(prof)
    site_node = _site_nodes(prof, nodes, leaf)
    n, p = len(nodes), prof.nranks
    inc = np.zeros((n, p))
    calls = np.zeros((n, p), np.int64)
    sent = np.zeros((n, p), np.int64)
    recv = np.zeros((n, p), np.int64)
    f = prof.funcs
    if len(f):
        pairs, inv = _pairs(prof)
        leaf_of_pair = np.array([leaf[k] for k in pairs], dtype=np.int64)
        idx = leaf_of_pair[inv] * p + f["rank"].astype(np.int64)
        inc.flat[:] += np.bincount(idx, weights=f["time"], minlength=n * p)
        calls.flat[:] += np.bincount(idx, weights=f["calls"], minlength=n * p).astype(np.int64)
        sent.flat[:] += np.bincount(idx, weights=f["bytes_sent"],
                                    minlength=n * p).astype(np.int64)
        recv.flat[:] += np.bincount(idx, weights=f["bytes_recv"],
                                    minlength=n * p).astype(np.int64)
    if site_node:
        from .. import format as fmt
        cs = prof.callsites[prof.callsites["bucket"] == fmt.SITE_TOTAL]
        node_of = np.array([site_node.get((int(s), int(f)), -1)
                            for s, f in zip(cs["site"].tolist(), cs["func"].tolist())], np.int64)
        keep = node_of >= 0
        idx = node_of[keep] * p + cs["rank"][keep].astype(np.int64)
        for arr, field in ((inc, "time"), (calls, "calls"), (sent, "bytes_sent"), (recv, "bytes_recv")):
            arr.flat[:] += np.bincount(idx, weights=cs[field][keep].astype(np.float64),
                                       minlength=n * p).astype(arr.dtype)
    regs = prof.regions
    for rid, node in region_node.items():
        if rid == 0:
            inc[0] = prof.ranks["wall"]
            continue
        mine = regs["region"] == rid
        r = regs["rank"][mine].astype(np.int64)
        inc[node] = np.bincount(r, weights=regs["wall"][mine], minlength=p)
        calls[node] = np.bincount(r, weights=regs["entries"][mine], minlength=p).astype(np.int64)
    exc = inc.copy()
    for i, nd in enumerate(nodes):
        if nd["parent"] is not None:
            exc[nd["parent"]] -= inc[i]
    return nodes, {"time": exc, "time (inc)": inc, "calls": calls, "bytes_sent": sent,
                   "bytes_recv": recv}


def write(prof: Profile, path: Path) -> list[Path]:
    """Write the Hatchet JSON file (graph + dataframe) to ``path``."""
    import pandas as pd

    nodes, metrics = frames(prof)
    n, p = len(nodes), prof.nranks
    graph = {str(i): {"data": {"name": nd["name"], "type": nd["type"]},
                      "children": [j for j, c in enumerate(nodes) if c["parent"] == i]}
             for i, nd in enumerate(nodes)}
    df = pd.DataFrame({"node": np.repeat(np.arange(n), p), "rank": np.tile(np.arange(p), n),
                       "name": np.repeat(np.array([nd["name"] for nd in nodes], dtype=object), p),
                       **{k: v.ravel() for k, v in metrics.items()}})
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"graph": [%s], "dataframe_indices": ["node", "rank"], "dataframe": '
                  % json.dumps(graph))
        out.write(df.to_json(orient="records", double_precision=15))
        out.write(', "exclusive_metrics": %s, "inclusive_metrics": %s}\n'
                  % (json.dumps(EXC_METRICS), json.dumps(INC_METRICS)))
    return [path]
