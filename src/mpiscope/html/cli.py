"""`mpiscope html PROFILE [-o report.html]`: the profile's report as one offline HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..terminal import literal


def default_output(profile: str) -> Path:
    """``run.123.mpiscope`` -> ``run.123.html`` next to it."""
    p = Path(profile)
    return p.with_suffix(".html") if p.suffix == ".mpiscope" else p.with_name(p.name + ".html")


def _stem(profile: str) -> str:
    name = Path(profile).name
    return name[:-len(".mpiscope")] if name.endswith(".mpiscope") else name


def _refuse_existing(out: Path, force: bool) -> None:
    """Checked before the work (and again when writing): never lose a file."""
    if out.exists() and not force:
        from ..errors import UserError
        raise UserError(f"{out} exists; choose another -o or pass --force")


def compare_html(profile_a: str, profile_b: str, output: Path | None, force: bool,
                 strict: bool, ppn: int | None) -> Path:
    """``mpiscope compare A B --html``: the comparison page (compare_page.py)."""
    from ..compare import compare
    from ..reader import read
    from ..report import build_report
    from . import page
    from .compare_page import compare_page

    out = output or Path(f"{_stem(profile_a)}-vs-{_stem(profile_b)}.html")
    _refuse_existing(out, force)
    pa, pb = read(profile_a), read(profile_b)
    ra, rb = build_report(pa, ppn=ppn), build_report(pb, ppn=ppn)
    c = compare(pa, ra, pb, rb, strict=strict)
    page.write(out, compare_page(c, pa, ra, pb, rb, ppn), force=force)
    typer.echo(f"mpiscope: wrote {literal(out)} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


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
        table, MPI_T performance variables (when recorded), communication matrix, message
        sizes, on-/off-node traffic, one view per region."""
        from ..reader import read
        from ..report import build_report
        from . import page
        from .explain import diagnose_or_none
        from .profile_page import profile_page

        prof = read(profile)
        rep = build_report(prof, ppn=ppn)
        out = output or default_output(profile)
        _refuse_existing(out, force)
        html_text = profile_page(prof, rep, diagnose_or_none(prof, rep), ppn)
        page.write(out, html_text, force=force)
        typer.echo(f"mpiscope: wrote {literal(out)} ({out.stat().st_size / 1e6:.1f} MB)")
