"""The communication matrix, aggregated into blocks of ranks when P is large.

P x P cells cannot be drawn at 10^6 ranks (10^12 cells): ranks are grouped
into blocks of ``b`` consecutive ranks so that the matrix has at most
``max_blocks`` rows, and each cell sums the bytes (and messages) sent from one
block to another (one ``np.bincount`` over the PEERS records). On-node
outlines are the runs of consecutive ranks that share a node, drawn when a
run covers at least one block (otherwise a block mixes nodes, and the page
says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Rows (and columns) of the drawn matrix at most: 256^2 cells stay a small JSON.
MAX_BLOCKS = 256
# More node outlines than this clutter the view and bloat the page: drop them.
MAX_OUTLINES = 512


@dataclass
class BlockMatrix:
    """Attributes:
        block: ranks per block (1: the exact matrix).
        nblocks: rows = columns.
        nbytes, msgs: nblocks x nblocks sums, [sender block, receiver block].
        outlines: (first, last) block coordinates (fractional when a node run
            does not start on a block edge) of each on-node run; empty when
            runs are smaller than a block or too many to draw.
        outline_why: why there are no outlines ("" when there are).
    """
    block: int
    nblocks: int
    nbytes: np.ndarray
    msgs: np.ndarray
    outlines: list[tuple[float, float]]
    outline_why: str


def block_matrix(peers: np.ndarray, nranks: int, node_of_rank: np.ndarray | None,
                 max_blocks: int = MAX_BLOCKS) -> BlockMatrix:
    """Bytes and messages from block to block.

    Arguments:
        peers: fmt.PEER records (rank sends msgs/bytes to peer).
        nranks: ranks in the job.
        node_of_rank: node id of every rank (None: no outlines).
        max_blocks: the matrix has at most this many rows.
    """
    block = max(1, -(-nranks // max_blocks))
    nb = max(1, -(-nranks // block))
    src = peers["rank"].astype(np.int64) // block
    dst = peers["peer"].astype(np.int64) // block
    ok = (src < nb) & (dst < nb)  # a corrupt peer id must not index out of the matrix
    key = src[ok] * nb + dst[ok]
    nbytes = np.bincount(key, weights=peers["bytes"][ok].astype(np.float64),
                         minlength=nb * nb).reshape(nb, nb)
    msgs = np.bincount(key, weights=peers["msgs"][ok].astype(np.float64),
                       minlength=nb * nb).reshape(nb, nb)
    outlines, why = _node_outlines(node_of_rank, block)
    return BlockMatrix(block, nb, nbytes, msgs, outlines, why)


def node_runs(node_of_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last rank of each run of consecutive ranks on one node."""
    n = len(node_of_rank)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cut = np.flatnonzero(np.diff(node_of_rank) != 0) + 1
    first = np.concatenate(([0], cut))
    last = np.concatenate((cut - 1, [n - 1]))
    return first, last


def _node_outlines(node_of_rank, block: int) -> tuple[list[tuple[float, float]], str]:
    if node_of_rank is None:
        return [], "no node information"
    first, last = node_runs(np.asarray(node_of_rank))
    if len(first) <= 1:
        return [], "all ranks on one node"
    if len(first) > MAX_OUTLINES:
        return [], f"{len(first):,} runs of ranks on one node are too many to outline"
    if np.min(last - first + 1) < block:
        return [], (f"a block of {block:,} ranks spans several nodes, so nodes "
                    "cannot be outlined at this size")
    return [(f / block, (l + 1) / block) for f, l in zip(first.tolist(), last.tolist())], ""
