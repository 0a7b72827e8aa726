"""`sabench demo`: score the bundled example reproductions offline and show the table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sabench.verifiers.spec import Dimension

console = Console()
# The calibrated judge imitates the official one, whose scale is strict: without this a
# faithful reproduction's ~0.35 reads as a failure.
SCALE_NOTE = ("The offline judge scores on the official LLM judge's strict scale (the best "
              "published configuration reaches 0.301 overall on SA-Bench): read the gap between "
              "the reproductions, not the absolute level.")


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def score_table(result) -> Table:  # noqa: ANN001 - DemoResult, imported lazily
    """Per-dimension scores of each reproduction, and the faithful-minus-drifted gap."""
    faithful, drifted = result.scores["faithful"], result.scores["drifted"]
    table = Table(title=f"SmoothLR example paper — judge: {result.judge}")
    table.add_column("Dimension")
    table.add_column("faithful", justify="right")
    table.add_column("drifted", justify="right")
    table.add_column("gap", justify="right")
    rows = [(f"{dim.value} {dim.label}", _dim(faithful, dim), _dim(drifted, dim))
            for dim in Dimension]
    rows.append(("Overall", faithful.overall_score, drifted.overall_score))
    for label, a, b in rows:
        gap = None if a is None or b is None else a - b
        style = "bold" if label == "Overall" else None
        table.add_row(label, _cell(a), _cell(b), _cell(gap), style=style)
    return table


def _dim(score, dim: Dimension) -> float | None:  # noqa: ANN001 - PaperScore
    result = score.dimensions.get(dim)
    return None if result is None else result.score


def summary(result) -> dict:  # noqa: ANN001 - DemoResult
    return {
        "judge": result.judge, "judge_note": result.judge_note,
        "scores_dir": str(result.scores_dir),
        "report_html": str(result.report_html) if result.report_html else None,
        "report_note": result.report_note,
        "scores": {name: {"overall": s.overall_score,
                          **{d.value: _dim(s, d) for d in Dimension}}
                   for name, s in result.scores.items()},
    }


def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")] = Path("sabench-demo"),
    judge: Annotated[str | None, typer.Option(
        help="offline or keyword (default: the offline judge if available, else keyword).")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Score the bundled example paper's faithful and drifted reproductions (no network, no key,
    no docker) and write their score files and the HTML report."""
    from sabench.benchmark.demo_run import run_demo

    result = run_demo(out, judge)
    if as_json:
        typer.echo(json.dumps(summary(result), indent=1))
        return
    console.print(f"judge: {result.judge_note}", highlight=False)
    console.print(score_table(result))
    if result.judge.startswith("offline"):
        console.print(SCALE_NOTE, highlight=False)
    console.print(f"scores: {result.scores_dir}", highlight=False)
    if result.report_html is not None:
        console.print(f"HTML report: {result.report_html}", highlight=False)
    else:
        console.print(f"HTML report: not written — {result.report_note}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
