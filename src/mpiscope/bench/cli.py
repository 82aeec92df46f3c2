"""`mpiscope bench`: run a machine microkernel under a launcher, list them, plot results.

    mpiscope bench p2p --pairs 2 -- mpirun -n 4
    mpiscope bench startup --ranks 2,4,8 -- mpirun -n 2
    mpiscope bench plot a.json b.json -o ab.png

Each kernel's command is built from its row in ``kernels.py``, so the options
``--help`` lists are exactly the ones the C program takes.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperGroup

from ..errors import UserError
from . import kernels as K
from . import results

class _BenchGroup(TyperGroup):
    """Unknown kernels are user errors (one line), not click usage screens."""

    def resolve_command(self, ctx, args):
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            raise UserError(f"unknown kernel '{args[0]}' (known: {', '.join(K.KERNELS)}; "
                            f"also: list, plot)")
        return super().resolve_command(ctx, args)


app = typer.Typer(cls=_BenchGroup, help="Run the machine microbenchmarks of the case studies (docs/case-studies.md) and plot them. "
                       "Each kernel: mpiscope bench KERNEL OPTIONS -- LAUNCHER ARGS.",
                  no_args_is_help=True, rich_markup_mode="markdown")

_KIND_TYPE = {"int": Optional[int], "size": Optional[str], "float": Optional[float],
              "str": Optional[str], "flag": bool}


def _option_param(opt: K.Option) -> inspect.Parameter:
    helptext = opt.help + (f" (kernel default: {opt.default_text})" if opt.default_text else "")
    default = typer.Option(False if opt.kind == "flag" else None, f"--{opt.name}", help=helptext,
                           show_default=False)
    return inspect.Parameter(opt.name.replace("-", "_"), inspect.Parameter.KEYWORD_ONLY,
                             default=default, annotation=_KIND_TYPE[opt.kind])


def _driver_params(kern: K.Kernel) -> list[inspect.Parameter]:
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter("output", kw, annotation=Optional[Path], default=typer.Option(
            None, "--output", "-o", help="Result file (default: bench-KERNEL-MPI-TIME.json in "
                                         "the current directory, never an existing name).")),
        inspect.Parameter("force", kw, annotation=bool, default=typer.Option(
            False, "--force", help="Overwrite --output if it exists.")),
        inspect.Parameter("mpi", kw, annotation=Optional[str], default=typer.Option(
            None, "--mpi", help="MPI of the launcher (openmpi, mpich); default: detected from "
                                "the launcher's name or libraries.")),
        inspect.Parameter("timeout", kw, annotation=float, default=typer.Option(
            600.0, "--timeout", help="Seconds allowed per launch; then the launch is killed "
                                     "and the result kept as partial.")),
    ]
    if kern.multi_ranks:
        params.append(inspect.Parameter("ranks", kw, annotation=Optional[str], default=typer.Option(
            None, "--ranks", help="Rank counts, e.g. 2,4,8: the launcher's -n is replaced and "
                                  "the kernel run once per count.")))
    if kern.needs_dir:
        params.append(inspect.Parameter("dir", kw, annotation=Optional[str], default=typer.Option(
            None, "--dir", help="Existing directory to write in (default: a temporary "
                                "directory under the current one, removed afterwards).")))
    return params


def _kernel_args(kern: K.Kernel, values: dict) -> tuple[list[str], dict]:
    """The C program's arguments and the options as given (for the result)."""
    args, given = [], {}
    for opt in K.common_options(kern) + kern.options:
        value = values.get(opt.name.replace("-", "_"))
        if value is None or value is False:
            continue
        if opt.kind == "size":
            value = K.parse_size(value)
        if opt.kind == "flag":
            args.append(f"--{opt.name}")
        else:
            args += [f"--{opt.name}", str(value)]
        given[opt.name] = value
    lo, hi = given.get("min-size"), given.get("max-size")
    if lo is not None and hi is not None and lo > hi:
        raise UserError(f"--min-size {lo} is larger than --max-size {hi}")
    return args, given


def _check_pairs(kern: K.Kernel, given: dict, launcher: list[str]) -> None:
    from .driver import ranks_in
    n = ranks_in(launcher)
    pairs = given.get("pairs")
    if pairs is not None and pairs < 1:
        raise UserError(f"--pairs {pairs}: at least 1 pair is needed")
    if kern.name == "p2p" and pairs is not None and n is not None and 2 * pairs > n:
        raise UserError(f"--pairs {pairs} needs {2 * pairs} ranks, the launcher starts {n}")


