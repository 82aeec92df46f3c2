"""`mpiscope place ...`: rank orders that keep communicating ranks on one node."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from ..errors import UserError
from ..textout import emit as _emit
from .orders import grid_order as go
from .output import writers
from .aggregators import RULES, aggregator_report
from .bounds.stencil_bound import bound_source, off_node_lower_bound
from .evaluate import Traffic, check_order, node_of_rank, traffic_of_pairs, traffic_of_stencil
from .orders.methods import NAMES, method_order
from .orders.partition import partition_order, traffic_arrays
from .patterns import Stencil, make_stencil
from .orders.search import baselines, search

app = typer.Typer(help="Compute and judge rank orders that keep communicating ranks on one node.",
                  no_args_is_help=True, rich_markup_mode="markdown",
                  context_settings={"help_option_names": ["-h", "--help"]})

_FORMAT_HELP = "Order file format: cray (MPICH_RANK_ORDER), openmpi (rankfile), " \
               "slurm (SLURM_HOSTFILE), hydra (host:count machine file)."


def _hosts(text: Optional[str]) -> Optional[list[str]]:
    return [h for h in text.split(",") if h] if text else None


def _stencil(grid: str, stencil: int, periodic: bool, major: str, msg_bytes: int) -> Stencil:
    return make_stencil(go.parse_dims(grid, "--grid"), stencil, periodic, major, msg_bytes)


def _check_ppn(nranks: int, ppn: int) -> None:
    if ppn < 1 or nranks % ppn:
        raise UserError(f"ranks per node {ppn} does not divide {nranks} ranks")


def _traffic_lines(label: str, t: Traffic) -> list[str]:
    return [f"{label}: on-node {t.on_msgs} msgs {t.on_bytes} B, off-node {t.off_msgs} msgs "
            f"{t.off_bytes} B, max off-node per node {t.max_node_off_msgs} msgs "
            f"{t.max_node_off_bytes} B ({t.nnodes} nodes)"]


@app.command()
def grid(
    col: bool = typer.Option(False, "-C", help="Column-major numbering (first dimension fastest)."),
    row: bool = typer.Option(False, "-R", help="Row-major numbering (last dimension fastest)."),
    zorder: bool = typer.Option(False, "-Z", help="Cells row after row in the same order (default)."),
    peano: bool = typer.Option(False, "-P", help="Cells in serpentine order (alternate rows reversed)."),
    hilbert: bool = typer.Option(False, "-H", help="Cells along a Hilbert curve."),
    dims: str = typer.Option(..., "-g", metavar="N1,N2,...", help="Grid dimensions."),
    cell: Optional[str] = typer.Option(None, "-c", metavar="n1,n2,...",
                                       help="Cell dimensions (ranks of a cell are listed "
                                            "together); one number = a cell of that many ranks."),
    per_line: Optional[int] = typer.Option(None, "-n", metavar="N",
                                           help="Ranks per output line (default: one cell per line; "
                                                "16 with -H and no -c)."),
    max_rank: Optional[int] = typer.Option(None, "-m", metavar="MAX",
                                           help="Largest rank to list: ranks above are left out, "
                                                "ranks past the grid up to MAX appended."),
    fmt: str = typer.Option("cray", "--format", help=_FORMAT_HELP + " One output line "
                            "(one cell, or -n ranks) is one node."),
    hosts: Optional[str] = typer.Option(None, "--hosts", help="Node host names h1,h2,..."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Write the order to a "
                                         "new file (default stdout)."),
):
    """grid_order-compatible rank order (MPICH_RANK_ORDER) for a nearest-neighbour grid;
    --format writes it for another launcher, one output line per node."""
    if col == row:
        raise UserError("give exactly one of -C (column-major) or -R (row-major)")
    if zorder + peano + hilbert > 1:
        raise UserError("give at most one of -Z, -P, -H")
    curve = "P" if peano else "H" if hilbert else "Z"
    spec = go.make_spec(dims, cell, "C" if col else "R", curve, max_rank, per_line)
    if fmt == "cray":
        _emit(go.render(spec, cell), output)
        return
    _emit_order(fmt, writers.render_nodes(go.node_lines(spec), fmt, _hosts(hosts),
                               go.header(spec, cell).lstrip("# ")), output)


def _emit_order(fmt: str, text: str, output: Optional[str]) -> None:
    """Write an order file; then warn if hydra would split a host into several nodes."""
    _emit(text, output)
    if fmt == "hydra":
        runs = [ln.rsplit(":", 1) for ln in text.splitlines() if ln and not ln.startswith("#")]
        warning = writers.hydra_split_warning([h for h, n in runs for _ in range(int(n))])
        if warning:
            print(warning, file=sys.stderr)


@app.command()
def method(
    number: int = typer.Argument(..., metavar="0|1|2|3",
                                 help="0 round-robin, 1 SMP, 2 folded, 3 custom (from --file)."),
    ranks: Optional[int] = typer.Option(None, "--ranks", help="Number of ranks (methods 0-2)."),
    ppn: int = typer.Option(..., "-n", "--ppn", help="Ranks per node."),
    file: Optional[str] = typer.Option(None, "--file", help="Order file for method 3."),
    fmt: str = typer.Option("cray", "--format", help=_FORMAT_HELP),
    hosts: Optional[str] = typer.Option(None, "--hosts", help="Node host names h1,h2,..."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Write to a new file."),
):
    """The order MPICH_RANK_REORDER_METHOD 0-3 gives, in any launcher's format."""
    if number == 3:
        if not file:
            raise UserError("method 3 reads its order from --file")
        order = writers.read_order_file(file).sequence()
    elif number in (0, 1, 2):
        if ranks is None or ranks < 1:
            raise UserError("--ranks N (>= 1) is required for methods 0-2")
        go.check_size((ranks,))
        order = method_order(number, ranks, ppn)
    else:
        raise UserError(f"placement method must be 0, 1, 2 or 3, not {number}")
    _check_ppn(len(order), ppn)
    _emit_order(fmt, writers.render(order, ppn, fmt, _hosts(hosts),
                         f"mpiscope place method {number} ({NAMES[number]}), ppn {ppn}"), output)


