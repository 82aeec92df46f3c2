"""`mpiscope report PROFILE`: the profile's tables, or the same numbers as JSON."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer


def callsites_option(value: str) -> int | None:
    """--callsites K|all as a count (None: all)."""
    from ..errors import UserError
    if value.strip().lower() == "all":
        return None
    try:
        k = int(value)
    except ValueError:
        raise UserError(f"--callsites takes a number or 'all', not {value!r}") from None
    if k < 0:
        raise UserError(f"--callsites must be 0 or more, or 'all', not {k}")
    return k


def register(app: typer.Typer) -> None:
    @app.command()
    def report(
        profile: str = typer.Argument(..., metavar="PROFILE", help="A .mpiscope profile file, or a snapshot spool directory (partial)."),
        as_json: bool = typer.Option(False, "--json",
                                     help="Print every number as one JSON object "
                                          "(schema in docs/report.md) instead of tables."),
        ppn: Optional[int] = typer.Option(None, "--ppn", metavar="N",
                                          help="Model N consecutive ranks per node for the "
                                               "on-/off-node split and the pairs' node column "
                                               "(node = rank // N), e.g. for a run on one node. "
                                               "Full-mode profiles only."),
        top: int = typer.Option(10, "--top", metavar="K",
                                help="Number of most-communicating rank pairs to list."),
        region: Optional[str] = typer.Option(None, "--region", metavar="NAME",
                                             help="Restrict the function table, the message-size "
                                                  "histogram and the region sections to the "
                                                  "MPI_Pcontrol region NAME."),
        callsites: str = typer.Option("20", "--callsites", metavar="K|all",
                                      help="List the K call sites with the most MPI time "
                                           "(file:line, parent function, calls, time per "
                                           "rank), or all of them. MPISCOPE_SYMBOL_PATH: "
                                           "more directories to find moved binaries and "
                                           "debug files in."),
        by_comm: bool = typer.Option(False, "--by-comm",
                                     help="Also print time, calls and bytes per communicator "
                                          "(named by MPI_Comm_set_name or by how it was made; "
                                          "members as world ranks). --json always has them."),
    ):
        """Print Cray-profiler-style tables of a profile: time split into compute, MPI,
        wait and collective sync with min/max/avg/minPE/maxPE and imbalance; per MPI
        function; message sizes; on-/off-node traffic; top pairs; regions; MPI-IO hints."""
        from ..reader import read
        from ..terminal import console
        from ..textout import json_safe
        from . import build_report, render

        rep = build_report(read(profile), ppn=ppn, top=top, region=region,
                           callsites=callsites_option(callsites))
        if as_json:
            json.dump(json_safe(rep), sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            render(rep, console(min_width=150), by_comm=by_comm)
