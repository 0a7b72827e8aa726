"""`sabench score` (one repository) and `sabench score-runs` (a whole runs root)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sabench.benchmark.dataset import resolve_papers_dir
from sabench.benchmark.scoring import (
    RunOutcome,
    ScoreRunsSummary,
    estimate,
    make_judge,
    paper_spec,
    score_repo,
    score_runs,
    usage_recorder,
    write_score,
)
from sabench.verifiers.types import PaperScore

console = Console(stderr=True)

JudgeOption = Annotated[str, typer.Option(
    "--judge", help="offline | keyword | llm:<provider:model> | hybrid:<provider:model>")]
BaseUrlOption = Annotated[str | None, typer.Option(
    "--base-url", envvar="OPENAI_BASE_URL",
    help="Server URL for openai-compatible models (default: $OPENAI_BASE_URL).")]
ThresholdOption = Annotated[float | None, typer.Option(
    "--threshold", min=0.0, max=1.0,
    help="Hybrid judge: send claims whose offline confidence is below this (default 0.5).")]
EmulateOption = Annotated[str | None, typer.Option(
    "--emulate", help="Offline and hybrid judges: the judge model to emulate "
                      "(gpt-5.5, deepseek-v4-pro; default: the stricter one).")]
EvidenceOption = Annotated[str | None, typer.Option(
    "--evidence", help="LLM and hybrid judges: 'ranked' (our retrieval, default) or 'official' "
                       "(the official judge's search: its gates, and only the two windows its "
                       "LLM is shown).")]
PapersOption = Annotated[Path, typer.Option(
    "--papers", help="The dataset: papers/ or the folder that holds it.")]


def input_warnings(paper_dir: Path, repo: Path) -> list[str]:
    """What makes a score of zeros expected rather than informative."""
    found = []
    if not (paper_dir / "paper.md").is_file():
        found.append(f"{paper_dir} has no paper.md: claims are judged without the paper's "
                     f"context")
    if not any(is_text(path) for path in repo.rglob("*") if path.is_file()):
        found.append(f"{repo} holds no text files (empty, or binary only): every claim "
                     f"scores 0")
    return found


def is_text(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError:
        return False
    return bool(head) and b"\0" not in head


def score(
    paper: Annotated[str, typer.Option("--paper", help="Paper id, e.g. adjoint-matching.")],
    repo: Annotated[Path, typer.Option("--repo", help="The repository to score.")],
    papers: PapersOption,
    judge: JudgeOption = "offline",
    base_url: BaseUrlOption = None,
    out: Annotated[Path | None, typer.Option(
        "-o", "--out", help="Write the result JSON here (default: print it).")] = None,
    estimate_only: Annotated[bool, typer.Option(
        "--estimate", help="Print requests, tokens and dollars it would cost; call no model.")]
    = False,
    emulate: EmulateOption = None,
    threshold: ThresholdOption = None,
    evidence: EvidenceOption = None,
) -> None:
    """Score one repository against one paper's claims (official-compatible JSON)."""
    spec = paper_spec(papers, paper)
    recorder = usage_recorder(judge)
    chosen = make_judge(judge, base_url, recorder=recorder, **judge_options(emulate, threshold,
                                                                     evidence))
    if estimate_only:
        sys.stdout.write(json.dumps(estimate(spec, repo, chosen), indent=1) + "\n")
        return
    result = score_repo(spec, repo, chosen, recorder)
    for warning in input_warnings(resolve_papers_dir(papers) / paper, repo):
        console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False, soft_wrap=True)
    if out is None:
        sys.stdout.write(result.model_dump_json(indent=1, exclude_none=True) + "\n")
        return
    write_score(result, out)
    console.print(_score_table(result))
    usage = getattr(result, "usage", None)
    if usage:
        console.print(f"{usage['calls']} model calls, {usage['input_tokens']:,} tokens in, "
                      f"{usage['output_tokens']:,} out, ${usage['dollars']:.4f}"
                      + (f" ({usage['unpriced_calls']} calls unpriced)"
                         if usage["unpriced_calls"] else ""))
    console.print(f"wrote {out}")


def judge_options(emulate: str | None, threshold: float | None,
                  evidence: str | None = None) -> dict[str, object]:
    """The judge options the CLI was given (options a judge kind does not take are ignored)."""
    options: dict[str, object] = {"emulate": emulate} if emulate else {}
    if threshold is not None:
        options["threshold"] = threshold
    if evidence is not None:
        options["evidence"] = evidence
    return options


