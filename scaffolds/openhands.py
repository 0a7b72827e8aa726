"""OpenHands CodeAct (legacy V0 agent, as SA-Bench ran it) as a LangGraph graph.

    setup -> agent -> tools (one action per pass, each an iteration) -> agent ...
                   \\-> nudge (a message without an action: the auto-continue message) -> agent

Tools: `execute_bash` (the working directory carries over between commands, as in a shell
session), `str_replace_editor` (view, create, str_replace, insert, undo_edit; absolute paths),
`think` and `finish`. Observations are cut to their first and last 15,000 characters (30,000 in
all). Every action, and every reply that has none, is one iteration; at `max_iterations`
(100) the run ends in the error state, as the original's headless controller does.

Departures: the browser, Jupyter and task-tracker tools are left out (the runs were static:
no code was to be executed, and no browsing dependency was installed); environment variables
set by one command do not carry over to the next (only the working directory does); stuck-loop
detection is not reproduced; the task message is our own (the original driver's is unknown).
"""

from __future__ import annotations

import re
import shlex
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import END
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from sabench.agent.budget import BudgetExhausted
from sabench.agent.context import RunContext
from sabench.agent.modelcall import call_model
from sabench.agent.state import ERROR, OK, STOPPED, RunState, add_number, last_value
from sabench.agent.toolcalls import build_tool_loop, next_call, run_once, tool_result
from sabench.agent.tools import ToolError, WorkspaceTools, head_tail, workspace_path
from sabench.agent.workspace import HOME
from sabench.scaffolds import openhands_prompts as prompts

DEFAULTS: dict[str, Any] = {"max_iterations": 100, "observation_chars": 30_000,
                            "command_timeout_s": 120.0}
CLIPPED = ("\n<response clipped: the middle of this output was cut; look at smaller parts "
           "of it>\n")
CWD_MARK = "@@sabench-cwd@@"
REPEATABLE = {"think", "finish"}


def merge_history(left: dict[str, list[str]] | None,
                  right: dict[str, list[str]] | None) -> dict[str, list[str]]:
    return {**(left or {}), **(right or {})}


class OpenHandsState(RunState, total=False):
    """The conversation, the iteration count, the shell's directory and the editor's undo
    history (earlier contents per file, newest last)."""

    messages: Annotated[list[AnyMessage], add_messages]
    iterations: Annotated[int, add_number]
    cwd: Annotated[str, last_value]
    undo: Annotated[dict[str, list[str]], merge_history]


def _function(name: str, description: str, properties: dict[str, Any],
              required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required}}}


