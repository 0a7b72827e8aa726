"""Tool calls of a conversation: which one runs next, and running it at most once.

Scaffolds run one tool call per pass of their tools node, so each result is checkpointed
before the next call starts. A call with side effects is recorded in the run's journal before
it runs; if the process dies while it runs, the resumed run does not run it again but tells the
model so (`INTERRUPTED`), since a command may have partly run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from sabench.agent.context import RunContext

INTERRUPTED = ("ToolError: the run was stopped while this command was running, and it was not "
               "run again on resume; it may have partly run. Check its effects before repeating "
               "it.")


def next_call(messages: list[BaseMessage]) -> dict[str, Any] | None:
    """The first call of the last AI message that has no tool result yet (invalid ones too),
    with the message's id under `message_id`."""
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, AIMessage):
            for call in ordered_calls(message):
                if call["id"] not in answered:
                    return {**call, "message_id": message.id}
            return None
        else:
            return None
    return None


def ordered_calls(message: AIMessage) -> list[dict[str, Any]]:
    """Valid and invalid tool calls in the order the model made them."""
    calls = [*({**c, "valid": True} for c in message.tool_calls),
             *({**c, "valid": False} for c in message.invalid_tool_calls)]
    raw = message.additional_kwargs.get("tool_calls") or []
    order = {call.get("id"): i for i, call in enumerate(raw) if isinstance(call, dict)}
    return sorted(calls, key=lambda call: order.get(call["id"], len(order)))


def run_once(context: RunContext, call: dict[str, Any], run: Callable[[], str],
             repeatable: Collection[str] = ()) -> str:
    """Run a call unless a crash interrupted it before; log its result in the journal."""
    # Keyed by the reply's id too: some servers number tool calls anew in every reply.
    key = f"{call['message_id']}:{call['id']}"
    if call["name"] not in repeatable and context.journal.was_started(key):
        text = INTERRUPTED
    else:
        context.journal.tool_started(key)
        text = run()
    context.journal.log_tool(call["id"], call["name"], text)
    return text


def tool_result(call: dict[str, Any], text: str, started: float) -> dict[str, Any]:
    """The state update of one tool call: its message, time and trace line."""
    seconds = time.perf_counter() - started
    return {"messages": [ToolMessage(text, tool_call_id=call["id"], name=call["name"])],
            "elapsed_s": seconds,
            "trace": [{"node": "tools", "kind": "tool", "tool": call["name"],
                       "seconds": round(seconds, 4)}]}


def build_tool_loop(state: type, name: str, nodes: dict[str, Callable[..., Any]],
                    after_agent: Callable[..., str],
                    after_tools: Callable[..., str]) -> CompiledStateGraph:
    """The graph of a tool-calling agent: setup -> agent -> tools (one call per pass) or
    nudge (a reply without a call) -> agent ..., compiled without a checkpointer (it runs as a
    subgraph of the evaluation graph). `nodes` holds `setup`, `agent`, `tools` and `nudge`."""
    from sabench.agent.state import ScaffoldInput

    graph = StateGraph(state, context_schema=RunContext, input_schema=ScaffoldInput)
    for node in ("setup", "agent", "tools", "nudge"):
        graph.add_node(node, nodes[node])
    graph.add_edge(START, "setup")
    graph.add_edge("setup", "agent")
    graph.add_conditional_edges("agent", after_agent, ["tools", "nudge", END])
    graph.add_conditional_edges("tools", after_tools, ["tools", "agent", END])
    graph.add_edge("nudge", "agent")
    return graph.compile(name=name)
