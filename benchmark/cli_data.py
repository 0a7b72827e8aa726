"""`sabench data ...`: download and validate the SA-Bench dataset."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sabench.benchmark.dataset import DatasetError, DatasetReport, check_dataset, resolve_papers_dir

DATASET_REPO = "kernel-14/SemanticAlign-Bench"


data_app = typer.Typer(help="Download and validate the SA-Bench dataset.", no_args_is_help=True)
console = Console()


def default_data_home() -> Path:
    """Where datasets go unless told otherwise: $SABENCH_HOME, else ~/.cache/sabench."""
    configured = os.environ.get("SABENCH_HOME")
    return Path(configured) if configured else Path.home() / ".cache" / "sabench"


def download_dataset(dest: Path, revision: str | None = None) -> Path:
    """Fetch the Hugging Face dataset into `dest`; a failed download is one DatasetError line."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        path = snapshot_download(repo_id=DATASET_REPO, repo_type="dataset", revision=revision,
                                 local_dir=str(dest))
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as exc:
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatasetError(f"{DATASET_REPO}: download into {dest} failed: {cause}") from exc
    return Path(path)


def _summary_table(report: DatasetReport) -> Table:
    table = Table(title=f"{len(report.papers)} papers, {report.total_claims:,} claims")
    table.add_column("dimension")
    table.add_column("claims", justify="right")
    for dim, count in report.counts().items():
        table.add_row(f"{dim.value} {dim.label}", f"{count:,}")
    return table


def _summary_json(report: DatasetReport) -> dict[str, object]:
    return {
        "papers": len(report.papers),
        "claims": report.total_claims,
        "per_dimension": {dim.value: n for dim, n in report.counts().items()},
        "per_paper": {pid: {d.value: n for d, n in spec.counts().items()}
                      for pid, spec in report.papers.items()},
        "errors": report.errors,
    }


@data_app.command("check")
def check(
    directory: Annotated[Path, typer.Argument(help="Dataset root or its papers/ folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Validate a dataset and print papers and claims per dimension; exit 1 on any problem."""
    report = check_dataset(resolve_papers_dir(directory))
    if as_json:
        print(json.dumps(_summary_json(report), indent=1))
    else:
        console.print(_summary_table(report))
        for line in report.errors:
            console.print(f"[red]error:[/red] {line}", highlight=False, soft_wrap=True)
    if report.errors:
        raise typer.Exit(1)


@data_app.command("pull")
def pull(
    dest: Annotated[Path | None, typer.Option(help="Target folder (default: cache).")] = None,
    revision: Annotated[str | None, typer.Option(help="Dataset revision or tag.")] = None,
) -> None:
    """Download the SA-Bench dataset from Hugging Face and validate it."""
    target = dest or default_data_home() / "SemanticAlign-Bench"
    root = download_dataset(target, revision)
    report = check_dataset(resolve_papers_dir(root))
    console.print(_summary_table(report))
    console.print(f"dataset in {resolve_papers_dir(root)}", highlight=False)
    if report.errors:
        for line in report.errors:
            console.print(f"[red]error:[/red] {line}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")



