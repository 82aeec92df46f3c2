"""How much traffic an order keeps on-node: messages and bytes, total and per node.

An order lists ranks; positions are packed onto nodes ``ppn`` at a time, as
MPICH_RANK_ORDER is applied (position p goes to node p // ppn). Traffic is
either a stencil pattern or a measured point-to-point matrix (src, dst, msgs,
bytes arrays, e.g. a profile's PEERS section).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import UserError
from .patterns import Stencil, neighbour_pairs


@dataclass(frozen=True)
class Traffic:
    """On-node / off-node split of one step's (or one run's) point-to-point traffic."""

    on_msgs: int
    on_bytes: int
    off_msgs: int
    off_bytes: int
    max_node_off_msgs: int
    max_node_off_bytes: int
    nnodes: int

    def as_dict(self) -> dict:
        return asdict(self)


def check_order(order: np.ndarray, nranks: int) -> np.ndarray:
    """order as int64, or UserError unless it is a permutation of 0..nranks-1."""
    order = np.asarray(order, np.int64)
    if len(order) != nranks:
        raise UserError(f"the order lists {len(order)} ranks but the pattern has {nranks}")
    seen = np.zeros(nranks, bool)
    if len(order) and (order.min() < 0 or order.max() >= nranks):
        raise UserError(f"the order holds rank numbers outside 0..{nranks - 1}")
    seen[order] = True
    if not seen.all():
        missing = int(np.flatnonzero(~seen)[0])
        raise UserError(f"the order lists some rank twice and misses rank {missing}")
    return order


def node_of_rank(order: np.ndarray, ppn: int) -> np.ndarray:
    """node[r] = node rank r lands on when the order's positions fill nodes of ppn."""
    if ppn < 1:
        raise UserError("ranks per node must be >= 1")
    node = np.empty(len(order), np.int64)
    node[order] = np.arange(len(order), dtype=np.int64) // ppn
    return node


def traffic_of_pairs(node: np.ndarray, src: np.ndarray, dst: np.ndarray,
                     msgs: np.ndarray, nbytes: np.ndarray) -> Traffic:
    """Split measured traffic (one row per src->dst pair) by node."""
    if len(src) and (src.max() >= len(node) or dst.max() >= len(node)):
        raise UserError("the traffic names ranks beyond the order's ranks")
    off = node[src] != node[dst]
    nnodes = int(node.max()) + 1 if len(node) else 0
    per_node_msgs = np.bincount(node[src[off]], weights=msgs[off], minlength=nnodes)
    per_node_bytes = np.bincount(node[src[off]], weights=nbytes[off], minlength=nnodes)
    return Traffic(
        on_msgs=int(msgs[~off].sum()), on_bytes=int(nbytes[~off].sum()),
        off_msgs=int(msgs[off].sum()), off_bytes=int(nbytes[off].sum()),
        max_node_off_msgs=int(per_node_msgs.max()) if nnodes else 0,
        max_node_off_bytes=int(per_node_bytes.max()) if nnodes else 0,
        nnodes=nnodes)


def traffic_of_stencil(node: np.ndarray, stencil: Stencil) -> Traffic:
    """Split one step of a stencil by node, one offset at a time (no edge list)."""
    if len(node) != stencil.nranks:
        raise UserError(f"the order has {len(node)} ranks but the grid has {stencil.nranks}")
    nnodes = int(node.max()) + 1 if len(node) else 0
    on = off = 0
    per_node = np.zeros(nnodes, np.int64)
    for src, dst in neighbour_pairs(stencil):
        real = src != dst
        ns, nd = node[src[real]], node[dst[real]]
        cut = ns != nd
        n_off = int(np.count_nonzero(cut))
        off += n_off
        on += len(ns) - n_off
        per_node += np.bincount(ns[cut], minlength=nnodes)
    b = stencil.msg_bytes
    worst = int(per_node.max()) if nnodes else 0
    return Traffic(on, on * b, off, off * b, worst, worst * b, nnodes)


def traffic_of_order(order: np.ndarray, ppn: int, stencil: Stencil) -> Traffic:
    """Traffic of a stencil under an order packed ppn ranks per node."""
    order = check_order(order, stencil.nranks)
    return traffic_of_stencil(node_of_rank(order, ppn), stencil)
