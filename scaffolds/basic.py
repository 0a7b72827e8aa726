"""BasicAgent: the SA-Bench ReAct baseline as a LangGraph graph.

One step is one model call. The graph is

    setup -> agent -> tools (one call per pass, looping) -> agent ...
                   \\-> nudge (no tool call: the continue message) -> agent

with the baseline's rules: four tools (bash, read_file_chunk, search_file, submit), commands
run for at most 30 s with output cut to its first and last 6,000 characters, the step and time
limits checked before each step with `>` (a limit of 80 steps allows 81 calls), an empty reply
patched to "OK.", and the message window pruned to 200 messages the way the original did,
including its quirk of dropping the newest message when the first user message is restored.

Departures, each for a reason: paths are real inside the sandbox (/home/paper and
/home/submission), so commands are not rewritten (the `[rewritten]` line repeats the command;
replays of recorded runs rewrite as the original did, see `host_view`); a path
outside the workspace is refused rather than read from the host; an unknown tool name gets an
error message instead of crashing the run; a command interrupted by a crash of our process is
not run again on resume (its result says so).
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import END
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from sabench.agent.budget import BudgetExhausted
from sabench.agent.context import RunContext
from sabench.agent.modelcall import call_model
from sabench.agent.replay import RecordingEnded
from sabench.agent.state import OK, STOPPED, RunState, add_number, last_value
from sabench.agent.toolcalls import build_tool_loop, next_call, ordered_calls, run_once, tool_result
from sabench.agent.tools import TRUNCATION_MARK, ToolError, head_tail, workspace_path
from sabench.agent.workspace import HOME
from sabench.scaffolds.basic_prompts import CONTINUE, SYSTEM, user_prompt

DEFAULTS: dict[str, Any] = {
    "max_steps": 80,          # the baseline code's default (the SA-Bench runs used more)
    "time_limit_s": 900.0,    # likewise (about 2,700 s in the SA-Bench runs, inferred)
    "command_timeout_s": 30.0,
    "output_chars": 12_000,
    "search_timeout_s": 15.0,
    "max_messages": 200,
    "shell": "/bin/sh",       # subprocess(shell=True), as the original ran commands
}

#: Tools whose repetition after a crash changes nothing, so they simply run again.
REPEATABLE = {"read_file_chunk", "search_file", "submit"}


def _schema(name: str, description: str, properties: dict[str, Any],
            required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False}}}


TOOLS = [
    _schema("bash", "Run a shell command in the workspace and get its exit code and output.",
            {"command": {"type": "string", "description": "the command"}}, ["command"]),
    _schema("read_file_chunk", "Read a page of a text file (numbered lines), or list a folder.",
            {"path": {"type": "string"},
             "start_line": {"type": "integer", "description": "first line, from 1"},
             "num_lines": {"type": "integer", "description": "how many lines (default 120)"}},
            ["path"]),
    _schema("search_file", "Search a file or folder for a pattern (ripgrep/grep), with line "
            "numbers.", {"pattern": {"type": "string"}, "path": {"type": "string"}},
            ["pattern", "path"]),
    _schema("submit", "Finish the run and hand in /home/submission.",
            {"summary": {"type": "string", "description": "what was done"}}, ["summary"]),
]


class BasicState(RunState, total=False):
    """BasicAgent's state: the conversation and its step count on top of the shared keys."""

    messages: Annotated[list[AnyMessage], add_messages]
    steps: Annotated[int, add_number]
    submitted: Annotated[bool, last_value]
    summary: Annotated[str, last_value]


def options_of(context: RunContext) -> dict[str, Any]:
    return {**DEFAULTS, **context.options}


# ------------------------------------------------------------------------------- nodes


def setup(state: BasicState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The system and task messages (a resumed run already has them)."""
    if state.get("messages"):
        return {}
    paper = runtime.context.paper
    has_addendum = (runtime.context.workspace.paper_dir / "addendum.md").is_file()
    task = user_prompt(paper.paper_id, paper.title, has_addendum, HOME)
    return {"messages": [SystemMessage(SYSTEM), HumanMessage(task)], "status": "running"}


def agent(state: BasicState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """One step: the stop rules, pruning, one model call."""
    options = options_of(runtime.context)
    stop = _limit_reached(state, options)
    if stop:
        return {"status": STOPPED, "stop_reason": stop}
    messages = list(state["messages"])
    pruned = prune(messages, options["max_messages"])
    runtime.context.emit(phase="agent", step=(state.get("steps") or 0) + 1)
    try:
        reply = call_model(runtime.context, state, pruned, tools=TOOLS, label="agent",
                           cache_prefix=2, tool_choice="auto")
    except BudgetExhausted as exc:
        return {"status": STOPPED, "stop_reason": exc.reason}
    except RecordingEnded:
        return {"status": STOPPED, "stop_reason": "recording_ended"}
    message = reply.message
    if not message.content and not message.tool_calls and not message.invalid_tool_calls:
        message = message.model_copy(update={"content": "OK."})
    new = [message] if pruned is messages else _replace_all(pruned, message)
    return {**reply.update, "messages": new, "steps": 1}


def _limit_reached(state: BasicState, options: dict[str, Any]) -> str | None:
    if (state.get("steps") or 0) > options["max_steps"]:  # `>`: 80 allows 81 calls
        return "step_limit"
    limit = options["time_limit_s"]
    if limit is not None and (state.get("elapsed_s") or 0.0) > limit:
        return "time_limit"
    return None


def _replace_all(pruned: list[AnyMessage], message: AIMessage) -> list[Any]:
    """The update that makes the pruned window the agent's memory (as the original did)."""
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *pruned, message]


