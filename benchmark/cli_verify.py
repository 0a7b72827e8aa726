"""`sabench calibrate` (fit the offline judge) and `sabench agreement` (compare a judge with the
official scores on a runs root)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sabench.benchmark.cli_score import EvidenceOption, ThresholdOption, judge_options

console = Console(stderr=True)

RunsRootArg = Annotated[Path, typer.Argument(
    help="Runs root: runs/index.json, runs/<config>/<paper>/repo/, official_scores/.")]
PapersOption = Annotated[Path, typer.Option("--papers", help="The dataset (papers/ folder).")]
JobsOption = Annotated[int, typer.Option("--jobs", help="Worker processes (0: up to 2).")]


def calibrate(
    runs_root: RunsRootArg,
    papers: PapersOption,
    out: Annotated[Path | None, typer.Option(
        "-o", "--out", help="Where to write the calibration (default: the committed file).",
        show_default=False)] = None,
    folds: Annotated[int, typer.Option(
        "--folds", help="Also report leave-papers-out cross-validation with K folds.")] = 0,
    jobs: JobsOption = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Fit the offline judge on the complete runs of RUNS_ROOT and write its parameters."""
    from sabench.benchmark.calibrate import calibrate as run_calibration
    from sabench.verifiers.offline import CALIBRATION_FILE

    target = out or CALIBRATION_FILE
    summary = run_calibration(runs_root, papers, target, jobs or None, folds)
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=1) + "\n")
        return
    console.print(f"fitted {summary['n_parameters']} parameters on {summary['n_runs']} runs "
                  f"({summary['n_claims']} claims) -> {target}")
    if "cross_validation" in summary:
        cv = summary["cross_validation"]
        console.print(f"leave-papers-out: run Spearman {cv['run_spearman']}, claim Spearman "
                      f"{cv['claim_spearman']}, config Kendall {cv['config_kendall']}, "
                      f"config MAE {cv['config_mae']}")


def agreement(
    runs_root: RunsRootArg,
    papers: PapersOption,
    judge: Annotated[str, typer.Option(
        "--judge", help="offline | keyword | llm:<provider:model> | hybrid:<provider:model>")]
    = "offline",
    folds: Annotated[int, typer.Option(
        "--folds", help="Leave-papers-out cross-validation of the offline calibration.")] = 0,
    jobs: JobsOption = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", envvar="OPENAI_BASE_URL",
        help="Server URL for openai-compatible judge models (default: $OPENAI_BASE_URL).")]
    = None,
    threshold: ThresholdOption = None,
    evidence: EvidenceOption = None,
) -> None:
    """Score the complete runs of RUNS_ROOT with a judge and compare with the official scores.

    Offline and hybrid judges emulate each run's own official judge (its `judge_model`)."""
    from sabench.benchmark.agreement import run_agreement

    result = run_agreement(runs_root, papers, judge, folds or None, jobs or None,
                           base_url=base_url,
                           judge_options=judge_options(None, threshold, evidence))
    if result.get("calibration_overlap"):
        console.print(f"[yellow]warning:[/yellow] the calibration was fitted on "
                      f"{len(result['calibration_overlap'])} of these papers: the figures "
                      f"are in sample (use --folds K for held-out figures)", highlight=False)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=1) + "\n")
        return
    for key in ("n_runs", "n_claims", "excluded_incomplete", "run_spearman", "claim_spearman",
                "claim_mae", "config_kendall", "config_mae", "per_dimension", "fail_recall",
                "fail_precision", "claim_errors", "evaluation"):
        if key in result:
            console.print(f"{key:20s} {result[key]}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate)
    app.command("agreement")(agreement)


def user_error_types() -> tuple[type[BaseException], ...]:
    """The one-line error types of these commands (added to `cli.user_errors()`)."""
    from sabench.benchmark.calibrate import RunsIndexError
    from sabench.verifiers.offline import CalibrationError

    return (RunsIndexError, CalibrationError)
