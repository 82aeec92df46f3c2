"""`mpiscope scale`: run a scaling study, follow it, report and export it."""

from __future__ import annotations

import json
import os
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
    from ..terminal import console
    return console(min_width=150)


@app.command()
def run(study_file: str = typer.Argument(..., metavar="STUDY.toml",
                                         help="The study file (docs/scaling.md), or a study "
                                              "directory's DIR/study.toml to resume it."),
        submit: str = typer.Option("local", "--submit", metavar="local|slurm",
                                   help="local: run the points one after another here; slurm: "
                                        "one sbatch job per point."),
        wait: bool = typer.Option(False, "--wait",
                                  help="With --submit slurm: wait until every job has "
                                       "finished.")):
    """Run every point of a study that is not done yet (resumable: done points are
    skipped, failed ones are run again in a new attempt folder, nothing is overwritten).
    Exits 1 if a point failed (with --submit slurm: was refused by sbatch or, with
    --wait, failed in its job); SIGINT, SIGTERM or SIGHUP stop the running point and
    end the run with 128 + the signal number."""
    from . import studydir
    from .runner import local as runner_local
    from .runner import processes
    from .runner import slurm as runner_slurm
    from .study import load_study

    if submit not in SUBMITS:
        raise UserError(f"--submit must be local or slurm, not {submit!r}")
    study = load_study(study_file)
    if submit == "slurm":  # before the study directory is made
        runner_slurm.check_controller()
    console = _console()
    signals = processes.StopSignals()
    with signals.active():
        try:
            with studydir.opened_for_run(study) as root:
                if submit == "local":
                    records = runner_local.run_local(study, root, study.workdir, console,
                                                     signals)
                    failed = [r for r in records if r["status"] != "done"]
                    console.print(f"{study.name}: {len(records)} point(s) run: "
                                  f"{len(records) - len(failed)} done, {len(failed)} failed; "
                                  f"results in {root}")
                else:
                    bad = runner_slurm.run_slurm(study, root, study.workdir, console, wait,
                                                 signals)
                    failed = bad
                    if wait:
                        console.print(f"{study.name}: {len(study.points()) - len(bad)} "
                                      f"point(s) done, {len(bad)} failed; results in {root}")
                    elif bad:
                        console.print(f"{study.name}: {len(bad)} point(s) not submitted")
        except processes.Interrupted as stop:
            if submit == "local":
                _say(f"mpiscope: stopped by {stop.name}: the point that was running is "
                     f"recorded as failed, no process of it is left; run again to resume "
                     f"({study.output})")
            else:
                _say(f"mpiscope: stopped by {stop.name}; the jobs submitted go on in Slurm "
                     f"(mpiscope scale status {study.output})")
            raise typer.Exit(128 + stop.signum) from None
    if failed:
        raise typer.Exit(1)


def _say(line: str) -> None:
    """A last line on stderr, which a hangup (SIGHUP) may have closed."""
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


@app.command()
def status(directory: str = typer.Argument(..., metavar="DIR", help="A study directory.")):
    """Show which points are done, failed, pending or running (asks squeue/sacct about
    Slurm jobs that have not finished)."""
    from rich.table import Table

    from . import studydir
    from .runner import slurm as runner_slurm

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
                                                    "models.png into OUTDIR (created if "
                                                    "missing)."),
           html: Optional[str] = typer.Option(None, "--html", metavar="FILE",
                                              help="Also write the tables and plots as one "
                                                   "offline HTML page (a new file)."),
           force: bool = typer.Option(False, "--force",
                                      help="Replace the --html file and the --plots images "
                                           "if they exist.")):
    """Tables (P, wall time, speedup, efficiency, MPI %, POP metrics, time per function),
    Amdahl and Karp-Flatt serial fractions, Extra-P models per function and the
    extrapolation to 10x and 100x the largest P."""
    from ..textout import json_safe
    from . import studydir
    from .report import tables
    from .report.build import build_scale_report

    study, root = studydir.open_study(directory)
    made = plots is not None and not Path(plots).exists()
    plot_dir = _check_outputs(plots, html, force)  # before anything is written
    try:
        rep = build_scale_report(study, root)
    except UserError:
        if made:  # leave no empty directory behind
            plot_dir.rmdir()
        raise
    if plot_dir is not None:
        from .report import plots as scale_plots
        try:
            written = scale_plots.write_all(rep, plot_dir)
        except OSError as err:
            raise UserError(f"cannot write the plots into {plot_dir}: "
                            f"{err.strerror or err}") from None
        for p in written:
            print(f"mpiscope: wrote {p}", file=sys.stderr)
    if html:
        from ..html import page
        from .report.html_page import document
        page.write(html, document(rep), force=force)
        print(f"mpiscope: wrote {html}", file=sys.stderr)
    if as_json:
        json.dump(json_safe(rep), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        tables.render(rep, _console())


def _check_outputs(plots: Optional[str], html: Optional[str], force: bool) -> Optional[Path]:
    """UserError unless every file the report would write can be written (and, without
    --force, does not exist); the plot directory, created."""
    targets = []
    if html:
        targets.append(Path(html))
        if not Path(html).resolve().parent.is_dir():
            raise UserError(f"cannot write {html}: {Path(html).resolve().parent} is not a "
                            f"directory")
        if Path(html).is_dir():
            raise UserError(f"--html {html} is a directory; give a file name")
    plot_dir = Path(plots) if plots else None
    if plot_dir is not None:
        if plot_dir.exists() and not plot_dir.is_dir():
            raise UserError(f"--plots {plots} is a file, not a directory")
        from .report.plots import PLOT_FILES  # matplotlib: imported only to draw

        targets += [plot_dir / name for name in PLOT_FILES]
    if not force:
        for t in targets:
            if t.exists():
                raise UserError(f"{t} exists; not overwriting it (choose another "
                                f"{'--html' if str(t) == html else '--plots'} or pass --force)")
    if plot_dir is not None:
        try:
            plot_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UserError(f"cannot create the plot directory {plots}: "
                            f"{err.strerror or err}") from None
        if not os.access(plot_dir, os.W_OK):
            raise UserError(f"cannot write into the plot directory {plots}")
    return plot_dir


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
    from . import studydir
    from .report import export as ex
    from .report.collect import collect

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
    from . import studydir
    from .runner import local as runner_local
    from .runner import processes

    study, root = studydir.open_study(directory)
    match = [p for p in study.points() if p.key == key]
    if not match:
        raise UserError(f"{key} is not a point of {root}")
    tries = [a for a in studydir.attempts(root, match[0]) if a.number == attempt]
    if not tries:
        raise UserError(f"{root}: {key} has no attempt {attempt}")
    if tries[0].record is not None:
        raise UserError(f"{tries[0].path} already has a record; not running it again")
    signals = processes.StopSignals()
    with signals.active():  # scancel, the time limit: SIGTERM to this batch step
        rec = runner_local.run_point(study, root, match[0], Path(workdir), tries[0], signals)
    try:
        signals.check()
    except processes.Interrupted as stop:
        _say(f"mpiscope: stopped by {stop.name}: {tries[0].path} recorded as failed, no "
             f"process of the point left")
        raise typer.Exit(128 + stop.signum) from None
    raise typer.Exit(0 if rec["status"] == "done" else 1)
