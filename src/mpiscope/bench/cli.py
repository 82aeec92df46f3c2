"""`mpiscope bench ...` (placeholder, owned by the benchmark work)."""

import typer

app = typer.Typer(help="Run the machine microbenchmarks of the seed studies and plot them.",
                  no_args_is_help=True)


@app.command()
def p2p():
    """Ping-pong latency and bandwidth (not yet built)."""
    raise typer.Exit(1)
