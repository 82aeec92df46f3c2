"""`mpiscope html PROFILE [-o report.html]`: the profile's report as one offline HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def default_output(profile: str) -> Path:
    """``run.123.mpiscope`` -> ``run.123.html`` next to it."""
    p = Path(profile)
    return p.with_suffix(".html") if p.suffix == ".mpiscope" else p.with_name(p.name + ".html")


def register(app: typer.Typer) -> None:
    @app.command()
    def html(
        profile: str = typer.Argument(..., metavar="PROFILE", help="A .mpiscope profile file."),
        output: Optional[Path] = typer.Option(None, "-o", "--output", metavar="FILE",
                                              help="HTML file to write (default: the profile's "
                                                   "name with .html, next to it)."),
        ppn: Optional[int] = typer.Option(None, "--ppn", metavar="N",
                                          help="Model N consecutive ranks per node, as "
                                               "`mpiscope report --ppn` (full mode only)."),
        force: bool = typer.Option(False, "--force", help="Overwrite FILE if it exists."),
    ):
        """Write the report of a profile as one self-contained HTML file (no network needed
        to view it): run facts, diagnosis and POP metrics, per-rank time, sortable function
        table, communication matrix, message sizes, on-/off-node traffic, one view per
        region."""
        from ..reader import read
        from ..report import build_report
        from . import page
        from .explain import diagnose_or_none
        from .profile_page import profile_page

        prof = read(profile)
        rep = build_report(prof, ppn=ppn)
        out = output or default_output(profile)
        if out.exists() and not force:  # checked before the work, and again when writing
            from ..errors import UserError
            raise UserError(f"{out} exists; choose another -o or pass --force")
        html_text = profile_page(prof, rep, diagnose_or_none(prof, rep), ppn)
        page.write(out, html_text, force=force)
        typer.echo(f"mpiscope: wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
