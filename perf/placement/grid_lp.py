#!/usr/bin/env python3
"""The set-partitioning LP of a small stencil grid: the most any price-based bound can prove.

Every lower bound of docs/placement.md that charges the border is, or is
weaker than, a Lagrangian one (a price on each point), and the best of those
equals the LP relaxation of "partition the grid into nodes of ppn ranks,
maximising the stencil edges inside nodes", where a rank may be shared by
several candidate nodes whose weights add up to one. Any fractional
partition x gives

    sum_S x_S e(S) = sum_S x_S [e(S) - y(S)] + sum_v y_v <= nodes * max_S [e(S) - y(S)] + sum_v y_v

for every price y, so its value caps every such bound: off-node messages
>= T - 2 * (bound on the edges inside nodes) can prove at most
T - 2 * LP. This script builds fractional partitions by column generation
(restricted master LP with scipy's HiGHS; new nodes from a greedy pricing
heuristic, or, when it finds none, from an exact integer programme), adding
each node with its mirror images. The restricted master's value only grows
and is always a true fractional partition, so ``--stop-above E`` ends the
run as soon as it proves that no price-based bound reaches T - 2E.

    python3 perf/placement/grid_lp.py --grid 16,16 --stencil 9 -n 32 --stop-above 767

(58 minutes here, 341 rounds: the LP passes 767 edges, so no such bound proves more
than 326 off-node messages, and 328 would be needed for auto's 344 to be
within 5 %; docs/performance.md.)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from mpiscope.place.bounds import corner_bound  # noqa: E402
from mpiscope.place.evaluate import node_of_rank  # noqa: E402
from mpiscope.place.patterns import coords_of_ranks, edge_list, make_stencil, ranks_of_coords  # noqa: E402
from mpiscope.place.orders.search import search  # noqa: E402


def symmetries(grid: tuple[int, int], major: str) -> list[np.ndarray]:
    """Rank permutations of the grid's mirror symmetries (and transposes if square)."""
    coords = coords_of_ranks(grid, major)
    out = []
    for flip0, flip1, swap in np.ndindex(2, 2, 2):
        if swap and grid[0] != grid[1]:
            continue
        c = coords.copy()
        if flip0:
            c[:, 0] = grid[0] - 1 - c[:, 0]
        if flip1:
            c[:, 1] = grid[1] - 1 - c[:, 1]
        if swap:
            c = c[:, ::-1]
        out.append(ranks_of_coords(np.ascontiguousarray(c), grid, major))
    return out


class Master:
    """Candidate nodes (columns) and the restricted master LP over them."""

    def __init__(self, adj: np.ndarray, maps: list[np.ndarray]):
        self.adj, self.maps, self.cols = adj, maps, {}

    def edges(self, nodes) -> int:
        idx = np.fromiter(nodes, np.int64)
        return int(self.adj[np.ix_(idx, idx)].sum()) // 2

    def add(self, ranks) -> int:
        added = 0
        for perm in self.maps:
            key = tuple(sorted(perm[np.asarray(ranks)].tolist()))
            if key not in self.cols:
                self.cols[key] = self.edges(key)
                added += 1
        return added

    def solve(self) -> tuple[float, np.ndarray]:
        """(LP value, prices y averaged over the symmetries)."""
        from scipy.optimize import linprog

        keys = list(self.cols)
        member = np.zeros((len(self.adj), len(keys)))
        for j, key in enumerate(keys):
            member[list(key), j] = 1
        res = linprog(-np.array([self.cols[k] for k in keys], float), A_eq=member,
                      b_eq=np.ones(len(self.adj)), bounds=(0, None), method="highs")
        y = -res.eqlin.marginals
        y = np.mean([y[perm] for perm in self.maps], axis=0)
        return -res.fun, y


