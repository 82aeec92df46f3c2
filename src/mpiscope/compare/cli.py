"""`mpiscope compare A B`: two profiles side by side, what got worse first."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def compare(
        profile_a: str = typer.Argument(..., metavar="A", help="The profile before (or FAST)."),
        profile_b: str = typer.Argument(..., metavar="B", help="The profile after (or SLOW)."),
        as_json: bool = typer.Option(False, "--json", help="Print the comparison as one JSON "
                                     "object (schema in docs/compare.md)."),
        strict: bool = typer.Option(False, "--strict", help="Refuse to compare profiles of "
                                    "different programs (default: warn)."),
        ppn: Optional[int] = typer.Option(None, "--ppn", metavar="N", help="Model N "
                                          "consecutive ranks per node in both reports "
                                          "(full-mode profiles only)."),
        html: bool = typer.Option(False, "--html", help="Write the comparison as one offline "
                                  "HTML page (docs/html.md) instead of printing it."),
        output: Optional[Path] = typer.Option(None, "-o", "--output", metavar="FILE",
                                              help="With --html: the file to write (default: "
                                                   "A-vs-B.html in the current directory)."),
        force: bool = typer.Option(False, "--force", help="With --html: overwrite FILE."),
    ):
        """Compare two profiles: per function and region the change in time, calls, bytes
        and imbalance, POP metrics side by side, which ranks moved; what got worse first.
        Values are per-rank averages, so runs at different rank counts compare."""
        from ..reader import read
        from ..report import build_report
        from ..terminal import console
        from ..textout import json_safe
        from . import compare as build
        from .build import kept_for_compare
        from .render import render

        if html:
            from ..html.cli import compare_html
            compare_html(profile_a, profile_b, output, force, strict, ppn)
            return
        # One mapped file at a time: A's report, then only what compare needs of A.
        pa = read(profile_a)
        rep_a = build_report(pa, ppn=ppn)
        pa = kept_for_compare(pa)
        pb = read(profile_b)
        rep_b = build_report(pb, ppn=ppn)
        pb = kept_for_compare(pb)
        c = build(pa, rep_a, pb, rep_b, strict=strict)
        if as_json:
            json.dump(json_safe(c), sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            render(c, console(min_width=150))
