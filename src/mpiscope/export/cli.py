"""`mpiscope export PROFILE --format csv|hatchet|json`: the profile for other tools."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..errors import UserError
from ..terminal import literal

FORMATS = {"csv": ".csv", "hatchet": ".hatchet.json", "json": ".json"}


def default_output(profile: str, fmt: str) -> Path:
    """``run.123.mpiscope`` -> ``run.123.csv`` / ``.hatchet.json`` / ``.json`` next to it."""
    p = Path(profile)
    stem = p.name[:-len(".mpiscope")] if p.name.endswith(".mpiscope") else p.name
    return p.with_name(stem + FORMATS[fmt])


def register(app: typer.Typer) -> None:
    @app.command()
    def export(
        profile: str = typer.Argument(..., metavar="PROFILE", help="A .mpiscope profile file."),
        fmt: str = typer.Option(..., "--format", "-f", metavar="csv|hatchet|json",
                                help="csv: tidy rows (rank, region, function, calls, time, "
                                     "bytes_sent, bytes_recv) plus FILE's .peers.csv (rank, "
                                     "peer, messages, bytes), .timeline.csv (rank, t_start, "
                                     "t_end, class, seconds) and .callsites.csv (rank, "
                                     "function, site, location, parent, calls, time, bytes); "
                                     "hatchet: a JSON file hatchet.GraphFrame.from_json loads "
                                     "(regions as the tree, MPI functions under them, their "
                                     "call sites under them, one row per rank); json: every "
                                     "view as columns."),
        output: Optional[Path] = typer.Option(None, "-o", "--output", metavar="FILE",
                                              help="File to write (default: the profile's name "
                                                   "with .csv, .hatchet.json or .json)."),
        force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
    ):
        """Export a profile as CSV, as a Hatchet GraphFrame file, or as JSON
        (docs/python.md)."""
        from ..reader import read
        from . import csv_files, hatchet, json_doc

        if fmt not in FORMATS:
            raise UserError(f"unknown --format {fmt!r} (choose csv, hatchet or json)")
        out = output or default_output(profile, fmt)
        targets = csv_files.outputs(out) if fmt == "csv" else [out]
        for t in targets:  # before any work, so nothing is half-written over
            if t.exists() and not force:
                raise UserError(f"{t} exists; choose another -o or pass --force")
        prof = read(profile)
        writer = {"csv": csv_files.write, "hatchet": hatchet.write, "json": json_doc.write}[fmt]
        try:
            written = writer(prof, out)
        except OSError as err:
            raise UserError(f"cannot write {err.filename or out}: {err.strerror}") from None
        for w in written:
            typer.echo(f"mpiscope: wrote {literal(w)}")
