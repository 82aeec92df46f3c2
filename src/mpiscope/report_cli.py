"""`mpiscope report` (placeholder, owned by the reader/report work)."""

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def report(path: str):
        """Print the tables of a profile (not yet built)."""
        raise typer.Exit(1)