TOOLS = [
    _function("execute_bash", "Run a bash command in the sandbox; the working directory "
              "carries over to the next command.",
              {"command": {"type": "string"},
               "timeout": {"type": "number", "description": "seconds (default 120)"}},
              ["command"]),
    _function("str_replace_editor", "View, create and edit files (absolute paths).",
              {"command": {"type": "string",
                           "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
               "path": {"type": "string"}, "file_text": {"type": "string"},
               "old_str": {"type": "string"}, "new_str": {"type": "string"},
               "insert_line": {"type": "integer"},
               "view_range": {"type": "array", "items": {"type": "integer"}}},
              ["command", "path"]),
    _function("think", "Write down a thought; nothing is executed.",
              {"thought": {"type": "string"}}, ["thought"]),
    _function("finish", "Finish the task.", {"message": {"type": "string"}}, []),
]


def options_of(context: RunContext) -> dict[str, Any]:
    return {**DEFAULTS, **context.options}


# ------------------------------------------------------------------------------- nodes


def setup(state: OpenHandsState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    if state.get("messages"):
        return {}
    paper = runtime.context.paper
    return {"messages": [SystemMessage(prompts.SYSTEM),
                         HumanMessage(prompts.task(paper.paper_id, paper.title))],
            "status": "running", "cwd": HOME}


def agent(state: OpenHandsState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """One model call (the cap is checked first)."""
    if (state.get("iterations") or 0) >= options_of(runtime.context)["max_iterations"]:
        return capped()
    runtime.context.emit(phase="agent", step=(state.get("iterations") or 0) + 1)
    try:
        reply = call_model(runtime.context, state, state["messages"], tools=TOOLS,
                           label="agent", cache_prefix=2)
    except BudgetExhausted as exc:
        return {"status": STOPPED, "stop_reason": exc.reason}
    has_action = bool(reply.message.tool_calls or reply.message.invalid_tool_calls)
    return {**reply.update, "messages": [reply.message], "iterations": 0 if has_action else 1}


def capped() -> dict[str, Any]:
    return {"status": ERROR, "stop_reason": "iteration_cap",
            "error": "reached the maximum number of iterations"}


def nudge(state: OpenHandsState) -> dict[str, Any]:
    return {"messages": [HumanMessage(prompts.CONTINUE)]}


def tools(state: OpenHandsState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Execute the next pending action: one iteration."""
    call = next_call(state["messages"])
    assert call is not None, "the router sends only replies with pending actions here"
    started = time.perf_counter()
    context = runtime.context
    effects: dict[str, Any] = {}
    text = run_once(context, call, lambda: act(call, context, state, effects), REPEATABLE)
    limit = options_of(context)["observation_chars"]
    update = {**tool_result(call, head_tail(text, limit, CLIPPED), started), **effects,
              "iterations": 1}
    if call["name"] == "finish" and call["valid"]:
        update.update(status=OK, stop_reason="finished")
    elif (state.get("iterations") or 0) + 1 >= options_of(context)["max_iterations"]:
        update.update(capped())
    return update


def act(call: dict[str, Any], context: RunContext, state: OpenHandsState,
        effects: dict[str, Any]) -> str:
    """Run one action; `effects` receives state changes (directory, undo history)."""
    if not call["valid"]:
        return (f"Error: the arguments of {call.get('name')} are not valid JSON; send them "
                f"again as one JSON object.")
    args = call["args"]
    try:
        if call["name"] == "execute_bash":
            return bash(context, state, effects, str(args.get("command", "")),
                        args.get("timeout"))
        if call["name"] == "str_replace_editor":
            return edit(context, state, effects, args)
        if call["name"] == "think":
            return prompts.THINK_RESULT
        if call["name"] == "finish":
            return str(args.get("message") or "Finished.")
        return f"Error: there is no tool named {call['name']!r}."
    except (ToolError, ValueError, TypeError) as exc:
        return f"ERROR: {exc}"


# ------------------------------------------------------------------------------- bash


def bash(context: RunContext, state: OpenHandsState, effects: dict[str, Any], command: str,
         timeout: float | None) -> str:
    cwd = state.get("cwd") or HOME
    script = (f"cd {shlex.quote(cwd)} 2>/dev/null || cd {HOME}\n{command}\n"
              f"__status=$?\necho\necho \"{CWD_MARK}$(pwd)\"\nexit $__status")
    limit = float(timeout or options_of(context)["command_timeout_s"])
    result = context.workspace.sandbox.exec(["bash", "-c", script], cwd=HOME, timeout=limit)
    context.workspace.save()
    output, new_cwd = split_cwd(result.stdout)
    effects["cwd"] = new_cwd or cwd
    text = output + (result.stderr if result.stderr else "")
    if result.timed_out:
        return f"{text}\n[The command timed out after {limit:g} seconds and was stopped.]"
    return f"{text}\n[The command completed with exit code {result.exit_code}.]\n" \
           f"[Current working directory: {effects['cwd']}]"


def split_cwd(stdout: str) -> tuple[str, str | None]:
    """The command's own output, and the directory it ended in."""
    found = re.search(rf"\n?{re.escape(CWD_MARK)}(.*)\n?$", stdout)
    if found is None:
        return stdout, None
    return stdout[:found.start()].removesuffix("\n") + ("\n" if found.start() else ""), \
        found.group(1)


# ------------------------------------------------------------------------------- editor


def edit(context: RunContext, state: OpenHandsState, effects: dict[str, Any],
         args: dict[str, Any]) -> str:
    path = str(args.get("path", ""))
    if not path.startswith("/"):
        raise ToolError(f"{path!r} is not an absolute path; give the full path, e.g. "
                        f"{HOME}/submission/{path}")
    files = WorkspaceTools(context.workspace, context.tool_limits)
    command = args.get("command")
    if command == "view":
        return view(files, path, args.get("view_range"))
    if command == "create":
        return create(files, path, str(args.get("file_text") or ""))
    if command == "undo_edit":
        return undo(files, state, effects, path)
    if command not in ("str_replace", "insert"):
        raise ToolError(f"unknown command {command!r}; use view, create, str_replace, insert "
                        f"or undo_edit")
    before = files.read_text(path)
    if command == "str_replace":
        files.replace(path, str(args.get("old_str") or ""), str(args.get("new_str") or ""))
    else:
        files.insert(path, int(args.get("insert_line", 0)), str(args.get("new_str") or ""))
    history = (state.get("undo") or {}).get(path, [])
    effects["undo"] = {path: [*history[-4:], before]}
    return f"The file {path} has been edited.\n" + files.read_lines(path, 1, 40)


def view(files: WorkspaceTools, path: str, view_range: Any) -> str:
    try:
        text = files.read_text(path)
    except ToolError as exc:
        if "a directory" not in str(exc):
            raise
        rel = workspace_path(path)
        listing = files.workspace.exec(
            f"cd /workspace/{shlex.quote(rel)} && find . -maxdepth 2 -not -path '*/.*' | sort")
        return f"Files and folders in {path}, two levels deep:\n{listing.stdout}"
    lines = text.splitlines()
    start, end = 1, len(lines)
    if isinstance(view_range, list) and len(view_range) == 2:
        start, end = int(view_range[0]), int(view_range[1])
        end = len(lines) if end == -1 else end
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(max(1, start), min(end,
                                                                               len(lines)) + 1))


def create(files: WorkspaceTools, path: str, text: str) -> str:
    try:
        files.read_text(path)
    except ToolError:
        files.write(path, text)
        return f"File created: {path}"
    raise ToolError(f"{path} already exists; `create` does not overwrite files (edit it, or "
                    f"delete it first)")


def undo(files: WorkspaceTools, state: OpenHandsState, effects: dict[str, Any],
         path: str) -> str:
    history = (state.get("undo") or {}).get(path) or []
    if not history:
        raise ToolError(f"no edit of {path} to undo")
    files.write(path, history[-1])
    effects["undo"] = {path: history[:-1]}
    return f"The last edit of {path} was undone."


# ------------------------------------------------------------------------------- routing


def after_agent(state: OpenHandsState) -> str:
    if state.get("status") in (STOPPED, ERROR):
        return END
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return "tools"
    return "nudge"


def after_tools(state: OpenHandsState) -> str:
    if state.get("status") in (OK, ERROR, STOPPED):
        return END
    return "tools" if next_call(state["messages"]) is not None else "agent"


class OpenHands:
    """The registered scaffold `openhands`."""

    name = "openhands"
    description = ("OpenHands CodeAct: bash, file editor, think, finish; one action per "
                   "iteration, 100 iterations, 30k-character observations")

    def build(self, options: dict[str, Any] | None = None) -> CompiledStateGraph:
        nodes = {"setup": setup, "agent": agent, "tools": tools, "nudge": nudge}
        return build_tool_loop(OpenHandsState, self.name, nodes, after_agent, after_tools)

