"""Rank order files for every launcher, and reading them back.

An order lists ranks; position p goes to node p // ppn, slot p % ppn.

* ``cray``: MPICH_RANK_ORDER (MPICH_RANK_REORDER_METHOD=3): comma-separated
  ranks, one node per line, ``#`` comments. Cray MPI fills nodes in list
  order; line breaks are for people.
* ``openmpi``: an Open MPI rankfile, ``rank R=HOST slot=S``; HOST is a given
  host name or ``+nK`` (the K-th node of the allocation).
* ``slurm``: a SLURM_HOSTFILE for ``srun --distribution=arbitrary``: line r
  names the host of rank r (needs host names).
* ``hydra``: an MPICH hydra machine file, ``host:count`` lines; hydra hands
  out ranks in file order, so runs of consecutive ranks on one host become
  one line (needs host names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import UserError

FORMATS = ("cray", "openmpi", "slurm", "hydra")


def _node_hosts(nnodes: int, hosts: list[str] | None, fmt: str) -> list[str]:
    if hosts is None:
        if fmt == "openmpi":
            return [f"+n{j}" for j in range(nnodes)]
        raise UserError(f"--format {fmt} needs the node host names: --hosts h1,h2,...")
    if len(hosts) < nnodes:
        raise UserError(f"the order needs {nnodes} nodes but --hosts names {len(hosts)}")
    return list(hosts[:nnodes])


def render(order: np.ndarray, ppn: int, fmt: str, hosts: list[str] | None = None,
           comment: str | None = None) -> str:
    """The order file text in one of FORMATS: position p on node p // ppn."""
    order = np.asarray(order, np.int64)
    return render_nodes([order[i:i + ppn] for i in range(0, len(order), ppn)], fmt, hosts,
                        comment)


