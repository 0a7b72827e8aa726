"""`sabench reproduce`, `sabench replay` and `sabench scaffolds`: run agents on papers."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.live import Live
from rich.text import Text

from sabench.agent.types import Budget

console = Console(stderr=True)

BackendOption = Annotated[str, typer.Option(
    "--backend", help="Sandbox backend: docker or local (bubblewrap).")]
ThreadOption = Annotated[str | None, typer.Option(
    "--thread", help="Checkpoint thread id (default: <scaffold>:<paper id>); the same --out "
                     "and --thread resume a run.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


class LiveStatus:
    """One status line: phase, step, tokens, dollars, elapsed (rich Live on a terminal)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.state: dict[str, Any] = {"phase": "start", "step": 0, "tokens": 0, "dollars": 0.0}
        self.started = time.monotonic()
        self.live = Live(self.render(), console=console, transient=True,
                         refresh_per_second=4) if console.is_terminal else None

    def render(self) -> Text:
        s = self.state
        return Text(f"{self.label}  phase {s['phase']}  step {s['step']}  "
                    f"tokens {s['tokens']:,}  ${s['dollars']:.4f}  "
                    f"{time.monotonic() - self.started:.0f}s")

    def __call__(self, event: dict[str, Any]) -> None:
        self.state["phase"] = event.get("phase", self.state["phase"])
        self.state["step"] = event.get("step", self.state["step"])
        self.state["tokens"] += event.get("tokens") or 0
        self.state["dollars"] += event.get("dollars") or 0.0
        if self.live is not None:
            self.live.update(self.render())

    def __enter__(self) -> LiveStatus:
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()


