"""The runtime context: every dependency of a run that is not data.

LangGraph hands it to each node as `runtime.context` (the graphs declare it as their
`context_schema`); it is never stored in a checkpoint, so it may hold live objects: the chat
model, the sandbox, the judge. A resumed run builds a fresh context with the same settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel

from sabench.agent.journal import RunJournal
from sabench.agent.tools import ToolLimits
from sabench.agent.types import Budget
from sabench.agent.usage import UsageRecorder
from sabench.agent.workspace import AgentWorkspace
from sabench.verifiers.spec import PaperSpec

if TYPE_CHECKING:
    from sabench.verifiers.judge import Judge


@dataclass
class RunContext:
    """What one run's nodes need besides their state.

    Attributes:
        model: the chat model (real, scripted or replayed).
        model_name: the spec string it was built from (for records and prices).
        paper: the paper being reproduced (its claims are for scoring, not for scaffolds,
            except in the labelled oracle ablation).
        workspace: the sandbox with /home/paper and /home/submission.
        journal: the run's host-side record of requests sent and tools started.
        run_dir: the run's output folder (repo/, score.json, record.json).
        budget: limits checked before every model call.
        recorder: every model call's usage (the judge's too, when it calls a model).
        judge: scores claims (the evaluation graph's score step; a scaffold's check step).
        tool_limits: caps of the workspace tools.
        options: scaffold options (e.g. BasicAgent's `max_steps`).
        on_event: receives progress events (phase, step, tokens, dollars); may be None.
    """

    model: BaseChatModel
    model_name: str
    paper: PaperSpec
    workspace: AgentWorkspace
    journal: RunJournal
    run_dir: Path
    budget: Budget = field(default_factory=Budget)
    recorder: UsageRecorder = field(default_factory=UsageRecorder)
    judge: Judge | None = None
    tool_limits: ToolLimits = field(default_factory=ToolLimits)
    options: dict[str, Any] = field(default_factory=dict)
    on_event: Callable[[dict[str, Any]], None] | None = None

    def emit(self, **event: Any) -> None:
        """Send a progress event to whoever listens (a display, a log)."""
        if self.on_event is not None:
            self.on_event(event)