def render_nodes(nodes: list, fmt: str, hosts: list[str] | None = None,
                 comment: str | None = None) -> str:
    """The order file text in one of FORMATS for ranks given node by node
    (nodes may differ in size, as grid_order's regions do); slot = place on the node."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    nodes = [np.asarray(n, np.int64) for n in nodes]
    lines = [f"# {comment}"] if comment and fmt in ("cray", "openmpi") else []
    if fmt == "cray":
        lines += [",".join(n.astype(str)) for n in nodes]
        return "\n".join(lines) + "\n"
    names = _node_hosts(len(nodes), hosts, fmt)
    nranks = sum(len(n) for n in nodes)
    host_of_rank, slot_of_rank = [""] * nranks, [0] * nranks
    for name, node in zip(names, nodes):
        for s, r in enumerate(node.tolist()):
            host_of_rank[r], slot_of_rank[r] = name, s
    if fmt == "openmpi":
        lines += [f"rank {r}={host_of_rank[r]} slot={slot_of_rank[r]}" for r in range(nranks)]
    elif fmt == "slurm":
        lines += host_of_rank
    else:
        lines += [f"{h}:{n}" for h, n in host_runs(host_of_rank)]
    return "\n".join(lines) + "\n"


def host_runs(host_of_rank: list[str]) -> list[tuple[str, int]]:
    """Runs of consecutive ranks on one host, as hydra machine-file lines want them."""
    runs: list[list] = []
    for host in host_of_rank:
        if runs and runs[-1][0] == host:
            runs[-1][1] += 1
        else:
            runs.append([host, 1])
    return [(h, n) for h, n in runs]


def hydra_split_hosts(host_of_rank: list[str]) -> list[str]:
    """Hosts holding more than one run of consecutive ranks, in order of first use.

    MPICH's hydra makes every line of a machine file a node of its own (its PMI
    process mapping), so the ranks of such a host in different lines do not share a
    node for MPICH: MPI_COMM_TYPE_SHARED splits them and they talk through the
    network module, not shared memory, although each runs on the host the order says
    (measured on the virtual cluster: docs/testing.md, tests/cluster/test_cluster_place.py).
    """
    seen: set[str] = set()
    split: list[str] = []
    for host, _ in host_runs(host_of_rank):
        if host in seen and host not in split:
            split.append(host)
        seen.add(host)
    return split


def hydra_split_warning(host_of_rank: list[str]) -> str | None:
    """One warning line if hydra would split a host into several nodes, else None."""
    split = hydra_split_hosts(host_of_rank)
    if not split:
        return None
    names = ", ".join(split[:3]) + (f" and {len(split) - 3} more" if len(split) > 3 else "")
    return (f"mpiscope: warning: the order gives {names} ranks that are not consecutive: "
            f"MPICH's hydra makes each run of consecutive ranks on a host a node of its own, "
            f"so those ranks will not share memory (MPI_COMM_TYPE_SHARED splits them); give "
            f"each host consecutive ranks, or renumber the ranks in the application")


@dataclass(frozen=True)
class OrderFile:
    """An order file read back.

    Attributes:
        fmt: which of FORMATS it is.
        lines: for cray, the ranks of each line (one node per line).
        host: for the other formats, the host (or "+nK") of each rank.
        slot: for openmpi, the slot of each rank; else None.
    """

    fmt: str
    nranks: int
    lines: list[list[int]] | None = None
    host: list[str] | None = None
    slot: list[int] | None = None

    def sequence(self) -> np.ndarray:
        """Ranks by position: a cray file as listed; otherwise grouped by host
        (hosts in order of first use, "+nK" by K) and, within a host, by slot
        (rankfile) or rank."""
        if self.lines is not None:
            return np.array([r for line in self.lines for r in line], np.int64)
        first: dict[str, int] = {}
        for h in self.host:
            first.setdefault(h, len(first))

        def node_key(h: str):
            return (0, int(h[2:])) if re.fullmatch(r"\+n\d+", h) else (1, first[h])

        slot = self.slot or list(range(self.nranks))
        return np.array(sorted(range(self.nranks),
                               key=lambda r: (node_key(self.host[r]), slot[r], r)), np.int64)


_RANKFILE = re.compile(r"^rank\s+(\d+)\s*=\s*(\S+?)\s+slot\s*=\s*(\d+)\s*$")
_HYDRA = re.compile(r"^([^\s:#,]+):(\d+)$")
_HOST = re.compile(r"^[A-Za-z0-9_.\-+]+$")


def _parse_cray(rows: list[str], path: str) -> OrderFile:
    lines = []
    for row in rows:
        ranks: list[int] = []
        for tok in re.split(r"[,\s]+", row.strip()):
            if not tok:
                continue
            m = re.fullmatch(r"(\d+)(?:-(\d+))?", tok)
            if not m:
                raise UserError(f"{path}: not a rank order file (bad entry {tok!r})")
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            if hi < lo:
                # Cray's documentation shows only ascending ranges; guessing what
                # a descending one means could misplace every rank of the job.
                raise UserError(f"{path}: the range {tok} is descending; list the ranks "
                                f"({','.join(map(str, range(lo, hi - 1, -1)))}) or write "
                                f"it as {hi}-{lo} if that is the order meant")
            ranks.extend(range(lo, hi + 1))
        if ranks:
            lines.append(ranks)
    flat = [r for line in lines for r in line]
    _check_perm(flat, path)
    return OrderFile("cray", len(flat), lines=lines)


def _check_perm(ranks: list[int], path: str) -> None:
    if not ranks:
        raise UserError(f"{path}: the order file lists no ranks")
    if sorted(ranks) != list(range(len(ranks))):
        raise UserError(f"{path}: the ranks listed are not 0..{len(ranks) - 1} each once")


def read_order_file(path: str) -> OrderFile:
    """Read any of FORMATS (detected from the content); UserError if it is none."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"cannot read order file {path}: {getattr(err, 'strerror', None) or err}") \
            from None
    rows = [r.split("#", 1)[0].strip() for r in text.splitlines()]
    rows = [r for r in rows if r]
    if not rows:
        raise UserError(f"{path}: the order file lists no ranks")
    if all(_RANKFILE.match(r) for r in rows):
        entries = sorted((int(m.group(1)), m.group(2), int(m.group(3)))
                         for m in map(_RANKFILE.match, rows))
        _check_perm([e[0] for e in entries], path)
        return OrderFile("openmpi", len(entries), host=[e[1] for e in entries],
                         slot=[e[2] for e in entries])
    if all(_HYDRA.match(r) for r in rows):
        host = [h for m in map(_HYDRA.match, rows) for h in [m.group(1)] * int(m.group(2))]
        return OrderFile("hydra", len(host), host=host)
    if all(re.fullmatch(r"[\d,\s\-]+", r) for r in rows):
        return _parse_cray(rows, path)
    if all(_HOST.match(r) for r in rows):
        return OrderFile("slurm", len(rows), host=rows)
    raise UserError(f"{path}: not a rank order file (cray, openmpi rankfile, slurm hostfile "
                    f"or hydra machine file)")