def reproduce(
    paper_dir: Annotated[Path, typer.Argument(help="The paper's folder (paper.md, sau.json, "
                                                   "config.yaml).")],
    scaffold: Annotated[str, typer.Option("--scaffold", help="A registered scaffold "
                                                             "(sabench scaffolds).")],
    model: Annotated[str, typer.Option("--model", help="anthropic:<m>, openai:<m>, "
                                       "openai-compatible:<m> or replay:PATH.")],
    out: Annotated[Path, typer.Option("--out", help="The run's folder.")] = Path("out"),
    budget_dollars: Annotated[float | None, typer.Option(
        "--budget-dollars", min=0, help="Stop before a call once this much is spent.")] = None,
    budget_tokens: Annotated[int | None, typer.Option(
        "--budget-tokens", min=0, help="Stop before a call once this many tokens (in + out) "
                                       "are used.")] = None,
    max_minutes: Annotated[float | None, typer.Option(
        "--max-minutes", min=0, help="Stop before a call after this much active time.")] = None,
    thread: ThreadOption = None,
    judge: Annotated[str, typer.Option("--judge", help="offline | keyword | llm:<spec> | "
                                       "hybrid:<spec> | none")] = "offline",
    backend: BackendOption = "docker",
    base_url: Annotated[str | None, typer.Option(
        "--base-url", envvar="OPENAI_BASE_URL",
        help="Server URL for openai-compatible models (default: $OPENAI_BASE_URL).")] = None,
    checkpoint: Annotated[str | None, typer.Option(
        "--checkpoint", help="Checkpoint store: a SQLite path or a postgresql:// URL "
                             "(default: OUT/checkpoints.sqlite).")] = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", help="Scaffold option KEY=VALUE (JSON values), repeatable.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Reproduce a paper with a scaffold and a model; score it; rerun to resume."""
    from sabench.benchmark.reproduce import RunRequest
    from sabench.benchmark.reproduce import reproduce as run

    budget = Budget(dollars=budget_dollars, tokens=budget_tokens,
                    seconds=max_minutes * 60 if max_minutes is not None else None)
    request = RunRequest(paper_dir=paper_dir, scaffold=scaffold, model=model, out=out,
                         thread=thread, budget=budget, judge=None if judge == "none" else judge,
                         backend=backend, base_url=base_url, checkpoint=checkpoint,
                         options=parse_options(option or []))
    with LiveStatus(f"{scaffold} on {paper_dir.name}") as status:
        record = run(request, on_event=status)
    print_record(record, out, as_json)


def parse_options(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs; a value that parses as JSON is taken as JSON, else as a string."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--option {item!r}: expected KEY=VALUE")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def print_record(record: dict[str, Any], out: Path, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(record, indent=1, default=str) + "\n")
        return
    usage = record.get("usage") or {}
    score = record.get("overall_score")
    console.print(
        f"{record.get('scaffold')} · {record.get('status')} ({record.get('stop_reason')}) · "
        f"{record.get('requests')} requests · {usage.get('input_tokens', 0):,} in / "
        f"{usage.get('output_tokens', 0):,} out · ${usage.get('dollars', 0.0):.4f} · "
        f"{len(record.get('files') or [])} files"
        + (f" · score {score:.3f}" if score is not None else ""), highlight=False)
    console.print(f"repository in {out / 'repo'}, record in {out / 'record.json'}")


def replay(
    run_dir: Annotated[Path, typer.Argument(help="A recorded run: transcripts/<config>/"
                                                 "<paper>/ (messages.jsonl, meta.json).")],
    papers: Annotated[Path, typer.Option("--papers", help="The dataset's papers folder.")],
    out: Annotated[Path, typer.Option("--out", help="The replay's folder.")],
    released: Annotated[Path | None, typer.Option(
        "--released", help="The released repository to compare with.")] = None,
    thread: ThreadOption = None,
    backend: BackendOption = "docker",
    judge: Annotated[str, typer.Option("--judge", help="Score the replayed repository too "
                                       "(default: none).")] = "none",
    as_json: JsonOption = False,
) -> None:
    """Replay a recorded run through our scaffold graph and report its fidelity."""
    from sabench.benchmark.replay import replay_run

    with LiveStatus(f"replay {run_dir.name}") as status:
        report = replay_run(run_dir, papers, out, released=released, thread=thread,
                            backend=backend, judge=None if judge == "none" else judge,
                            on_event=status)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=1) + "\n")
        return
    console.print(f"{report['paper_id']} ({report['scaffold']}): {report['model_calls']} model "
                  f"calls of {report['recorded_calls']} recorded, stop {report['stop_reason']}; "
                  f"{report['tool_output_diffs']} of {report['tool_outputs_compared']} tool "
                  f"outputs differ {report['tool_output_diff_kinds']}", highlight=False)
    if "files_released" in report:
        console.print(f"{report['files_identical']} of {report['files_released']} released "
                      f"files byte-identical ({report['share_identical']:.1%})")
        for item in report["files_differing"]:
            console.print(f"  {item['file']}: {item['reason']}", highlight=False)


def check(
    repo: Annotated[Path, typer.Argument(help="The repository to check.")],
    paper: Annotated[str, typer.Option("--paper", help="Paper id.")],
    papers: Annotated[Path, typer.Option("--papers", help="The dataset's papers folder.")],
    checker: Annotated[str, typer.Option("--checker", help="A registered checker: alignment "
                                         "(the scaffold's check step) or offline.")]
    = "alignment",
    as_json: JsonOption = False,
) -> None:
    """The alignment-first scaffold's check step alone: every claim of a paper against a
    repository, pass or fail, with reasons and evidence."""
    from sabench.benchmark.scoring import paper_spec
    from sabench.scaffolds.alignment_check import CHECKERS
    from sabench.verifiers.judge import check_repository

    if checker not in CHECKERS:
        raise typer.BadParameter(f"unknown checker {checker!r} (known: {', '.join(CHECKERS)})")
    results = CHECKERS[checker](paper_spec(papers, paper), check_repository(repo), None)
    passed = sum(r.passed for r in results)
    if as_json:
        sys.stdout.write(json.dumps({
            "paper_id": paper, "checker": checker, "passed": passed, "total": len(results),
            "claims": [r.model_dump(mode="json") for r in results]}, indent=1) + "\n")
        return
    for result in results:
        mark = "pass" if result.passed else "FAIL"
        why = f"  ({'; '.join(result.reasons)})" if result.reasons and not result.passed else ""
        console.print(f"{mark}  {result.id}{why}", highlight=False)
    console.print(f"{passed} of {len(results)} claims pass")


def drift_test(
    runs_root: Annotated[Path, typer.Argument(help="A runs root (unpack.sh layout).")],
    papers: Annotated[Path, typer.Option("--papers", help="The dataset's papers folder.")],
    sample: Annotated[int | None, typer.Option("--sample", min=1,
                                               help="At most this many injections.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the draw.")] = 0,
    checker: Annotated[str, typer.Option("--checker", help="A registered checker: alignment "
                                         "(the scaffold's check step) or offline.")]
    = "alignment",
    stratified: Annotated[bool, typer.Option(
        "--stratified", help="Draw the dimensions in turn, so a capped sample measures each "
        "(the overall figure then weighs them alike).")] = False,
    kind: Annotated[list[str] | None, typer.Option(
        "--kind", help="Only this kind of drift (value, stub, operator, remove, swap); "
        "repeat for several.")] = None,
    paper: Annotated[list[str] | None, typer.Option(
        "--paper", help="Only runs of this paper (an id); repeat for several, e.g. a held-out "
        "split of papers.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Inject one drift at a time into implemented claims and count what the check detects."""
    from sabench.benchmark.drift import chosen_kinds
    from sabench.benchmark.drift import drift_test as run_suite

    chosen_kinds(kind)  # an unknown kind fails before any repository is read

    with LiveStatus("drift-test") as status:
        done = {"n": 0, "hit": 0}

        def progress(outcome: Any) -> None:
            done["n"] += 1
            done["hit"] += outcome.detected
            status({"phase": f"{done['hit']}/{done['n']} detected", "step": done["n"]})

        report = run_suite(runs_root, papers, sample=sample, seed=seed, checker=checker,
                           stratified=stratified, kinds=kind, papers_only=paper,
                           progress=progress)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=1) + "\n")
        return
    console.print(f"{report['n_injected']} drifts injected in {report['runs']} runs: "
                  f"{report['detection']} detected; false alarms {report['false_alarm_rate']}")
    for kind, figures in report["by_kind"].items():
        console.print(f"  {kind}: {figures['detection']} of {figures['n']}")
    if report["by_judge_naming"]:
        console.print("  where the official judge's reasoning names what the drift changed, "
                      "and where it does not:")
    for kind, sides in report["by_judge_naming"].items():
        shown = "; ".join(f"{side} {f['detection']} of {f['n']}" for side, f in sides.items())
        console.print(f"    {kind}: {shown}", highlight=False)
    for skipped in report["skipped_runs"]:
        console.print(f"  left out: {skipped['run']} ({skipped['reason']})", highlight=False)


def scaffolds() -> None:
    """List the registered scaffolds, one line each."""
    from sabench.scaffolds import SCAFFOLDS, get_scaffold

    for name in SCAFFOLDS:
        sys.stdout.write(f"{name}\t{get_scaffold(name).description}\n")


def user_error_types() -> tuple[type[BaseException], ...]:
    """Errors of these commands that are the user's input, not a bug (one line, exit 2)."""
    from sabench.agent.replay import RecordingError
    from sabench.benchmark.drift import DriftSuiteError
    from sabench.benchmark.reproduce import RunFailed, RunMismatch
    from sabench.scaffolds import UnknownScaffold
    from sabench.scaffolds.alignment_check import UnknownChecker

    return (RecordingError, RunFailed, RunMismatch, UnknownScaffold, DriftSuiteError,
            UnknownChecker)


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce)
    app.command("replay")(replay)
    app.command("scaffolds")(scaffolds)
    app.command("check")(check)
    app.command("drift-test")(drift_test)