def _summary(result: dict, path: Path) -> None:
    from ..terminal import console
    con = console(stderr=True)
    runs = ", ".join(str(r["nranks"]) for r in result["runs"])
    con.print(f"{result['kernel']} on {result['mpi']['impl']}: "
              f"{len(result['rows'])} rows from run(s) at P = {runs or '-'}", highlight=False)
    for note in result["notes"]:
        con.print(f"note: {note}", highlight=False)
    print(path)


def _make_kernel_command(kern: K.Kernel):
    def command(ctx: typer.Context, **values):
        launcher = list(ctx.args)
        from . import driver
        if values["timeout"] <= 0:
            raise UserError(f"--timeout {values['timeout']:g}: must be more than 0 seconds")
        impl = driver.resolve_impl(launcher, values.pop("mpi"))
        args, given = _kernel_args(kern, values)
        _check_pairs(kern, given, launcher)
        ranks = values.get("ranks")
        ranks_list = K.parse_int_list(ranks, "--ranks") if ranks else None
        if ranks_list:
            given["ranks"] = ranks_list
        out_path = values["output"]
        if out_path is not None:
            if out_path.exists() and not values["force"]:
                raise UserError(f"{out_path} exists; choose another --output or pass --force")
            results.check_writable(out_path)
        result = driver.run_kernel(kern, launcher, args, impl=impl, ranks=ranks_list,
                                   cli_options=given, timeout=values["timeout"],
                                   io_dir=values.get("dir"), keep=bool(values.get("keep")))
        path = out_path if out_path is not None else results.default_path(result)
        if not result["rows"]:  # nothing measured: nothing to keep
            if result["errors"]:
                why = result["errors"][0]
            elif result["notes"]:
                why = "; ".join(result["notes"])
            else:
                why = "the kernel printed no results"
            raise UserError(f"{kern.name}: {why}")
        results.save(result, path, force=values["force"])
        if result["partial"]:
            why = result["errors"][0] if result["errors"] else "incomplete run"
            raise UserError(f"{kern.name}: {why}; partial results kept in {path}")
        _summary(result, path)

    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=typer.Context)]
    params += [_option_param(o) for o in K.common_options(kern) + kern.options]
    params += _driver_params(kern)
    command.__signature__ = inspect.Signature(params)
    command.__name__ = kern.name
    doc = (f"{kern.summary[0].upper()}{kern.summary[1:]} ({kern.study}). "
           f"Defaults: {kern.defaults}. Usage: mpiscope bench {kern.name} OPTIONS -- "
           f"LAUNCHER ARGS")
    app.command(name=kern.name, help=doc,
                context_settings={"allow_extra_args": True})(command)


for _kern in K.KERNELS.values():
    _make_kernel_command(_kern)


@app.command("list")
def list_kernels():
    """List the kernels, what each measures and its own options."""
    from rich.console import Console
    from rich.table import Table
    table = Table(show_lines=False)
    table.add_column("kernel")
    table.add_column("measures")
    table.add_column("options")
    table.add_column("case study")
    for kern in K.KERNELS.values():
        opts = " ".join(f"--{o.name}" for o in kern.options)
        if kern.multi_ranks:
            opts = (opts + " --ranks").strip()
        if kern.needs_dir:
            opts = (opts + " --dir").strip()
        table.add_row(kern.name, kern.summary, opts, kern.study)
    Console().print(table)


@app.command("plot")
def plot_results(
    files: List[Path] = typer.Argument(..., metavar="RESULT.json...",
                                       help="One or more results of the same kernel, drawn "
                                            "side by side (e.g. two MPIs or two machines)."),
    output: Path = typer.Option(..., "--output", "-o", help="Image to write (.png, .pdf, .svg)."),
    force: bool = typer.Option(False, "--force", help="Overwrite --output if it exists."),
):
    """Draw benchmark results; several results of one kernel are placed side by side."""
    from . import plot
    loaded = [results.load(f) for f in files]
    if output.exists() and not force:
        raise UserError(f"{output} exists; choose another --output or pass --force")
    results.check_writable(output)
    plot.plot_results(loaded, output)
    print(output)
