"""MPICH_RANK_REORDER_METHOD 0-3 as rank orders (Cray MPI, seed 001).

* 0 round-robin: rank r goes to node r mod N.
* 1 SMP-style: ranks fill each node before the next (the identity order).
* 2 folded: like round-robin, but every other pass over the nodes runs backwards.
* 3 custom: the order is read from a file (MPICH_RANK_ORDER).

An order lists ranks by position; position p is on node p // ppn.
"""

from __future__ import annotations

import numpy as np

from ...errors import UserError

NAMES = {0: "round-robin", 1: "SMP", 2: "folded", 3: "custom"}


def node_of_rank_by_method(method: int, nranks: int, ppn: int) -> np.ndarray:
    """Node of every rank under methods 0-2 with nranks / ppn nodes."""
    if ppn < 1 or nranks % ppn:
        raise UserError(f"ranks per node {ppn} does not divide {nranks} ranks")
    nnodes = nranks // ppn
    rank = np.arange(nranks, dtype=np.int64)
    if method == 1:
        return rank // ppn
    if method == 0:
        return rank % nnodes
    if method == 2:
        sweep, step = rank // nnodes, rank % nnodes
        return np.where(sweep % 2 == 0, step, nnodes - 1 - step)
    raise UserError(f"placement method {method} has no formula (0, 1, 2; 3 reads a file)")


def method_order(method: int, nranks: int, ppn: int) -> np.ndarray:
    """The rank order (by position) that places ranks as method 0, 1 or 2 does."""
    node = node_of_rank_by_method(method, nranks, ppn)
    return np.argsort(node, kind="stable")
