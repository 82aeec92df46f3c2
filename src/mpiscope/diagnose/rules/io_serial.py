"""io-serial: I/O through one rank, and MPI-IO aggregators crowded on few nodes (seed 000, WRF).

Serialised I/O: one rank moves nearly all MPI-IO bytes. Cost = that rank's
I/O time plus the average per-rank time in the functions that bring it the
data (where it receives >= ROOT_SHARE of the bytes): the others wait for it.
Crowded aggregators: from the recorded hints (cb_nodes, cb_config_list) and
the node map, as ``mpiscope place aggregators`` computes. Cost = the average
per-rank collective I/O time times the share of nodes left without an
aggregator.
"""

from __future__ import annotations

import numpy as np

from ...place.aggregators import aggregator_report
from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, ids_of_kind, per_rank, profile_arg, ranks_field, worth
from .root_hotspot import hotspots

RULE = "io-serial"
RULE_AGG = "io-aggregators"
# Share of all MPI-IO bytes one rank must move to call the I/O serialised.
IO_SHARE = 0.9
# MPI-IO bytes below which serialisation cannot cost much.
IO_MIN_BYTES = 1 << 20


def rule(prof: Profile, rep: dict) -> list[dict]:
    if prof.is_summary or prof.nranks < 2:
        return []
    out = []
    io = ids_of_kind(prof, "io")
    if io:
        b = per_rank(prof, "bytes_sent", io) + per_rank(prof, "bytes_recv", io)
        r = int(np.argmax(b))
        if b.sum() >= IO_MIN_BYTES and b[r] >= IO_SHARE * b.sum():
            t_io = float(per_rank(prof, "time", io)[r])
            feeds = {name for name, d, root, _, _ in hotspots(prof) if root == r and d == "received"}
            rows = {x["name"]: x for x in rep["functions"]}
            t_feed = sum(rows[f]["time_per_rank"]["avg"] for f in feeds if f in rows)
            cost = t_io + t_feed
            if worth(cost, rep, MIN_COST_PCT):
                evidence = [ev(f"MPI-IO bytes of rank {r}", int(b[r]), "B"),
                            ev("its share of all MPI-IO bytes", 100.0 * b[r] / b.sum(), "%"),
                            ev(f"MPI-IO time of rank {r}", t_io, "s")]
                if feeds:
                    evidence.append(ev(f"time per rank gathering to rank {r} ("
                                       + ", ".join(sorted(feeds)) + ")", t_feed, "s"))
                out.append(finding(RULE, f"I/O serialised through rank {r}", cost, rep,
                                   ranks_field([r]), evidence,
                                   "Write collectively: every rank writes its own block with "
                                   "MPI_File_set_view + MPI_File_write_all (the stencil's "
                                   "--io mpiio), instead of gathering the field to one rank "
                                   "that writes alone (WRF on Blue Waters).", bound="upper",
                                   method="that rank's MPI-IO time + the time per rank "
                                          "gathering its data (the others wait for it)"))
    out += _aggregators(prof, rep)
    return out


def _aggregators(prof: Profile, rep: dict) -> list[dict]:
    if not prof.meta.get("io_files"):
        return []
    node = prof.node_of_rank(rep["profile"].get("ppn_model"))
    if len(np.unique(node)) < 2:
        return []
    coll = [i for i, n in enumerate(prof.functions) if n.startswith("MPI_File_") and
            (n.endswith("_all") or "_all_" in n or "ordered" in n)]
    t = float(per_rank(prof, "time", coll).mean()) if coll else 0.0
    out = []
    for f in aggregator_report(prof, node):
        if not f["crowded"]:
            continue
        want = min(len(f["aggregators"]), len(np.unique(node)))
        cost = t * (1 - f["distinct_nodes"] / want)
        if not worth(cost, rep, MIN_COST_PCT):
            continue
        evidence = [ev("cb_nodes", f["cb_nodes"], ""), ev("cb_config_list", str(f["cb_config_list"]), ""),
                    ev("nodes holding an aggregator", f["distinct_nodes"], ""),
                    ev("nodes that could", want, ""), ev("collective I/O time per rank (avg)", t, "s")]
        out.append(finding(RULE_AGG, f"MPI-IO aggregators of {f['name']} crowded on "
                           f"{f['distinct_nodes']} node(s)", cost, rep,
                           ranks_field(f["aggregators"]), evidence,
                           "Spread the aggregators over the nodes: set cb_config_list to "
                           "\"*:1\" (one per node) and cb_nodes to the number of nodes, or use "
                           "a rank order that keeps them apart (WRF on Blue Waters).",
                           f"mpiscope place aggregators {profile_arg(prof)}",
                           method="collective MPI-IO time per rank x the share of nodes "
                                  "without an aggregator"))
    return out
