"""`sabench report SCORES_DIR`: the paper's tables (and more) as Markdown, JSON or HTML."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

# Literal defaults (equal to sabench.benchmark.stats'): importing stats would load numpy at the
# start of every `sabench` command, not only this one.
DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 2000


class ReportFormat(StrEnum):
    MD = "md"
    JSON = "json"
    HTML = "html"


def render(report: dict, fmt: ReportFormat) -> str:
    """The report in one format (HTML imports matplotlib, so only when asked for)."""
    if fmt is ReportFormat.JSON:
        return json.dumps(report, indent=1, ensure_ascii=False) + "\n"
    if fmt is ReportFormat.HTML:
        from sabench.benchmark.report_html import render_html

        return render_html(report)
    from sabench.benchmark.report import render_markdown

    return render_markdown(report) + "\n"


def report(
    scores_dir: Annotated[Path, typer.Argument(
        help="Folder of <config>/<paper_id>.json score files with configs.json.")],
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="Output format.")]
    = ReportFormat.MD,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write to this file (default: standard output).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = DEFAULT_SEED,
    resamples: Annotated[int, typer.Option(
        min=100, help="Bootstrap resamples per interval.")] = DEFAULT_RESAMPLES,
    taxonomy: Annotated[bool, typer.Option(
        "--taxonomy", help="Add the failure taxonomy of every low claim (reads each judge's "
        "reasoning when a verdict has no category; a few seconds on the release) and compare "
        "it with the published distribution.")] = False,
) -> None:
    """Tables of a scores folder: configuration matrix, marginals, dimension statistics,
    headline, bootstrap intervals, paired scaffold comparisons, failed judgements; for the
    output of `sabench run`, usage and cost per configuration and (HTML with -o) a page per
    run."""
    from sabench.benchmark.report import make_report

    extra = frozenset({"failure_taxonomy"} if taxonomy else ())
    text = render(make_report(scores_dir, seed=seed, resamples=resamples, extra=extra), fmt)
    if output is None:
        sys.stdout.write(text)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    if fmt is ReportFormat.HTML:
        text = with_run_pages(scores_dir, output, text)
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}", err=True)


def with_run_pages(scores_dir: Path, output: Path, html: str) -> str:
    """Write a page per run beside the report when `sabench run` left records (and link
    them from the report); otherwise the report is the one self-contained file."""
    from sabench.benchmark.report_runs import link_run_pages, load_records, write_run_pages

    if not load_records(scores_dir):
        return html
    pages = write_run_pages(scores_dir, output)
    typer.echo(f"wrote {pages} run pages in {output.stem}-runs/", err=True)
    return link_run_pages(html, output, pages)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
