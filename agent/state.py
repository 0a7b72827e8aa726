"""The run state every scaffold shares, with the reducers that merge node updates.

The state holds only plain data (strings, numbers, lists, dicts and LangChain messages), so a
checkpoint is small and loads with LangGraph's default serializer. Dependencies that are not
data (the chat model, the sandbox, the judge) live in the runtime context (`context.py`).

Accounting keys (`usage`, `requests`, `elapsed_s`, `trace`, `files_written`) are *increments*:
every node returns what it added, and the reducers sum them. A scaffold runs as a subgraph whose
input schema leaves them out, so its output is exactly what it spent and the evaluation graph
adds it once.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from sabench.agent.types import UsageTotals

#: Run statuses: still going, finished normally, stopped by a limit, failed.
RUNNING, OK, STOPPED, ERROR = "running", "ok", "stopped", "error"


def add_usage(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Sum two `UsageTotals` dumps (either may be missing)."""
    total = UsageTotals(**(left or {})) + UsageTotals(**(right or {}))
    return total.model_dump()


def add_number(left: float | None, right: float | None) -> float:
    return (left or 0) + (right or 0)


def add_list(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    return [*(left or []), *(right or [])]


def union_sorted(left: list[str] | None, right: list[str] | None) -> list[str]:
    return sorted({*(left or []), *(right or [])})


def last_value(left: Any, right: Any) -> Any:
    """The newest value; None never overwrites (a node that says nothing changes nothing)."""
    return left if right is None else right


class RunOutput(TypedDict, total=False):
    """What every scaffold reports back to the evaluation graph."""

    status: Annotated[str, last_value]
    stop_reason: Annotated[str, last_value]
    error: Annotated[str, last_value]
    usage: Annotated[dict[str, Any], add_usage]
    requests: Annotated[int, add_number]
    elapsed_s: Annotated[float, add_number]
    files_written: Annotated[list[str], union_sorted]
    trace: Annotated[list[dict[str, Any]], add_list]


class ScaffoldInput(TypedDict, total=False):
    """What the evaluation graph hands a scaffold: the paper's id (the rest is in the context)."""

    paper_id: str


class RunState(ScaffoldInput, RunOutput, total=False):
    """The state shared by the evaluation graph and every scaffold.

    `claims` are the implementation claims a scaffold works from (the alignment-first scaffold
    extracts its own); `verdicts` are per-claim judgements (the evaluation graph's score step,
    or a scaffold's own check step).
    """

    claims: Annotated[list[dict[str, Any]], last_value]
    verdicts: Annotated[list[dict[str, Any]], last_value]
