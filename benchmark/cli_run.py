"""`sabench run SPEC --out DIR`: a matrix of models × scaffolds × papers, resumable."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:
    from sabench.benchmark.matrix import Matrix
    from sabench.benchmark.runner import PlannedRun

console = Console(stderr=True)
#: A dry run lists the runs one per line up to this many (--json always lists them all).
LIST_RUNS = 50


class ExecutorName(StrEnum):
    LOCAL = "local"
    RAY = "ray"


def run(
    spec: Annotated[Path, typer.Argument(help="The matrix spec (YAML): models, scaffolds, "
                                              "papers, repeats, budget, sandbox, judge.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder: runs/, scores/, "
                                                    "records/ (rerun to resume).")],
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="Runs at once (default: the spec's `jobs`).")] = None,
    executor: Annotated[ExecutorName | None, typer.Option(
        "--executor", help="local (process pool) or ray (default: the spec's).")] = None,
    ray_address: Annotated[str | None, typer.Option(
        "--ray-address", help="A Ray cluster (default: start a local instance).")] = None,
    papers: Annotated[Path | None, typer.Option(
        "--papers", help="The dataset folder, instead of the spec's papers.dataset.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="List the runs and estimate their tokens and dollars from recorded "
                          "usage; run nothing.")] = False,
    recorded: Annotated[Path | None, typer.Option(
        "--recorded", help="Recorded transcripts for --dry-run (default: transcripts/ beside "
                           "the dataset's papers/).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run every model × scaffold × paper of a matrix spec in the evaluation graph; a rerun
    skips finished runs and resumes the others from their checkpoints."""
    from sabench.benchmark.matrix import load_matrix

    matrix = load_matrix(spec, dataset=papers)
    overrides: dict[str, Any] = {"jobs": jobs, "executor": executor and executor.value,
                                 "ray_address": ray_address}
    updates = {k: v for k, v in overrides.items() if v is not None}
    if updates:
        matrix = type(matrix)(spec=matrix.spec.model_copy(update=updates), source=matrix.source,
                              dataset=matrix.dataset, paper_ids=matrix.paper_ids)
    if dry_run:
        show_plan(matrix, out, recorded, as_json)
        return
    summary = execute(matrix, out, as_json)
    if summary["failed"]:
        console.print(f"[red]error:[/red] {summary['failed']} of {summary['ran']} runs failed; "
                      f"their records are in {out / 'records'} (run again to resume them)",
                      highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def execute(matrix: Matrix, out: Path, as_json: bool) -> dict[str, Any]:
    """Run the matrix with a progress bar (one line per finished run)."""
    from sabench.benchmark.runner import run_matrix

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, transient=True,
                        disable=not console.is_terminal)
    bar = progress.add_task("runs", total=None)

    def planned(runs: list[PlannedRun]) -> None:
        todo = sum(p.state != "done" for p in runs)
        progress.update(bar, total=todo)
        console.print(f"{matrix.spec.name}: {len(runs)} runs, {len(runs) - todo} finished "
                      f"already, {todo} to run ({matrix.spec.executor}, "
                      f"{matrix.spec.jobs} at once)", highlight=False, soft_wrap=True)

    def done(result: dict[str, Any]) -> None:
        progress.advance(bar)
        console.print(result_line(result), highlight=False, soft_wrap=True)

    with progress:
        summary = run_matrix(matrix, out, on_plan=planned, on_done=done).as_dict()
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=1, default=str) + "\n")
    else:
        console.print(f"{summary['ran']} runs in {summary['wall_s']:.1f}s: {summary['ok']} ok, "
                      f"{summary['stopped']} stopped, {summary['failed']} failed, "
                      f"{summary['skipped']} skipped; scores in {out / 'scores'}",
                      highlight=False, soft_wrap=True)
    return summary


