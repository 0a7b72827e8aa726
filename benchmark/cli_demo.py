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
    agent: Annotated[bool, typer.Option(
        "--agent", help="Instead: run the alignment-first scaffold on the example paper with a "
        "scripted model (no key) into OUT/agent and show each claim's verdict per check round.")]
    = False,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="With --agent: the sandbox backend, local or docker (default: the "
        "first available).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Score the bundled example paper's faithful and drifted reproductions (no network, no key,
    no docker) and write their score files and the HTML report; with --agent, watch the
    alignment-first scaffold reproduce it."""
    from sabench.benchmark.demo_run import run_demo

    if agent:
        if judge is not None:  # the agent demo's record is scored as its matrix says
            raise typer.BadParameter("--judge goes with the scoring demo, not --agent",
                                     param_hint="--judge")
        agent_demo(out / "agent", backend, as_json)
        return
    if backend is not None:
        raise typer.BadParameter("--backend goes with --agent", param_hint="--backend")
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


def agent_demo(out: Path, backend: str | None, as_json: bool) -> None:
    from sabench.benchmark.demo_agent import claim_rows, run_agent_demo

    result = run_agent_demo(out, backend)
    alignment = result.alignment
    if as_json:
        typer.echo(json.dumps({
            "model": result.model_spec, "scripted": True, "backend": result.backend,
            "out": str(result.out), "status": result.record.get("status"),
            "stop_reason": alignment.get("stop_reason"), "rounds": alignment.get("rounds"),
            "passing_per_check": alignment.get("passing_per_check"),
            "score": result.record.get("overall_score"),
            "report_html": str(result.report_html) if result.report_html else None,
            "claims": claim_rows(alignment)}, indent=1))
        return
    console.print("model: SCRIPTED — the demo's written replies (benchmark/demo/replies.yaml), "
                  "not a language model; the graph, sandbox, check and repair are real "
                  f"(sandbox: {result.backend})", highlight=False)
    console.print(verdict_table(claim_rows(alignment)))
    passing = alignment.get("passing_per_check") or []
    console.print(f"stopped: {alignment.get('stop_reason')} after {alignment.get('rounds')} "
                  f"repair round(s); claims passing per check: "
                  f"{' -> '.join(str(n) for n in passing)} of {len(alignment.get('claims') or [])}",
                  highlight=False)
    score = _cell(result.record.get("overall_score"))
    console.print(f"offline score of the final repository: {score} (the official judge's "
                  "strict scale, as in `sabench demo`)", highlight=False)
    console.print(f"repository: {result.repo}", highlight=False)
    if result.report_html is not None:
        console.print(f"HTML report: {result.report_html} (the run page shows every claim's "
                      "verdict per check)", highlight=False)


def verdict_table(rows: list[dict]) -> Table:
    """Each claim's verdict at each check, and why a check failed it."""
    checks = max((len(r["verdicts"]) for r in rows), default=0)
    table = Table(title="alignment-first on SmoothLR: each claim at each check")
    table.add_column("claim")
    for number in range(1, checks + 1):
        table.add_column(f"check {number}", justify="center")
    table.add_column("code")
    table.add_column("why a check failed it")
    for row in rows:
        marks = ["pass" if v else "[bold red]FAIL[/]" for v in row["verdicts"]]
        marks += [""] * (checks - len(marks))
        why = next((r for r in row["failed_because"] if r), [])
        table.add_row(row["id"], *marks, row["location"], "; ".join(why)[:90])
    return table


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
