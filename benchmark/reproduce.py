"""Run one scaffold on one paper inside the evaluation graph: `sabench reproduce`.

A run lives in its output folder:

    OUT/run.json          what was asked (scaffold, model, paper, thread): a rerun must match
    OUT/checkpoints.sqlite  the graph's checkpoints (or a Postgres URL given with --checkpoint)
    OUT/journal/          requests sent, tools started, tool results (see agent/journal.py)
    OUT/work/submission/  the submission as of the last step (a resumed sandbox starts here)
    OUT/repo/             the collected repository
    OUT/score.json        official-compatible scores
    OUT/record.json       scaffold, model, stop reason, requests, usage, timings, trace

Running the same command again with the same OUT (and thread) resumes an unfinished run from
its last completed step and leaves a finished one as it is.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from sabench.agent.context import RunContext
from sabench.agent.journal import RunJournal
from sabench.agent.models import make_model
from sabench.agent.state import ERROR
from sabench.agent.types import Budget
from sabench.agent.usage import UsageRecorder
from sabench.agent.workspace import AgentWorkspace
from sabench.benchmark.dataset import load_paper
from sabench.benchmark.evaluation import (
    RECORD_FILE,
    REPO,
    build_evaluation_graph,
    build_record,
    write_record,
)
from sabench.benchmark.scoring import make_judge
from sabench.sandbox.protocol import get_backend
from sabench.sandbox.types import Limits, SandboxSpec
from sabench.scaffolds import get_scaffold

RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoints.sqlite"
#: Supersteps one invocation may take (a BasicAgent step is 2-3 of them).
RECURSION_LIMIT = 100_000


class RunFailed(RuntimeError):
    """A run stopped with an error; its record is written and a rerun resumes it."""


class RunMismatch(ValueError):
    """OUT already holds a different run (one line)."""


@dataclass
class RunRequest:
    """Everything `reproduce` needs; the CLI fills it from its flags."""

    paper_dir: Path
    scaffold: str
    model: str
    out: Path
    thread: str | None = None
    budget: Budget = field(default_factory=Budget)
    judge: str | None = "offline"
    backend: str = "docker"
    image: str | None = None
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    checkpoint: str | None = None
    limits: Limits = field(default_factory=Limits)
    workspace_aliases: tuple[str, ...] = ()
    model_options: dict[str, Any] = field(default_factory=dict)


def reproduce(request: RunRequest,
              on_event: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run (or resume) one scaffold on one paper; returns the run record.

    Raises:
        RunFailed: the run failed; its record says why, and a rerun resumes it.
        RunMismatch: OUT holds a run of another scaffold, model, paper or thread.
    """
    paper = load_paper(Path(request.paper_dir))
    get_scaffold(request.scaffold)  # unknown names fail before anything is written
    get_backend(request.backend)
    out = Path(request.out)
    context = make_context(request, paper, out, on_event)  # a bad model or judge fails here
    thread = claim_folder(out, request, paper.paper_id)
    try:
        with open_checkpoints(request.checkpoint, out / CHECKPOINT_FILE) as saver:
            graph = build_evaluation_graph(request.scaffold, request.options,
                                           checkpointer=saver)
            return run_graph(graph, thread, request, context)
    finally:
        context.workspace.close()


def run_graph(graph: Any, thread: str, request: RunRequest,
              context: RunContext) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}, "recursion_limit": RECURSION_LIMIT}
    snapshot = graph.get_state(config)
    if snapshot.values and not snapshot.next and (context.run_dir / RECORD_FILE).is_file():
        return json.loads((context.run_dir / RECORD_FILE).read_text())
    start = None if snapshot.values else {"scaffold": request.scaffold,
                                          "model": request.model}
    started = time.perf_counter()
    try:
        graph.invoke(start, config, context=context, durability="sync")
    except Exception as exc:
        values = graph.get_state(config).values
        keep_partial_repository(context.run_dir)
        message = f"{type(exc).__name__}: {exc}".splitlines()[0]
        write_record(context.run_dir, build_record(values, context, status=ERROR,
                                                   error=message))
        raise RunFailed(f"{request.scaffold} on {context.paper.paper_id} failed: {message} "
                        f"(record in {context.run_dir / RECORD_FILE}; run again to resume)"
                        ) from exc
    record = json.loads((context.run_dir / RECORD_FILE).read_text())
    # The graph's own cost shows as the wall time not spent inside nodes (see record.json).
    record["timings"]["wall_s"] = round(time.perf_counter() - started, 4)
    write_record(context.run_dir, record)
    return record


def keep_partial_repository(out: Path) -> None:
    """A failed run keeps what it wrote: the submission as of its last step becomes OUT/repo
    (links stay links; nothing is followed)."""
    mirror = out / "work" / "submission"
    if mirror.is_dir():
        shutil.rmtree(out / REPO, ignore_errors=True)
        shutil.copytree(mirror, out / REPO, symlinks=True)


def claim_folder(out: Path, request: RunRequest, paper_id: str) -> str:
    """Write OUT/run.json on first use; on later runs check it names the same run."""
    wanted = {"scaffold": request.scaffold, "model": request.model, "paper_id": paper_id,
              "thread": request.thread or f"{request.scaffold}:{paper_id}"}
    path = out / RUN_FILE
    if path.is_file():
        held = json.loads(path.read_text())
        if request.thread is None:
            wanted["thread"] = held.get("thread", wanted["thread"])
        for key, value in wanted.items():
            if held.get(key) != value:
                raise RunMismatch(f"{path}: this folder holds a run with {key} "
                                  f"{held.get(key)!r}, not {value!r}; use another --out")
    else:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(wanted, indent=2) + "\n")
    return wanted["thread"]


def make_context(request: RunRequest, paper: Any, out: Path,
                 on_event: Callable[[dict[str, Any]], None] | None) -> RunContext:
    recorder = UsageRecorder(default_model=request.model.partition(":")[2] or request.model)
    model = make_model(request.model, base_url=request.base_url, **request.model_options)
    judge = make_judge(request.judge, request.base_url, recorder=recorder) \
        if request.judge else None
    spec = SandboxSpec(backend=request.backend, image=request.image, limits=request.limits,
                       workspace_aliases=request.workspace_aliases)
    links = getattr(get_scaffold(request.scaffold), "workspace_links", {})
    workspace = AgentWorkspace(spec, Path(request.paper_dir), out / "work" / "submission",
                               links)
    return RunContext(model=model, model_name=request.model, paper=paper, workspace=workspace,
                      journal=RunJournal(out / "journal"), run_dir=out, budget=request.budget,
                      recorder=recorder, judge=judge, options=dict(request.options),
                      on_event=on_event)


@contextmanager
def open_checkpoints(target: str | None, default: Path) -> Iterator[BaseCheckpointSaver]:
    from sabench.agent.checkpoints import open_checkpointer

    with open_checkpointer(target, default_path=default) as saver:
        yield saver
