"""`sabench data ...`: download and validate the SA-Bench dataset."""

from __future__ import annotations

import typer

data_app = typer.Typer(help="Download and validate the SA-Bench dataset.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