def _score_table(result: PaperScore) -> Table:
    table = Table(title=f"{result.paper_id} ({result.model})")
    for column in ("dimension", "score", "claims", "errors"):
        table.add_column(column)
    for dim, res in result.dimensions.items():
        table.add_row(str(dim), _fmt(res.score), str(res.total_claims), str(res.errors))
    table.add_row("overall", _fmt(result.overall_score), "", str(result.errors))
    return table


def _fmt(value: float | None) -> str:
    return "error" if value is None else f"{value:.3f}"


def score_runs_command(
    runs_root: Annotated[Path, typer.Argument(
        help="Folder filled by unpack.sh (runs/index.json).")],
    papers: PapersOption,
    out: Annotated[Path, typer.Option("--out", help="SCORES_DIR to write.")],
    judge: JudgeOption = "offline",
    base_url: BaseUrlOption = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Worker processes.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    emulate: EmulateOption = None,
    threshold: ThresholdOption = None,
    evidence: EvidenceOption = None,
) -> None:
    """Score every run of a runs root into SCORES_DIR (resumable: scored runs are skipped)."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=as_json) as progress:
        task = progress.add_task("scoring", total=None)

        def done(outcome: RunOutcome) -> None:
            progress.update(task, advance=1,
                            description=f"{outcome.config}/{outcome.paper_id}")
            if outcome.status == "failed":
                progress.console.print(f"[red]failed[/red] {outcome.config}/{outcome.paper_id}: "
                                       f"{outcome.error}", highlight=False)

        summary = score_runs(runs_root, papers, judge, out, jobs=jobs, base_url=base_url,
                             on_done=done, on_total=lambda n: progress.update(task, total=n),
                             judge_options=judge_options(emulate, threshold, evidence))
    _report(summary, out, as_json)
    if summary.count("failed"):
        raise typer.Exit(1)


def _report(summary: ScoreRunsSummary, out: Path, as_json: bool) -> None:
    data = summary.as_dict()
    if as_json:
        sys.stdout.write(json.dumps(data, indent=1) + "\n")
        return
    usage = data["usage"]
    console.print(f"scored {data['scored']}, skipped {data['skipped']} (already scored), "
                  f"failed {data['failed']}; claim errors {data['claim_errors']}; "
                  f"{usage['calls']} model calls, ${usage['dollars']:.4f} -> {out}")


def taxonomy_command(
    scores_dir: Annotated[Path, typer.Argument(
        help="Official result files: <config>/<paper_id>.json (e.g. the release's).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print everything as JSON.")] = False,
) -> None:
    """Failure taxonomy of a judge's reasoning texts, compared with the published figures."""
    from sabench.verifiers.taxonomy import MODE_NAMES, release_comparison

    if not scores_dir.is_dir():
        raise FileNotFoundError(f"{scores_dir}: not a folder of result files")
    if not any(scores_dir.glob("*/*.json")):
        raise FileNotFoundError(f"{scores_dir}: no result files (<config>/<paper_id>.json) "
                                f"to read")
    result = release_comparison(scores_dir)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=1) + "\n")
        return
    out = Console()
    table = Table(title=f"Zero-scored claims ({result['zero']['n']:,}) by category")
    for column in ("category", "ours", "published"):
        table.add_column(column)
    published = result["published_zero"]
    for category, share in result["zero"]["categories"].items():
        theirs = published.get(category)
        table.add_row(category, f"{share:.1%}", "" if theirs is None else f"{theirs:.1%}")
    out.print(table)
    modes = Table(title=f"Low verdicts ({result['low']['n']:,}) by rule mode")
    for column in ("mode", "name", "ours", "failure-patterns.md"):
        modes.add_column(column)
    for mode, share in result["low"]["modes"].items():
        theirs = result["failure_patterns_low"].get(mode)
        modes.add_row(mode, MODE_NAMES[mode], f"{share:.1%}",
                      "" if theirs is None else f"{theirs:.1%}")
    out.print(modes)
    out.print(result["explanation"], soft_wrap=True, highlight=False)


def register(app: typer.Typer) -> None:
    """Add `score`, `score-runs` and `taxonomy` to the CLI."""
    app.command("score")(score)
    app.command("score-runs")(score_runs_command)
    app.command("taxonomy")(taxonomy_command)