def nudge(state: BasicState) -> dict[str, Any]:
    """No tool call: ask the model to go on."""
    return {"messages": [HumanMessage(CONTINUE)]}


def tools(state: BasicState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run the next unanswered tool call of the last reply (one per pass, so each result is
    checkpointed before the next call starts)."""
    call = next_call(state["messages"])
    assert call is not None, "the router sends only replies with unanswered calls here"
    started = time.perf_counter()
    context = runtime.context
    outcome: dict[str, Any] = {}

    def run() -> str:
        text, outcome["submitted"] = run_tool(call, context, options_of(context))
        if call["name"] == "bash":
            context.workspace.save()
        return text

    update = tool_result(call, run_once(context, call, run, REPEATABLE), started)
    if outcome.get("submitted") is not None:
        update.update(submitted=True, summary=outcome["submitted"], status=OK,
                      stop_reason="submitted")
    return update


# ------------------------------------------------------------------------------- routing


def after_agent(state: BasicState) -> str:
    if state.get("status") == STOPPED:
        return END
    last = state["messages"][-1]
    return "tools" if next_call(state["messages"]) is not None or (
        isinstance(last, AIMessage) and last.invalid_tool_calls) else "nudge"


def after_tools(state: BasicState) -> str:
    if state.get("submitted"):
        return END
    return "tools" if next_call(state["messages"]) is not None else "agent"


# ------------------------------------------------------------------------------- the tools


def run_tool(call: dict[str, Any], context: RunContext,
             options: dict[str, Any]) -> tuple[str, str | None]:
    """The tool's text result, and the summary when it was `submit`."""
    if not call["valid"]:
        return (f"Error: the arguments of {call.get('name')} are not valid JSON "
                f"({call.get('error') or 'parse error'}). Encode them as a JSON object and "
                f"call the tool again."), None
    name, args = call["name"], call["args"]
    try:
        if name == "submit":
            summary = str(args.get("summary", ""))
            return json.dumps({"submitted": True, "summary": summary}, ensure_ascii=False), summary
        if name not in RUNNERS:
            return f"ToolError: unknown tool {name!r} (tools: bash, read_file_chunk, " \
                   f"search_file, submit)", None
        return RUNNERS[name](context, options, **args), None
    except (ToolError, TypeError) as exc:
        return f"ToolError: {exc}", None


def host_view(options: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """Where commands run, and how /home paths are rewritten in them.

    Normally the paths are real in the sandbox and nothing is rewritten. A replay of a
    recorded run sets `original_root` (the host folder the original ran in; the sandbox then
    shows the workspace there too), and commands are rewritten by plain string substitution
    exactly as the original did: that rewriting also changed the text of files written by
    heredocs, and a replay must write the same bytes.
    """
    root = options.get("original_root")
    if not root:
        return HOME, {}
    return f"{root}/workspace", {"/home/paper": f"{root}/workspace/paper",
                                 "/home/submission": f"{root}/workspace/repo",
                                 "/home/blacklist.txt": f"{root}/blacklist.txt"}


def rewrite(text: str, mapping: dict[str, str]) -> str:
    for prefix, target in mapping.items():
        text = text.replace(prefix, target)
    return text


def bash(context: RunContext, options: dict[str, Any], command: str) -> str:
    timeout = options["command_timeout_s"]
    cwd, mapping = host_view(options)
    rewritten = rewrite(command, mapping)
    result = context.workspace.sandbox.exec([options["shell"], "-c", rewritten], cwd=cwd,
                                            timeout=timeout)
    if result.timed_out:
        raise ToolError(f"Command '{rewritten}' timed out after {timeout:g} seconds")
    text = (f"$ {command}\n[rewritten] {rewritten}\n[exit_code] {result.exit_code}\n"
            f"[stdout]\n{result.stdout}\n[stderr]\n{result.stderr}")
    return head_tail(text, options["output_chars"], TRUNCATION_MARK)


def read_file_chunk(context: RunContext, options: dict[str, Any], path: str,
                    start_line: int = 1, num_lines: int = 120) -> str:
    """The original's pager: no character cap, a sorted listing for a folder."""
    rel = workspace_path(path)
    sandbox = context.workspace.sandbox
    shown = shown_path(rel)
    try:
        data = sandbox.read_file(rel)
    except IsADirectoryError:
        listing = sandbox.exec(["ls", "-1A", f"/workspace/{rel}"], timeout=15)
        return f"[directory] {shown}\n" + "\n".join(sorted(listing.stdout.splitlines()))
    except (FileNotFoundError, PermissionError):
        cwd, mapping = host_view(options)
        return f"File not found: {rewrite(path, mapping) if path.startswith('/') else path}"
    lines = data.decode("utf-8", errors="replace").splitlines()
    start = max(1, int(start_line))
    chosen = lines[start - 1:start - 1 + max(0, int(num_lines))]
    body = "\n".join(f"{start + i}: {line}" for i, line in enumerate(chosen))
    return f"[file] {shown}\n{body}"


def shown_path(rel: str) -> str:
    """The header path the original printed: relative to the workspace, whose submission
    folder it called `repo`."""
    if rel == "submission" or rel.startswith("submission/"):
        return "repo" + rel[len("submission"):]
    return rel


def search_file(context: RunContext, options: dict[str, Any], pattern: str, path: str) -> str:
    workspace_path(path)  # refuses paths outside the workspace
    cwd, mapping = host_view(options)
    argv = ["sh", "-c", 'if command -v rg >/dev/null; then exec rg -n -- "$0" "$1"; '
            'else exec grep -RIn -- "$0" "$1"; fi', pattern, rewrite(path, mapping)]
    result = context.workspace.sandbox.exec(argv, cwd=cwd, timeout=options["search_timeout_s"])
    if result.timed_out:
        raise ToolError(f"search timed out after {options['search_timeout_s']:g} seconds")
    text = result.stdout or result.stderr or "[no matches]"
    return head_tail(text, options["output_chars"], TRUNCATION_MARK)


RUNNERS = {"bash": bash, "read_file_chunk": read_file_chunk, "search_file": search_file}


# ------------------------------------------------------------------------------- pruning


def prune(messages: list[AnyMessage], max_messages: int) -> list[AnyMessage]:
    """The original's window: returns `messages` itself when nothing needs pruning.

    Keeps every system message and the newest non-system ones up to `max_messages`; if the
    first user message fell out it is put back and the newest message dropped (the quirk);
    tool results whose call is not in the latest assistant message are dropped; a trailing
    assistant message whose calls lack results is removed.
    """
    if len(messages) <= max_messages:
        return messages
    system = [m for m in messages if isinstance(m, SystemMessage)]
    rest = [m for m in messages if not isinstance(m, SystemMessage)]
    kept = rest[-(max_messages - len(system)):]
    first_user = next((m for m in rest if isinstance(m, HumanMessage)), None)
    if first_user is not None and all(m is not first_user for m in kept):
        kept = [first_user, *kept[:-1]]
    return _drop_dangling(system + _drop_orphan_results(kept))


def _drop_orphan_results(messages: list[AnyMessage]) -> list[AnyMessage]:
    allowed: set[str] = set()
    kept = []
    for message in messages:
        if isinstance(message, AIMessage):
            allowed = {call["id"] for call in ordered_calls(message)}
        elif isinstance(message, HumanMessage):
            allowed = set()
        elif isinstance(message, ToolMessage) and message.tool_call_id not in allowed:
            continue
        kept.append(message)
    return kept


def _drop_dangling(messages: list[AnyMessage]) -> list[AnyMessage]:
    while messages and isinstance(messages[-1], AIMessage) and ordered_calls(messages[-1]):
        messages = messages[:-1]
    return messages


# ------------------------------------------------------------------------------- the graph


class BasicAgent:
    """The registered scaffold `basic`."""

    name = "basic"
    #: The original's workspace held `paper/` and `repo/` and ran commands there, so models
    #: wrote `repo/...` relative paths: /home/repo is the submission folder too.
    workspace_links = {"repo": "submission"}
    description = ("BasicAgent: a ReAct tool loop (bash, paged reader, search, submit), "
                   "static, 30 s commands, step and time limits")

    def build(self, options: dict[str, Any] | None = None) -> CompiledStateGraph:
        nodes = {"setup": setup, "agent": agent, "tools": tools, "nudge": nudge}
        return build_tool_loop(BasicState, self.name, nodes, after_agent, after_tools)
