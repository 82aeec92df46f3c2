"""`mpiscope scale`: run a scaling study, follow it, report and export it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ..errors import UserError
from ..textout import emit

app = typer.Typer(
    help="Strong and weak scaling studies: run every rank count under mpiscope (locally "
         "or through Slurm), then tables, Amdahl/Karp-Flatt/Extra-P models and "
         "extrapolation. Study file and models: docs/scaling.md.",
    no_args_is_help=True, rich_markup_mode="markdown")

SUBMITS = ("local", "slurm")


def _console():
    from rich.console import Console
    return Console(width=max(Console().width, 150))


@app.command()
def run(study_file: str = typer.Argument(..., metavar="STUDY.toml",
                                         help="The study file (docs/scaling.md)."),
        submit: str = typer.Option("local", "--submit", metavar="local|slurm",
                                   help="local: run the points one after another here; slurm: "
                                        "one sbatch job per point."),
        wait: bool = typer.Option(False, "--wait",
                                  help="With --submit slurm: wait until every job has "
                                       "finished.")):
    """Run every point of a study that is not done yet (resumable: done points are
    skipped, failed ones are run again in a new attempt folder, nothing is overwritten)."""
    from . import runner_local, runner_slurm, studydir
    from .study import load_study

    if submit not in SUBMITS:
        raise UserError(f"--submit must be local or slurm, not {submit!r}")
    study = load_study(study_file)
    if submit == "slurm":  # before the study directory is made
        runner_slurm.check_controller()
    root = studydir.prepare(study)
    workdir = study.path.parent
    console = _console()
    if submit == "local":
        records = runner_local.run_local(study, root, workdir, console)
        failed = [r for r in records if r["status"] != "done"]
        console.print(f"{study.name}: {len(records) - len(failed)} point(s) run, "
                      f"{len(failed)} failed; results in {root}")
        if failed:
            raise typer.Exit(1)
    else:
        runner_slurm.run_slurm(study, root, workdir, console, wait)


@app.command()
def status(directory: str = typer.Argument(..., metavar="DIR", help="A study directory.")):
    """Show which points are done, failed, pending or running (asks squeue/sacct about
    Slurm jobs that have not finished)."""
    from rich.table import Table

    from . import runner_slurm, studydir

    study, root = studydir.open_study(directory)
    rows = runner_slurm.point_states(study, root)
    t = Table(box=None)
    for col in ("P", "rep", "attempt", "job", "state", "detail"):
        t.add_column(col, justify="right" if col in ("P", "rep", "attempt") else "left")
    for r in rows:
        t.add_row(str(r["np"]), str(r["rep"]), str(r["attempt"] or "-"), r["job_id"] or "-",
                  r["state"], r["detail"])
    console = _console()
    console.print(f"{study.name} ({study.kind} scaling) in {root}")
    console.print(t)
    counts = {}
    for r in rows:
        counts[r["state"]] = counts.get(r["state"], 0) + 1
    console.print(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))


@app.command()
def report(directory: str = typer.Argument(..., metavar="DIR", help="A study directory."),
           as_json: bool = typer.Option(False, "--json",
                                        help="Print every number as one JSON object "
                                             "(schema mpiscope-scale/1, docs/scaling.md)."),
           plots: Optional[str] = typer.Option(None, "--plots", metavar="OUTDIR",
                                               help="Also write scaling.png, functions.png and "
                                                    "models.png into OUTDIR."),
           html: Optional[str] = typer.Option(None, "--html", metavar="FILE",
                                              help="Also write the tables and plots as one "
                                                   "offline HTML page (a new file).")):
    """Tables (P, wall time, speedup, efficiency, MPI %, POP metrics, time per function),
    Amdahl and Karp-Flatt serial fractions, Extra-P models per function and the
    extrapolation to 10x and 100x the largest P."""
    from ..textout import json_safe
    from . import studydir, tables
    from .build import build_scale_report

    study, root = studydir.open_study(directory)
    rep = build_scale_report(study, root)
    if plots:
        from . import plots as scale_plots
        for p in scale_plots.write_all(rep, Path(plots)):
            print(f"mpiscope: wrote {p}", file=sys.stderr)
    if html:
        from ..html import page
        from .html_page import document
        page.write(html, document(rep))
        print(f"mpiscope: wrote {html}", file=sys.stderr)
    if as_json:
        json.dump(json_safe(rep), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        tables.render(rep, _console())


@app.command()
def export(directory: str = typer.Argument(..., metavar="DIR", help="A study directory."),
           fmt: str = typer.Option(..., "--format", metavar="extrap|csv",
                                   help="extrap: Extra-P's text input (extrap --text FILE); "
                                        "csv: one value per line (study, kind, np, rep, "
                                        "metric, name, value, unit)."),
           output: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE",
                                                help="Write here (must not exist) instead of "
                                                     "standard output.")):
    """Export the runs of a study for other tools."""
    from . import export as ex
    from . import studydir
    from .collect import collect

    if fmt not in ex.FORMATS:
        raise UserError(f"--format must be extrap or csv, not {fmt!r}")
    study, root = studydir.open_study(directory)
    runs = collect(study, root)["runs"]
    if not runs:
        raise UserError(f"{root} has no done runs to export")
    text = ex.extrap_text(runs, study.name) if fmt == "extrap" else \
        ex.tidy_csv(runs, study.name, study.kind)
    emit(text, output)


@app.command(hidden=True)
def point(directory: str, key: str, attempt: int,
          workdir: str = typer.Option(..., "--workdir")):
    """Run one point into an existing attempt folder (what a Slurm job of the study runs)."""
    from . import runner_local, studydir

    study, root = studydir.open_study(directory)
    match = [p for p in study.points() if p.key == key]
    if not match:
        raise UserError(f"{key} is not a point of {root}")
    tries = [a for a in studydir.attempts(root, match[0]) if a.number == attempt]
    if not tries:
        raise UserError(f"{root}: {key} has no attempt {attempt}")
    if tries[0].record is not None:
        raise UserError(f"{tries[0].path} already has a record; not running it again")
    rec = runner_local.run_point(study, root, match[0], Path(workdir), tries[0])
    raise typer.Exit(0 if rec["status"] == "done" else 1)
