"""`mpiscope place ...` (placeholder, owned by the placement work)."""

import typer

app = typer.Typer(help="Compute and judge rank orders that keep communicating ranks on one node.",
                  no_args_is_help=True)


@app.command()
def grid():
    """grid_order-compatible rank orders (not yet built)."""
    raise typer.Exit(1)
