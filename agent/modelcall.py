"""One model call as a node's work: budget check, request journal, usage and timing.

A model call is always a node of its own, so its reply is checkpointed before any tool runs: a
run killed after the reply arrived resumes with the reply and never pays for it twice.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from sabench.agent import budget as budgets
from sabench.agent.caching import mark_cacheable
from sabench.agent.context import RunContext
from sabench.agent.replay import TURN_KEY
from sabench.agent.types import UsageTotals
from sabench.agent.usage import model_name_of, totals_of, usage_of


@dataclass(frozen=True)
class ModelReply:
    """A reply and the state increments that account for it."""

    message: AIMessage
    update: dict[str, Any]


def call_model(context: RunContext, state: dict[str, Any], messages: Sequence[BaseMessage],
               *, tools: Sequence[Any] = (), label: str = "model", cache_prefix: int = 0,
               **bind: Any) -> ModelReply:
    """Check the budget, send one request, and account for its reply.

    Args:
        context: the run's context (model, budget, journal, recorder).
        state: the calling graph's state (its `usage` and `elapsed_s` are what was spent).
        messages: the conversation to send.
        tools: tool schemas to bind (none: a plain completion).
        label: the node's name, for the journal and the trace.
        cache_prefix: how many leading messages never change (system prompt, paper): the
            provider may cache them (Anthropic needs them marked; OpenAI caches by itself).
        **bind: extra arguments for `bind_tools` (e.g. `tool_choice`), or for the call
            when there are no tools (e.g. `max_tokens`).

    Raises:
        BudgetExhausted: a budget limit is reached; nothing was sent.
    """
    budgets.check(context.budget, state.get("usage") or {}, state.get("elapsed_s") or 0.0)
    if tools:
        runnable = context.model.bind_tools(list(tools), **bind)
    else:
        runnable = context.model.bind(**bind) if bind else context.model
    if cache_prefix:  # marked for Anthropic only (see agent/caching.py)
        messages = mark_cacheable(messages, min(cache_prefix, len(messages)), context.model_name)
    context.journal.request_sent(label)
    started = time.perf_counter()
    turn = int((state.get("usage") or {}).get("calls", 0))
    reply = runnable.invoke(list(messages), config={
        "callbacks": [context.recorder], "metadata": {TURN_KEY: turn}})
    seconds = time.perf_counter() - started
    if not isinstance(reply, AIMessage):
        raise TypeError(f"the model answered with {type(reply).__name__}, not an AI message")
    usage = usage_of(reply, model_name_of(reply, context.model_name))
    totals = totals_of([usage])
    context.emit(phase=label, tokens=totals.input_tokens + totals.output_tokens,
                 dollars=totals.dollars)
    return ModelReply(reply, {
        "usage": totals.model_dump(), "requests": 1, "elapsed_s": seconds,
        "trace": [trace_entry(label, seconds, totals, reply)],
    })


def trace_entry(node: str, seconds: float, totals: UsageTotals,
                reply: AIMessage) -> dict[str, Any]:
    """One line of the run's trace: what a model call cost and asked for."""
    return {"node": node, "kind": "model", "seconds": round(seconds, 4),
            "input_tokens": totals.input_tokens, "output_tokens": totals.output_tokens,
            "cached_tokens": totals.cached_tokens,
            "tool_calls": [call["name"] for call in reply.tool_calls]}

