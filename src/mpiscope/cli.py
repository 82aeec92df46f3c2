"""The `mpiscope` command: a thin layer that assembles each part's commands.

Each part owns its own CLI module (``report.cli``, ``run.launch``, ``place.cli``,
``bench.cli``); this file only mounts them and turns :class:`UserError` into a
one-line message and a non-zero exit.
"""

from __future__ import annotations

import sys

import typer

from . import __version__
from .errors import UserError
from .terminal import literal

app = typer.Typer(
    name="mpiscope",
    help="Measure, explain and fix the scaling of MPI applications.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # markdown: a docstring's single line breaks are wrapping, not layout
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool):
    if value:
        typer.echo(f"mpiscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")):
    """Measure, explain and fix the scaling of MPI applications."""


@app.command()
def path(what: str = typer.Argument("runtime", help="runtime, or a program such as examples/stencil, bench/p2p, tests/hello."),
         mpi: str = typer.Option(None, "--mpi", help="MPI build to use (default: the first built: "
                                 "openmpi, then mpich)."),
         ):
    """Print where a compiled part is: the runtime library (for LD_PRELOAD) or a program."""
    from . import native

    impls = native.available_impls()
    if not impls:
        raise UserError("mpiscope's native parts are not built: run scripts/setup.sh or pip install .")
    impl = mpi or impls[0]
    typer.echo(str(native.runtime_library(impl) if what == "runtime" else native.program(impl, what)))


def _mount():
    from .report import cli as report_cli
    from .run import launch
    from .spool import cli as merge_cli
    from .bench import cli as bench_cli
    from .compare import cli as compare_cli
    from .diagnose import cli as diagnose_cli
    from .export import cli as export_cli
    from .html import cli as html_cli
    from .place import cli as place_cli
    from .scale import cli as scale_cli
    from .tune import cli as tune_cli

    launch.register(app)
    report_cli.register(app)
    merge_cli.register(app)
    diagnose_cli.register(app)
    compare_cli.register(app)
    html_cli.register(app)
    export_cli.register(app)
    app.add_typer(place_cli.app, name="place")
    app.add_typer(bench_cli.app, name="bench")
    app.add_typer(scale_cli.app, name="scale")
    tune_cli.register(app)


_mount()


def _usage_line(err) -> str:
    """A click usage error as one line, like every other error of mpiscope
    (click's own form is three lines: usage, a hint, the error)."""
    ctx = getattr(err, "ctx", None)
    path = ctx.command_path if ctx is not None and ctx.command_path else "mpiscope"
    where = path.partition(" ")[2]
    return (f"mpiscope: error: {where + ': ' if where else ''}"
            f"{err.format_message().rstrip('.')} (see '{path} -h')")


def main(argv: list[str] | None = None) -> int:
    try:
        # With standalone_mode=False click returns (not raises) a command's typer.Exit code.
        from .run.launch import expand_bare_sample
        args = expand_bare_sample(sys.argv[1:] if argv is None else list(argv))
        rc = app(args=args, standalone_mode=False, prog_name="mpiscope")
    except UserError as err:
        print(f"mpiscope: error: {literal(err)}", file=sys.stderr)
        return err.exit_code
    except typer.Exit as ex:
        return ex.exit_code
    except typer.Abort:
        print("mpiscope: aborted", file=sys.stderr)
        return 130
    except Exception as err:  # click usage errors
        import click
        try:  # typer >= 0.16 vendors its own click
            from typer._click.exceptions import ClickException as _TyperClickException
        except ImportError:
            _TyperClickException = click.ClickException
        if isinstance(err, (click.ClickException, _TyperClickException)):
            if type(err).__name__ == "NoArgsIsHelpError":  # a bare group: its help is the answer
                err.show()
            else:
                print(_usage_line(err), file=sys.stderr)
            return err.exit_code
        raise
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":
    sys.exit(main())