def greedy_pricing(adj: np.ndarray, y: np.ndarray, k: int, rng, tries: int = 64):
    """Nodes of k ranks with large e(S) - y(S): greedy growth from random
    ranks, then swaps while they gain. Returns [(reduced value, ranks)], best first."""
    found = []
    for start in rng.choice(len(y), size=min(tries, len(y)), replace=False):
        inside = np.zeros(len(y), bool)
        inside[start] = True
        gain = adj[start] - y
        for _ in range(k - 1):
            v = int(np.where(inside, -np.inf, gain).argmax())
            inside[v] = True
            gain += adj[v]
        for _ in range(200):
            members = np.flatnonzero(inside)
            keep_value = adj[np.ix_(members, members)].sum(1) - y[members]
            join_value = np.where(inside, -np.inf, adj[:, inside].sum(1) - y)
            u, v = members[keep_value.argmin()], int(join_value.argmax())
            if join_value[v] - adj[v, u] - keep_value.min() <= 1e-9:
                break
            inside[u], inside[v] = False, True
        members = np.flatnonzero(inside)
        found.append((adj[np.ix_(members, members)].sum() / 2 - y[members].sum(), members))
    return sorted(found, key=lambda f: -f[0])


def exact_pricing(adj: np.ndarray, y: np.ndarray, k: int, seconds: float):
    """(best reduced value found, proven upper bound, its ranks): max over
    k-sets of e(S) - y(S) by integer programming (HiGHS)."""
    res = corner_bound.max_edges_milp(len(y), np.transpose(np.nonzero(np.triu(adj))), k, y,
                                      seconds=seconds)
    ranks = np.flatnonzero(res.x[:len(y)] > 0.5) if res.x is not None else np.zeros(0, np.int64)
    return -res.fun, -res.mip_dual_bound, ranks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", required=True, help="2-D grid, e.g. 16,16")
    ap.add_argument("--stencil", type=int, choices=(5, 9), default=9)
    ap.add_argument("-n", "--ppn", type=int, required=True)
    ap.add_argument("--stop-above", type=float, help="stop once the LP exceeds this many edges")
    ap.add_argument("--mip-seconds", type=float, default=300, help="time limit of one exact pricing")
    args = ap.parse_args(argv)
    grid = tuple(int(g) for g in args.grid.split(","))
    st = make_stencil(grid, args.stencil, False)
    k, nodes = args.ppn, st.nranks // args.ppn
    src, dst = edge_list(st)
    adj = np.zeros((st.nranks, st.nranks))
    adj[src, dst] = 1
    total = len(src)
    master = Master(adj, symmetries(grid, st.major))
    best, _, bound = search(st, k)  # its nodes make the master feasible
    node = node_of_rank(best.order, k)
    for part in range(nodes):
        master.add(np.flatnonzero(node == part))
    best_edges = (total - best.traffic.off_msgs) // 2
    print(f"{args.stencil}-point {args.grid}, {nodes} nodes of {k}: T = {total}, "
          f"best order {best.traffic.off_msgs} ({best_edges} edges inside), "
          f"bound {bound}; within 5 % needs a bound of {math.ceil(best.traffic.off_msgs / 1.05)}, "
          f"i.e. at most {(total - math.ceil(best.traffic.off_msgs / 1.05)) // 2} edges inside")
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for rounds in range(1, 100_000):
        lp, y = master.solve()
        if args.stop_above is not None and lp > args.stop_above:
            print(f"round {rounds}: LP {lp:.3f} > {args.stop_above}: no price-based bound proves "
                  f"more than {total - 2 * math.floor(lp + 1e-6)} off-node messages "
                  f"({time.perf_counter() - t0:.0f} s)")
            return 0
        added = sum(master.add(s) for value, s in greedy_pricing(adj, y, k, rng)[:8] if value > 1e-6)
        note = ""
        if not added:
            value, upper, ranks = exact_pricing(adj, y, k, args.mip_seconds)
            note = f", exact pricing {value:.3f} (proven <= {upper:.3f})"
            if upper <= 1e-6:
                print(f"round {rounds}: LP optimal, {lp:.3f} edges: price-based bounds prove at most "
                      f"{total - 2 * math.floor(lp + 1e-6)} off-node messages")
                return 0
            if value > 1e-6:
                master.add(ranks)
        if rounds % 10 == 0 or note:
            print(f"round {rounds}: {len(master.cols)} nodes, LP {lp:.3f}{note} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
