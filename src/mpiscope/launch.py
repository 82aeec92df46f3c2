"""`mpiscope run`: launch an MPI program with the runtime preloaded. (placeholder, owned by the runtime/report work)"""

import typer


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def run(ctx: typer.Context):
        """Run an MPI launch command with the mpiscope runtime preloaded (not yet built)."""
        raise typer.Exit(1)