def _order_for(nranks: int, order_file: Optional[str], method_no: Optional[int],
               ppn: int) -> np.ndarray:
    if order_file:
        return check_order(writers.read_order_file(order_file).sequence(), nranks)
    return method_order(1 if method_no is None else method_no, nranks, ppn)


@app.command()
def evaluate(
    ppn: int = typer.Option(..., "-n", "--ppn", help="Ranks per node."),
    order_file: Optional[str] = typer.Option(None, "--order", help="Order file (any format); "
                                             "default: --method, else SMP."),
    method_no: Optional[int] = typer.Option(None, "--method", help="Use method 0, 1 or 2."),
    grid_dims: Optional[str] = typer.Option(None, "--grid", help="Stencil grid, e.g. 64,64."),
    stencil: int = typer.Option(5, "--stencil", help="5 or 9 (2-D), 7 or 27 (3-D) points."),
    periodic: bool = typer.Option(False, "--periodic", help="Grid wraps around."),
    col: bool = typer.Option(False, "-C", help="The application numbers the grid column-major "
                                               "(default row-major)."),
    msg_bytes: int = typer.Option(1, "--bytes", help="Bytes per stencil message."),
    profile: Optional[str] = typer.Option(None, "--profile", help="Use a profile's measured "
                                          "point-to-point traffic instead of a stencil."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """On-node/off-node messages and bytes of an order, and the lower bound for a stencil."""
    if (grid_dims is None) == (profile is None):
        raise UserError("give a pattern: --grid (with --stencil) or --profile")
    result: dict = {"ppn": ppn}
    if profile is not None:
        from .. import read
        prof = read(profile)
        src, dst, msgs, nbytes = traffic_arrays(prof.peers)
        if not len(src) or not (msgs.sum() or nbytes.sum()):
            raise UserError(f"{profile}: the profile has no point-to-point traffic")
        _check_ppn(prof.nranks, ppn)
        order = _order_for(prof.nranks, order_file, method_no, ppn)
        t = traffic_of_pairs(node_of_rank(order, ppn), src, dst, msgs, nbytes)
    else:
        st = _stencil(grid_dims, stencil, periodic, "C" if col else "R", msg_bytes)
        _check_ppn(st.nranks, ppn)
        order = _order_for(st.nranks, order_file, method_no, ppn)
        t = traffic_of_stencil(node_of_rank(order, ppn), st)
        bound = off_node_lower_bound(st, ppn)
        result.update(bound_off_msgs=bound, bound_off_bytes=bound * msg_bytes,
                      bound_from=bound_source(st, ppn))
    result["traffic"] = t.as_dict()
    if as_json:
        print(json.dumps(result, indent=1))
        return
    for line in _traffic_lines("order", t):
        print(line)
    if "bound_off_msgs" in result:
        gap = (t.off_msgs / result["bound_off_msgs"] - 1) * 100 if result["bound_off_msgs"] else 0.0
        print(f"lower bound: off-node >= {result['bound_off_msgs']} msgs "
              f"{result['bound_off_bytes']} B (this order: +{gap:.1f}%; "
              f"from the {result['bound_from']})")


@app.command()
def auto(
    grid_dims: str = typer.Option(..., "--grid", help="Stencil grid, e.g. 1024,1024."),
    stencil: int = typer.Option(5, "--stencil", help="5 or 9 (2-D), 7 or 27 (3-D) points."),
    ppn: int = typer.Option(..., "-n", "--ppn", help="Ranks per node."),
    periodic: bool = typer.Option(False, "--periodic", help="Grid wraps around."),
    col: bool = typer.Option(False, "-C", help="Application numbers the grid column-major."),
    fmt: str = typer.Option("cray", "--format", help=_FORMAT_HELP),
    hosts: Optional[str] = typer.Option(None, "--hosts", help="Node host names h1,h2,..."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Write the order to a "
                                         "new file (default stdout)."),
):
    """Search cells, curves, lattice tiles and bands (border repaired) for the best
    order; its gap to the bound on stderr."""
    st = _stencil(grid_dims, stencil, periodic, "C" if col else "R", 1)
    _check_ppn(st.nranks, ppn)
    best, tried, bound = search(st, ppn)
    for cand in [*baselines(st, ppn), best]:
        gap = (cand.traffic.off_msgs / bound - 1) * 100 if bound else 0.0
        print(f"{cand.name:>24}: off-node {cand.traffic.off_msgs} msgs (+{gap:.1f}% over bound), "
              f"max per node {cand.traffic.max_node_off_msgs}", file=sys.stderr)
    print(f"{'lower bound':>24}: off-node >= {bound} msgs (from the {bound_source(st, ppn)}; "
          f"{len(tried)} orders tried; best {best.name})", file=sys.stderr)
    _emit_order(fmt, writers.render(best.order, ppn, fmt, _hosts(hosts),
                         f"mpiscope place auto --grid {grid_dims} --stencil {stencil} -n {ppn}: "
                         + (f"grid_order {'-C' if col else '-R'} {best.name}" if best.cell
                          else best.name)), output)


@app.command("from-profile")
def from_profile(
    profile: str = typer.Argument(..., help="A profile written by mpiscope run."),
    ppn: int = typer.Option(..., "-n", "--ppn", help="Ranks per node."),
    weight: str = typer.Option("bytes", "--weight", help="Cut bytes or msgs."),
    fmt: str = typer.Option("cray", "--format", help=_FORMAT_HELP),
    hosts: Optional[str] = typer.Option(None, "--hosts", help="Node host names h1,h2,..."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Write the order to a "
                                         "new file (default stdout)."),
):
    """Partition the measured traffic into nodes of PPN ranks (METIS); compare with the run."""
    from .. import read
    if weight not in ("bytes", "msgs"):
        raise UserError("--weight must be bytes or msgs")
    prof = read(profile)
    src, dst, msgs, nbytes = traffic_arrays(prof.peers)
    order = partition_order(prof.nranks, src, dst, nbytes if weight == "bytes" else msgs, ppn)
    new = traffic_of_pairs(node_of_rank(order, ppn), src, dst, msgs, nbytes)
    smp = traffic_of_pairs(node_of_rank(np.arange(prof.nranks), ppn), src, dst, msgs, nbytes)
    for line in _traffic_lines("SMP order (consecutive ranks)", smp) + \
            _traffic_lines("partitioned order", new):
        print(line, file=sys.stderr)
    if len(prof.ranks) and len(set(prof.ranks["node"].tolist())) > 1:
        run = traffic_of_pairs(prof.ranks["node"].astype(np.int64), src, dst, msgs, nbytes)
        for line in _traffic_lines("as run", run):
            print(line, file=sys.stderr)
    _emit_order(fmt, writers.render(order, ppn, fmt, _hosts(hosts),
                         f"mpiscope place from-profile {Path(profile).name} -n {ppn}"), output)


@app.command()
def aggregators(
    profile: str = typer.Argument(..., help="A profile with collective MPI-IO."),
    ppn: Optional[int] = typer.Option(None, "--ppn", help="Model PPN consecutive ranks per "
                                      "node (default: the nodes of the run)."),
    order_file: Optional[str] = typer.Option(None, "--order", help="Judge this order instead "
                                             "of the run's placement (needs --ppn)."),
    rule: str = typer.Option("romio", "--rule", help="Aggregator selection: romio or stride."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Which ranks act as MPI-IO aggregators, on which nodes; warn when they crowd."""
    from .. import read
    if rule not in RULES:
        raise UserError(f"--rule must be one of {', '.join(RULES)}")
    prof = read(profile)
    if order_file is not None:
        if not ppn:
            raise UserError("--order needs --ppn")
        node = node_of_rank(check_order(writers.read_order_file(order_file).sequence(),
                                        prof.nranks), ppn)
    elif prof.is_summary:
        # no per-rank rows: the nodes of the run are unknown, and a per-rank array would
        # be as large as the rank count the header claims, not as the file
        if not ppn:
            raise UserError("a summary-mode profile has no per-rank node map: give --ppn N "
                            "(N consecutive ranks per node)")
        node = None
    else:
        node = prof.node_of_rank(ppn)
    report = aggregator_report(prof, node, rule, ppn)
    if as_json:
        print(json.dumps(report, indent=1))
        return
    for f in report:
        assumed = "" if f["cb_nodes_hint"] is not None else " (no hint: one per node assumed)"
        io = ("per-rank bytes not in a summary-mode profile"
              if f["collective_io_bytes"] is None else
              f"{f['collective_io_bytes']} B from {f['ranks_with_collective_io']} ranks (all files)")
        print(f"{f['name']}: cb_nodes={f['cb_nodes']}{assumed} cb_config_list={f['cb_config_list']} "
              f"rule={f['rule']}; collective I/O: {io}")
        per_agg = f["aggregator_io_bytes"] or [None] * len(f["aggregators"])
        for i, (r, n, b) in enumerate(zip(f["aggregators"], f["nodes"], per_agg)):
            print(f"  AGG {i:4d}  rank {r:6d}  node {n:5d}" + ("" if b is None else f"  {b} B"))
        if f["crowded"]:
            print(f"  warning: {f['warning']}")
