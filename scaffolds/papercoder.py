"""PaperCoder: the SA-Bench planning → analysis → coding baseline as a LangGraph graph.

    plan (x4, one conversation) -> extract -> analyze (Send, one per file, in parallel)
        -> code (one file per pass, in task-list order) -> END

Faithful to the original as SA-Bench ran it: the paper goes in as a cleaned structured
document (a Python dict repr; appendix and references inside the last numbered section);
planning is one four-turn conversation (plan, design, task list, config) re-sent in full on
every turn; config.yaml is taken from the fourth reply and written to the repository; the task
list drives everything after it; each file's analysis is an independent call; each file's code
is one call that sees every earlier non-YAML file, and its first fenced block is the file;
`config.yaml` entries are skipped, entries ending in `/` are coded but not written; every call
asks for at most 16,384 output tokens; bad content is never retried, and what was written stays
when a later call fails.
"""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from sabench.agent.budget import BudgetExhausted
from sabench.agent.context import RunContext
from sabench.agent.modelcall import call_model
from sabench.agent.state import ERROR, OK, STOPPED, RunState, ScaffoldInput, add_number, last_value
from sabench.agent.workspace import SUBMISSION_DIR
from sabench.scaffolds import papercoder_prompts as prompts
from sabench.scaffolds.papercoder_parse import (
    PlanParseError,
    after_think,
    content_to_json,
    document_text,
    extract_yaml,
    first_fence,
    logic_analysis,
    paper_document,
    task_list,
)

MAX_TOKENS = 16_384
PLANNING_TURNS = (None, prompts.DESIGN_REQUEST, prompts.TASK_REQUEST, prompts.CONFIG_REQUEST)
CONFIG_FILE = "config.yaml"


def merge(left: dict[str, str] | None, right: dict[str, str] | None) -> dict[str, str]:
    return {**(left or {}), **(right or {})}


class PaperCoderState(RunState, total=False):
    """Planning replies, the parsed plan, each file's analysis and the coding position."""

    planning: Annotated[list[str], operator.add]
    config_yaml: Annotated[str, last_value]
    tasks: Annotated[list[str], last_value]
    logic: Annotated[dict[str, str], last_value]
    analyses: Annotated[dict[str, str], merge]
    pending: Annotated[dict[str, str], last_value]
    coded: Annotated[int, add_number]


def document_of(context: RunContext) -> str:
    paper = context.paper
    return document_text(paper_document(paper.paper_id, paper.markdown or ""))


def ask(context: RunContext, state: dict[str, Any], messages: list[BaseMessage],
        label: str, file: str | None = None) -> tuple[AIMessage, dict[str, Any]]:
    """One call; its trace line also says which file it was for and how the reply ended."""
    reply = call_model(context, state, messages, label=label, max_tokens=MAX_TOKENS)
    finish = (reply.message.response_metadata or {}).get("finish_reason")
    update = dict(reply.update)
    update["trace"] = [{**update["trace"][0], "finish_reason": finish, "file": file}]
    return reply.message, update


# ------------------------------------------------------------------------------- planning


def planning_messages(document: str, replies: list[str]) -> list[BaseMessage]:
    """The planning conversation so far, ending with the next user turn."""
    messages: list[BaseMessage] = [SystemMessage(prompts.PLAN_SYSTEM),
                                   HumanMessage(prompts.plan_request(document))]
    for turn, reply in enumerate(replies, start=1):
        messages += [AIMessage(reply), HumanMessage(PLANNING_TURNS[turn])]
    return messages


