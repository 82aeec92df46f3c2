"""off-node-placement: point-to-point traffic mostly off-node where a better order exists (seed 000, WRF).

Runs the placement evaluator on the measured pairs (PEERS) with the run's real
node map (or the --ppn model) and METIS's partitioned order, as
``mpiscope place from-profile`` does. Cost = the average per-rank
point-to-point time (p2p + wait kinds) times the share of bytes that would
move on-node: an upper bound, as if off-node bytes cost all of that time and
on-node bytes none.
"""

from __future__ import annotations

import numpy as np

from ...place.evaluate import node_of_rank, traffic_of_pairs
from ...place.orders.partition import partition_order, traffic_arrays
from ...profile import Profile
from .. import rerun
from ..common import MIN_COST_PCT, ev, finding, ids_of_kind, per_rank, profile_arg, worth

RULE = "off-node-placement"
# Off-node share of point-to-point bytes below which placement cannot matter much.
MIN_OFF_SHARE = 0.2
# Relative reduction of off-node bytes the partitioned order must achieve.
MIN_REDUCTION = 0.2
# Ranks beyond which METIS takes longer than a diagnosis should (place from-profile still works).
MAX_RANKS = 1 << 17


def rule(prof: Profile, rep: dict) -> list[dict]:
    if prof.is_summary or len(prof.peers) == 0 or prof.nranks > MAX_RANKS:
        return []
    ppn_model = rep["profile"].get("ppn_model")
    node = prof.node_of_rank(ppn_model)
    nnodes = len(np.unique(node))
    if nnodes < 2:
        return []
    ppn = int(np.bincount(node).max())
    if prof.nranks % ppn:
        return []  # a partial last node: no balanced order to compare with (the limits say so)
    src, dst, msgs, nbytes = traffic_arrays(prof.peers)
    now = traffic_of_pairs(node, src, dst, msgs, nbytes)
    total = now.on_bytes + now.off_bytes
    if total == 0 or now.off_bytes < MIN_OFF_SHARE * total:
        return []
    order = partition_order(prof.nranks, src, dst, nbytes, ppn)
    new = traffic_of_pairs(node_of_rank(order, ppn), src, dst, msgs, nbytes)
    if new.off_bytes > (1 - MIN_REDUCTION) * now.off_bytes:
        return []
    p2p = per_rank(prof, "time", ids_of_kind(prof, "p2p", "wait")).mean()
    cost = float(p2p) * (now.off_bytes - new.off_bytes) / total
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    red = 100.0 * (now.off_bytes - new.off_bytes) / now.off_bytes
    how = f" (modelled as {ppn_model} ranks per node)" if ppn_model else ""
    evidence = [ev(f"off-node bytes as run{how}", now.off_bytes, "B"),
                ev("off-node share as run", 100.0 * now.off_bytes / total, "%"),
                ev("off-node bytes with the partitioned order", new.off_bytes, "B"),
                ev("predicted off-node reduction", red, "%"),
                ev("off-node messages as run / partitioned", f"{now.off_msgs} / {new.off_msgs}", ""),
                ev("point-to-point time per rank (avg)", float(p2p), "s")]
    ch = rerun.change("order", run_options=["--order", "order.txt"])
    cmd = (f"mpiscope place from-profile {profile_arg(prof)} -n {ppn} -o order.txt && "
           + rerun.command(prof, rep, ch))
    return [finding(RULE, f"Neighbours on different nodes: {100 * now.off_bytes / total:.0f}% "
                    f"of point-to-point bytes off-node, a rank order cuts that by {red:.0f}%",
                    cost, rep, {"count": prof.nranks, "min_pe": 0, "max_pe": prof.nranks - 1,
                                "list": None}, evidence,
                    "Reorder the ranks so that partners share a node (grid_order in WRF on "
                    "Blue Waters): write the partitioned order and launch with it.", cmd,
                    bound="upper", change=ch,
                    method="point-to-point time per rank x the share of bytes the order moves "
                           "on-node (as if off-node bytes cost all of it)")]