def result_line(result: dict[str, Any]) -> str:
    score = result.get("overall_score")
    tail = f"score {score:.3f}" if isinstance(score, float) else (result.get("error") or "")
    return (f"{result['key']}: {result['status']} ({result['stop_reason']}) · "
            f"{result.get('requests') or 0} requests · {result['input_tokens']:,} in / "
            f"{result['output_tokens']:,} out · ${result.get('dollars') or 0.0:.4f} · "
            f"{result['task_s']:.1f}s · {tail}")


def show_plan(matrix: Matrix, out: Path, recorded: Path | None, as_json: bool) -> None:
    """The runs, their state in `out`, and the estimates (per run, per config, in total)."""
    from sabench.benchmark.runner import plan_runs
    from sabench.benchmark.runner_estimates import estimate_matrix, totals

    estimates = estimate_matrix(matrix, recorded)
    runs = [{"config": p.cell.config, "paper_id": p.cell.paper_id, "seed": p.cell.seed,
             "model": p.cell.model.spec, "scaffold": p.cell.scaffold.name, "state": p.state,
             "estimate": estimates[p.cell.key].as_dict()}
            for p in plan_runs(matrix, out.resolve())]
    configs = {name: totals(estimates[c.key] for c in matrix.cells() if c.config == name)
               for name in matrix.configs()}
    report = {"matrix": matrix.spec.name, "runs": runs, "configs": configs,
              "totals": totals(list(estimates.values()))}
    if as_json:
        sys.stdout.write(json.dumps(report, indent=1) + "\n")
        return
    if len(runs) <= LIST_RUNS:
        for run in runs:
            console.print(run_line(run), highlight=False, soft_wrap=True)
    else:
        console.print(f"{len(runs)} runs (--json lists each)", highlight=False)
    # Not on a terminal (a log, a pipe) the table gets room instead of rich's 80 columns.
    wide = console if console.is_terminal else Console(stderr=True, width=160)
    wide.print(plan_table(report))


def run_line(run: dict[str, Any]) -> str:
    estimate = run["estimate"]
    tokens_in = "?" if estimate["input_tokens"] is None else f"{estimate['input_tokens']:,}"
    cost = "unpriced" if estimate["dollars"] is None else f"${estimate['dollars']:,.2f}"
    return (f"{run['config']}/{run['paper_id']} ({run['state']}): {tokens_in} tokens in, "
            f"{cost} · {estimate['basis']}")


def plan_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"{report['matrix']}: {len(report['runs'])} runs, estimated from "
                        "recorded usage", caption="from: recorded = the same model, scaffold "
                        "and paper; model-mean = the model's other papers; scaffold-mean = "
                        "other models; scripted = the token counts a script states; none = no "
                        "estimate (not in the sums)")
    for column in ("config", "runs", "input tokens", "output tokens", "dollars", "from"):
        table.add_column(column, justify="left" if column in ("config", "from") else "right",
                         no_wrap=column != "from")
    for name, cell in report["configs"].items():
        table.add_row(name, str(cell["runs"]), tokens(cell), f"{cell['output_tokens']:,}",
                      dollars(cell), sources(cell))
    total = report["totals"]
    table.add_row("total", str(total["runs"]), tokens(total), f"{total['output_tokens']:,}",
                  dollars(total), sources(total))
    return table


def sources(cell: dict[str, Any]) -> str:
    """How the runs were estimated: `20 recorded, 10 model-mean` (see runner_estimates)."""
    return ", ".join(f"{count} {name}" for name, count in cell["sources"].items())


def tokens(cell: dict[str, Any]) -> str:
    return f"{cell['input_tokens']:,}"


def dollars(cell: dict[str, Any]) -> str:
    text = f"${cell['dollars']:,.2f}"
    return text + (f" (+{cell['unpriced']} unpriced)" if cell["unpriced"] else "")


def user_error_types() -> tuple[type[BaseException], ...]:
    """Errors of `sabench run` that are the user's input or environment (one line, exit 2)."""
    from sabench.benchmark.matrix import MatrixError
    from sabench.benchmark.runner import RunnerError

    return (MatrixError, RunnerError)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
