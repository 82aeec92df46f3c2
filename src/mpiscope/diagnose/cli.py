"""`mpiscope diagnose PROFILE`: the findings, or the same as JSON."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def diagnose(
        profile: str = typer.Argument(..., metavar="PROFILE", help="A .mpiscope profile file."),
        as_json: bool = typer.Option(False, "--json",
                                     help="Print the diagnosis (schema in docs/diagnose.md) and "
                                          "the POP metrics as one JSON object."),
        ppn: Optional[int] = typer.Option(None, "--ppn", metavar="N",
                                          help="Model N consecutive ranks per node for the "
                                               "placement and aggregator rules (full-mode "
                                               "profiles only), e.g. for a run on one node."),
    ):
        """Find the scaling problems of a profile: compute imbalance, late arrival at
        collectives, late senders, root hot spots, small collectives and messages,
        barriers, rank placement, serialised I/O. Each finding says which ranks, the
        evidence, what it costs (seconds, % of the run), the fix and the next command;
        a clean run says so in one line. Rules and thresholds: docs/diagnose.md."""
        from ..reader import read
        from ..report import build_report
        from ..terminal import console
        from ..textout import json_safe
        from . import diagnose as run_rules
        from .render import render

        prof = read(profile)
        rep = build_report(prof, ppn=ppn)
        diag = run_rules(prof, rep)
        if as_json:
            json.dump(json_safe({**diag, "pop": rep["pop"]}), sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            render(diag, rep, console(min_width=120))
