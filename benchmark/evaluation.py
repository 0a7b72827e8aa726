"""The evaluation graph: every scaffold runs inside it, on the same terms.

    prepare -> scaffold (the scaffold's compiled graph, as a subgraph) -> collect -> score
            -> record

`prepare` opens the run's sandbox with the paper at /home/paper and an empty /home/submission;
the scaffold works in it under the run's budget; `collect` copies the submission out to
`RUN_DIR/repo/`; `score` judges every claim of the paper with the run's judge and writes the
official-compatible `RUN_DIR/score.json`; `record` writes `RUN_DIR/record.json`. The sandbox
image and limits, the judge and the budget come from the context, which is the same for every
scaffold: that is what "equal terms" means here, in code.

The graph is compiled with a checkpointer and run with `durability="sync"`, so a run killed at
any point and started again on the same thread continues after its last completed step.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from sabench.agent.context import RunContext
from sabench.agent.state import ERROR, OK, RUNNING, RunState, add_usage, last_value
from sabench.benchmark.scoring import categorize, write_score
from sabench.scaffolds import get_scaffold

REPO = "repo"
SCORE_FILE = "score.json"
RECORD_FILE = "record.json"


class EvalState(RunState, total=False):
    """The run state plus what only the evaluation graph fills in."""

    scaffold: Annotated[str, last_value]
    model: Annotated[str, last_value]
    timings: Annotated[dict[str, float], lambda a, b: {**(a or {}), **(b or {})}]
    judge_usage: Annotated[dict[str, Any], add_usage]
    overall_score: Annotated[float, last_value]


def timed(phase: str, started: float) -> dict[str, Any]:
    return {"timings": {phase: round(time.perf_counter() - started, 4)}}


def prepare(state: EvalState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Open the sandbox and lay out the paper and an empty submission."""
    started = time.perf_counter()
    context = runtime.context
    context.emit(phase="prepare")
    context.workspace.sandbox  # noqa: B018 - opening it lays out /home/paper and /home/submission
    return {"status": RUNNING, "paper_id": context.paper.paper_id, **timed("prepare", started)}


def collect(state: EvalState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Copy the submission out of the sandbox (files kept whatever made the scaffold stop)."""
    started = time.perf_counter()
    context = runtime.context
    context.emit(phase="collect")
    repo = context.run_dir / REPO
    context.workspace.collect(repo)
    files = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file())
    return {"files_written": files, **timed("collect", started)}


def score(state: EvalState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Judge every claim of the paper against the collected repository."""
    started = time.perf_counter()
    context = runtime.context
    context.emit(phase="score")
    if context.judge is None:
        return timed("score", started)
    before = context.recorder.totals()
    result = categorize(context.judge.score(context.paper, context.run_dir / REPO))
    write_score(result, context.run_dir / SCORE_FILE)
    used = context.recorder.totals()
    judge_usage = {name: getattr(used, name) - getattr(before, name)
                   for name in type(used).model_fields}
    return {"overall_score": result.overall_score, "judge_usage": judge_usage,
            "verdicts": [claim_summary(c) for d in result.dimensions.values() for c in d.claims],
            **timed("score", started)}


def claim_summary(claim: Any) -> dict[str, Any]:
    """The part of a verdict the state keeps (the full verdict is in score.json)."""
    return {"id": claim.id, "score": claim.score}


def record(state: EvalState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Write record.json: what ran, why it stopped, what it cost and how long it took."""
    context = runtime.context
    status = state.get("status") or OK
    if status == RUNNING:
        status = OK
    write_record(context.run_dir, build_record(state, context, status=status))
    return {"status": status}


def build_record(state: dict[str, Any], context: RunContext, *, status: str,
                 error: str | None = None) -> dict[str, Any]:
    """The run record (also written, with the error, when a run fails mid-way)."""
    return {
        "paper_id": context.paper.paper_id,
        "scaffold": state.get("scaffold"),
        "model": context.model_name,
        "judge": getattr(context.judge, "name", None),
        "status": status,
        "stop_reason": state.get("stop_reason") or ("error" if status == ERROR else "finished"),
        "error": error or state.get("error") or None,
        "requests": context.journal.requests_sent(),
        "usage": state.get("usage") or {},
        "judge_usage": state.get("judge_usage") or {},
        "timings": {"scaffold_s": round(state.get("elapsed_s") or 0.0, 4),
                    **{f"{k}_s": v for k, v in (state.get("timings") or {}).items()}},
        "overall_score": state.get("overall_score") if context.judge else None,
        "files": state.get("files_written") or [],
        "budget": context.budget.model_dump(exclude_none=True),
        "options": context.options,
        "trace": state.get("trace") or [],
    }


def write_record(run_dir: Path, data: dict[str, Any]) -> None:
    """Write record.json atomically (a crash never leaves half a record)."""
    path = run_dir / RECORD_FILE
    temp = path.with_suffix(".json.tmp")
    temp.write_text(json.dumps(data, indent=2, default=str) + "\n")
    os.replace(temp, path)


def build_evaluation_graph(scaffold: str, options: dict[str, Any] | None = None, *,
                           checkpointer: Checkpointer = None) -> CompiledStateGraph:
    """The evaluation graph around the scaffold registered as `scaffold`."""
    subgraph = get_scaffold(scaffold).build(options)
    graph = StateGraph(EvalState, context_schema=RunContext)
    graph.add_node("prepare", prepare)
    graph.add_node("scaffold", subgraph)
    graph.add_node("collect", collect)
    graph.add_node("score", score)
    graph.add_node("record", record)
    graph.add_edge(START, "prepare")
    graph.add_edge("prepare", "scaffold")
    graph.add_edge("scaffold", "collect")
    graph.add_edge("collect", "score")
    graph.add_edge("score", "record")
    graph.add_edge("record", END)
    return graph.compile(checkpointer=checkpointer, name="evaluation")