def plan(state: PaperCoderState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """One turn of the planning conversation."""
    context = runtime.context
    replies = state.get("planning") or []
    context.emit(phase=f"plan {len(replies) + 1}/4")
    try:
        message, update = ask(context, state, planning_messages(document_of(context), replies),
                              "plan")
    except BudgetExhausted as exc:
        return {"status": STOPPED, "stop_reason": exc.reason}
    return {**update, "planning": [str(message.content)], "status": "running"}


def after_plan(state: PaperCoderState) -> str:
    if state.get("status") == STOPPED:
        return END
    return "plan" if len(state.get("planning") or []) < len(PLANNING_TURNS) else "extract"


def extract(state: PaperCoderState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """config.yaml from the fourth reply, the task list from the third; config.yaml is written
    to the repository as the original's batch runner did."""
    replies = state["planning"]
    config = extract_yaml(replies[3])
    if config is None:
        return {"status": ERROR, "stop_reason": "plan_unusable",
                "error": "the config reply holds no ```yaml block"}
    try:
        parsed = content_to_json(replies[2])
        tasks = task_list(parsed)
    except PlanParseError as exc:
        return {"status": ERROR, "stop_reason": "plan_unusable", "error": str(exc)}
    runtime.context.workspace.write(f"{SUBMISSION_DIR}/{CONFIG_FILE}", config)
    runtime.context.workspace.save()
    return {"config_yaml": config, "tasks": tasks, "logic": logic_analysis(parsed)}


def files_to_write(state: PaperCoderState) -> list[str]:
    return [task for task in state.get("tasks") or [] if task != CONFIG_FILE]


def fan_out(state: PaperCoderState) -> list[Send] | str:
    """One analysis per file, in parallel (the calls are independent)."""
    if state.get("status") in (ERROR, STOPPED):
        return END
    files = [f for f in files_to_write(state) if f not in (state.get("analyses") or {})]
    if not files:
        return "code"
    shared = {"planning": state["planning"], "config_yaml": state["config_yaml"],
              "logic": state.get("logic") or {}, "usage": state.get("usage") or {},
              "elapsed_s": state.get("elapsed_s") or 0.0}
    return [Send("analyze", {**shared, "file": file}) for file in files]


# ------------------------------------------------------------------------------- analysis


def context_block(context: RunContext, replies: list[str], config: str) -> str:
    return prompts.shared_context(document_of(context), after_think(replies[0]),
                                  after_think(replies[1]), after_think(replies[2]), config)


def analyze(packet: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The logic analysis of one file (its own two-message conversation)."""
    context = runtime.context
    file = packet["file"]
    request = prompts.analysis_request(
        context_block(context, packet["planning"], packet["config_yaml"]), file,
        packet["logic"].get(file, ""))
    try:
        message, update = ask(context, packet, [SystemMessage(prompts.ANALYSIS_SYSTEM),
                                                HumanMessage(request)], "analyze", file)
    except BudgetExhausted as exc:
        return {"status": STOPPED, "stop_reason": exc.reason}
    return {**update, "analyses": {file: str(message.content)}}


def after_analysis(state: PaperCoderState) -> str:
    return END if state.get("status") == STOPPED else "code"


# ------------------------------------------------------------------------------- coding


def code(state: PaperCoderState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The code of the next file, with every earlier non-YAML file in the request."""
    context = runtime.context
    files = files_to_write(state)
    position = int(state.get("coded") or 0)
    if position >= len(files):  # a task list of config.yaml alone: nothing to code
        return {"status": OK, "stop_reason": "finished"}
    file = files[position]
    context.emit(phase=f"code {position + 1}/{len(files)}", step=position + 1)
    done = files[:position]
    request = prompts.coding_request(
        context_block(context, state["planning"], state["config_yaml"]),
        earlier_code(context, done), done, file, (state.get("analyses") or {}).get(file, ""))
    try:
        message, update = ask(context, state, [SystemMessage(prompts.CODING_SYSTEM),
                                               HumanMessage(request)], "code", file)
    except BudgetExhausted as exc:
        return {"status": STOPPED, "stop_reason": exc.reason}
    return {**update, "pending": {"file": file, "text": str(message.content)}}


def write(state: PaperCoderState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Write the coded file (its own node: the reply is checkpointed before anything acts on
    it, so a crash here repeats the write, never the paid call)."""
    started = time.perf_counter()
    pending = state["pending"]
    if not pending["file"].endswith("/"):
        runtime.context.workspace.write(f"{SUBMISSION_DIR}/{pending['file']}",
                                        first_fence(pending["text"]))
        runtime.context.workspace.save()
    finished = int(state.get("coded") or 0) + 1 == len(files_to_write(state))
    return {"coded": 1, "elapsed_s": time.perf_counter() - started,
            **({"status": OK, "stop_reason": "finished"} if finished else {})}


def earlier_code(context: RunContext, done: list[str]) -> dict[str, str]:
    """The text of every file written so far except YAML, read back from the repository."""
    texts = {}
    for file in done:
        if file.endswith((".yaml", ".yml", "/")):
            continue
        try:
            texts[file] = context.workspace.read(f"{SUBMISSION_DIR}/{file}").decode(
                "utf-8", errors="replace")
        except (FileNotFoundError, PermissionError, IsADirectoryError):
            continue
    return texts


def after_code(state: PaperCoderState) -> str:
    return END if state.get("status") in (STOPPED, OK) else "write"


def after_write(state: PaperCoderState) -> str:
    return END if state.get("status") == OK else "code"


# ------------------------------------------------------------------------------- the graph


class PaperCoder:
    """The registered scaffold `papercoder`."""

    name = "papercoder"
    description = ("PaperCoder: 4-turn planning, per-file analysis (parallel), per-file "
                   "coding in task order; no tools, 16,384 output tokens per call")

    def build(self, options: dict[str, Any] | None = None) -> CompiledStateGraph:
        graph = StateGraph(PaperCoderState, context_schema=RunContext,
                           input_schema=ScaffoldInput)
        graph.add_node("plan", plan)
        graph.add_node("extract", extract)
        graph.add_node("analyze", analyze)
        graph.add_node("code", code)
        graph.add_node("write", write)
        graph.add_edge(START, "plan")
        graph.add_conditional_edges("plan", after_plan, ["plan", "extract", END])
        graph.add_conditional_edges("extract", fan_out, ["analyze", "code", END])
        graph.add_conditional_edges("analyze", after_analysis, ["code", END])
        graph.add_conditional_edges("code", after_code, ["write", END])
        graph.add_conditional_edges("write", after_write, ["code", END])
        return graph.compile(name=self.name)
