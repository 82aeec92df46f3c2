"""`mpiscope tune [--runs N] [--budget MIN] [--dir DIR] [--json] -- <launcher> <program> [args]`."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import UserError
from ..run.launch import mpi_option

DEFAULT_RUNS = 5


def default_dir(argv: list[str], impl: str | None = None) -> Path:
    """tune-<program> in the current directory (the program: the first word after the
    launcher's options)."""
    from ..run.launcher_args import parse

    try:
        prog = parse(argv, impl).program
    except UserError:
        prog = ()
    name = os.path.basename(prog[0]) if prog else os.path.basename(argv[0])
    return Path(f"tune-{re.sub(r'[^A-Za-z0-9_.-]', '_', name) or 'run'}")


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_interspersed_args": False,
                                   "ignore_unknown_options": True})
    def tune(
        command: List[str] = typer.Argument(..., metavar="-- LAUNCHER ARGS...",
                                            help="The launch command, e.g. "
                                                 "mpirun -n 16 ./app args."),
        runs: int = typer.Option(DEFAULT_RUNS, "--runs", metavar="N",
                                 help="Timed runs of the baseline and of each candidate, "
                                      "alternating (at least 2)."),
        budget: Optional[float] = typer.Option(None, "--budget", metavar="MINUTES",
                                               help="Start no run that would end more than "
                                                    "MINUTES after tune started; a candidate "
                                                    "left with fewer than 2 pairs of runs is "
                                                    "not kept. Run again to resume."),
        outdir: Optional[str] = typer.Option(None, "--dir", metavar="DIR",
                                             help="The tune directory: every run's profile "
                                                  "and output (default: tune-PROGRAM, after "
                                                  "the program's name). Resumable: runs "
                                                  "done are not run again."),
        mpi: Optional[str] = mpi_option(),
        only: Optional[str] = typer.Option(None, "--only", metavar="KIND,...",
                                           help="Try only these candidates: binding, "
                                                "omp-threads, eager-limit, rank-order, grid-order."),
        as_json: bool = typer.Option(False, "--json",
                                     help="Print the result as JSON (schema in docs/tune.md)."),
    ):
        """Run the program under mpiscope, diagnose it, and try each finding's mechanical
        fix (core binding, the eager limit, OMP_NUM_THREADS, a rank order from the measured
        traffic) in runs alternating with the baseline; keep a change only when the 95 %
        interval of its gain on the run's time (MPI_Init to MPI_Finalize) lies above 0 and
        the program's exit code and output are the baseline's. Prints each candidate's gain and the command, variables
        and files to use; never edits your files. Exits 0 when the tune ran (whatever it
        kept), 2 on bad input or a failing baseline, 128+N when stopped by signal N (run
        again to resume)."""
        import shutil

        from .. import native
        from ..scale.runner import processes as point_procs
        from ..terminal import console, literal
        from ..textout import json_safe
        from .render import render
        from .session import tune as run_tune

        if command and command[0] == "--":
            command = command[1:]
        argv = list(command)
        if not argv:
            raise UserError("no launch command: give one after --, e.g. "
                            "mpiscope tune -- mpirun -n 4 ./app")
        if runs < 2:
            raise UserError(f"--runs must be at least 2 (a gain needs 2 pairs of runs), not {runs}")
        if budget is not None and not budget > 0:
            raise UserError(f"--budget must be a positive number of minutes, not {budget:g}")
        if mpi is not None and mpi not in native.IMPLS:
            raise UserError(f"--mpi must be one of {', '.join(native.IMPLS)}, not {mpi!r}")
        if shutil.which(argv[0]) is None:
            how = "not executable" if os.path.exists(argv[0]) else "not found"
            raise UserError(f"launcher {how}: {argv[0]}")
        kinds = None
        if only is not None:
            from .candidates import KINDS
            kinds = [k.strip() for k in only.split(",") if k.strip()]
            bad = [k for k in kinds if k not in KINDS]
            if bad or not kinds:
                raise UserError(f"--only takes candidate kinds among {', '.join(KINDS)}, "
                                f"not {only!r}")
        impl, chosen = native.resolve_impl_and_why(argv, mpi)
        native.check_linkage(argv, impl, chosen)
        root = Path(outdir).resolve() if outdir else default_dir(argv, impl).resolve()
        say = (lambda m: print(f"mpiscope tune: {literal(m)}", file=sys.stderr, flush=True))
        signals = point_procs.StopSignals()
        with signals.active():
            try:
                result = run_tune(argv, root, runs, None if budget is None else budget * 60.0,
                                  impl, signals, say, kinds)
            except point_procs.Interrupted as stop:
                print(f"mpiscope: stopped by {stop.name}: the run that was going on is "
                      f"recorded as failed, no process of it is left; run the same command "
                      f"again to resume ({root})", file=sys.stderr)
                raise typer.Exit(128 + stop.signum)
        if as_json:
            json.dump(json_safe(result), sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            render(result, console(min_width=120))
