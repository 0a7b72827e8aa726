"""The `sabench` command line: one typer app; each area registers its own commands."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console


def _flags_show_no_type() -> None:
    """typer's rich help prints a flag's type (`--json <bool>`) as if it took a value; it does
    not. Patched once, before any command exists, so it applies to every command's help."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: typer.Context) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_show_no_type()

app = typer.Typer(
    name="sabench",
    help="Measure how faithfully LLM agents reproduce ML papers (SA-Bench), claim by claim.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        sys.stdout.write(f"sabench {version('sabench')}\n")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version and exit.")] = False) -> None:
    """Measure how faithfully LLM agents reproduce ML papers (SA-Bench), claim by claim."""


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2, never a traceback."""


def user_errors() -> tuple[type[BaseException], ...]:
    """Error types that mean bad input or an unusable environment, not a bug of ours."""
    from sabench.agent.models import ModelConfigError
    from sabench.benchmark import cli_agent, cli_run, cli_verify
    from sabench.benchmark.dataset import DatasetError
    from sabench.benchmark.demo_run import DemoError
    from sabench.benchmark.scoring import JudgeSpecError, RunsRootError
    from sabench.sandbox.types import SandboxError
    from sabench.verifiers.judge import RepositoryError
    from sabench.verifiers.types import ResultFileError

    return (UsageError, DatasetError, ResultFileError, RepositoryError, FileNotFoundError,
            NotADirectoryError, ModelConfigError, JudgeSpecError, RunsRootError, DemoError,
            SandboxError, *cli_verify.user_error_types(), *cli_agent.user_error_types(),
            *cli_run.user_error_types())


def _register_all() -> None:
    """Each area adds its commands here, one line per module (keeps this file conflict-free)."""
    from sabench.benchmark import (
        cli_agent,
        cli_data,
        cli_demo,
        cli_report,
        cli_run,
        cli_sandbox,
        cli_score,
        cli_verify,
    )

    cli_data.register(app)
    cli_report.register(app)
    cli_score.register(app)
    cli_demo.register(app)
    cli_sandbox.register(app)
    cli_verify.register(app)
    cli_agent.register(app)
    cli_run.register(app)


def main() -> None:
    """Console entry point: run the app, turning user errors into a one-line message."""
    _register_all()
    try:
        app()
    except Exception as exc:  # not SystemExit: click ends every run with one
        # The error types are imported only here, so a normal run does not pay for them.
        if not isinstance(exc, user_errors()):
            raise
        err_console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
