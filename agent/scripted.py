"""A chat model that answers from a file of scripted replies (`scripted:PATH`), no key needed.

The demo matrix and tests run scaffolds end to end with it: the replies, tool calls included,
are written down in a YAML (or JSON) file, one script per kind of conversation:

    model_name: scripted-demo          # the name records and price lookups see
    scripts:
      - name: basic                    # a label for errors
        when: {tools: [submit]}        # used when the request binds all of these tools
        replies:
          - text: "Reading the paper."
            tool_calls:
              - {name: read_file_chunk, args: {path: /home/paper/paper.md}}
            input_tokens: 1500         # optional: else characters / 4 of the request
            output_tokens: 40          # optional: else characters / 4 of the reply
          - tool_calls: [{name: submit, args: {summary: done}}]

A file holding only `replies:` is one script that matches every request. `when` may also name
the LangGraph `node` making the call, a `system` substring (of the system message) or a
`prompt` substring or list of substrings (of the last human message); the first script whose
conditions all hold answers.

Like the replay model it is stateless, so a run resumed in a new process gets the replies it
would have got: the reply served is the script's entry number `turn`, the number of model calls
the run has made (request metadata `sabench_turn`, set from the checkpointed state by
`call_model`), or with `index: conversation` the number of assistant messages in the request.
A script that runs out raises `ScriptEnded`, unless it says `repeat: last`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sabench.agent.replay import TURN_KEY

#: Characters per token when a reply does not state its usage (a common rule of thumb).
CHARS_PER_TOKEN = 4


class ScriptError(ValueError):
    """A scripted-replies file that cannot be used (one line naming the file and the entry)."""


class ScriptEnded(Exception):
    """A request came after the last reply of its script."""


class ScriptedCall(BaseModel):
    """One tool call of a scripted reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptedReply(BaseModel):
    """One assistant reply; token counts default to an estimate from the text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int = Field(default=0, ge=0)


class Condition(BaseModel):
    """When a script answers: every condition given must hold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tools: list[str] = Field(default_factory=list)
    node: str | None = None
    system: str | None = None
    prompt: str | list[str] | None = None  # substring(s) of the last human message


class Script(BaseModel):
    """Replies for one kind of conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "script"
    when: Condition = Field(default_factory=Condition)
    index: Literal["turn", "conversation"] = "turn"
    repeat: Literal["last"] | None = None
    replies: list[ScriptedReply] = Field(min_length=1)


class ScriptFile(BaseModel):
    """The whole file: scripts, or the replies of a single catch-all script."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_name: str = "scripted"
    scripts: list[Script] = Field(default_factory=list)
    replies: list[ScriptedReply] = Field(default_factory=list)

    def all_scripts(self) -> list[Script]:
        catch_all = [Script(name="replies", replies=self.replies)] if self.replies else []
        return [*self.scripts, *catch_all]


def load_script(path: Path) -> ScriptFile:
    """Read and validate a scripted-replies file.

    Raises:
        ScriptError: missing file, bad YAML/JSON, or an entry that does not validate.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read the scripted replies ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ScriptError(f"{path}: not YAML/JSON: {' '.join(str(exc).split())}") from None
    try:
        script = ScriptFile.model_validate(data if data is not None else {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        raise ScriptError(f"{path}: {where}: {first['msg']}") from None
    if not script.all_scripts():
        raise ScriptError(f"{path}: no replies (give 'replies' or 'scripts')")
    return script


class ScriptedChatModel(BaseChatModel):
    """Answers every request with the next reply of the first script whose conditions hold."""

    scripts: list[Script] = Field(default_factory=list)
    model_name: str = "scripted"
    source: str = ""
    bound_tools: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """A copy that knows which tools the request offers (scripts may match on them)."""
        return self.model_copy(update={"bound_tools": [tool_name(t) for t in tools]})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        metadata = (run_manager.metadata or {}) if run_manager else {}
        script = self._pick(messages, metadata)
        index = reply_index(script, messages, metadata)
        if index >= len(script.replies):
            if script.repeat != "last":
                raise ScriptEnded(f"{self.source}: script {script.name!r} has "
                                  f"{len(script.replies)} replies; reply {index + 1} was asked for")
            index = len(script.replies) - 1
        # Unique within a run and the same on a resume (a repeated reply gets a new id).
        message_id = f"scripted-{script.name}-{index}-{len(messages)}"
        message = to_message(script.replies[index], messages, message_id)
        message.response_metadata = {"model_name": self.model_name}
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _pick(self, messages: Sequence[BaseMessage], metadata: dict[str, Any]) -> Script:
        for script in self.scripts:
            if matches(script.when, messages, metadata, self.bound_tools):
                return script
        raise ScriptEnded(f"{self.source}: no script matches this request (tools "
                          f"{self.bound_tools}, node {node_of(metadata)!r})")


def tool_name(tool: Any) -> str:
    """The name of a tool given as a LangChain tool, a function schema dict or a callable."""
    if isinstance(tool, dict):
        return str((tool.get("function") or tool).get("name", ""))
    return str(getattr(tool, "name", None) or getattr(tool, "__name__", ""))


def matches(when: Condition, messages: Sequence[BaseMessage], metadata: dict[str, Any],
            tools: Sequence[str]) -> bool:
    """Whether every condition of `when` holds for this request."""
    if not set(when.tools) <= set(tools):
        return False
    if when.node is not None and node_of(metadata) != when.node:
        return False
    if when.system is not None and not any(
            isinstance(m, SystemMessage) and when.system in text_of(m) for m in messages):
        return False
    if when.prompt is None:
        return True
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    wanted = [when.prompt] if isinstance(when.prompt, str) else when.prompt
    return bool(humans) and all(part in text_of(humans[-1]) for part in wanted)


def node_of(metadata: dict[str, Any]) -> str | None:
    """The graph node making the call: LangGraph's metadata, else the innermost segment of the
    checkpoint namespace (`scaffold:<id>|agent:<id>` -> `agent`)."""
    if metadata.get("langgraph_node"):
        return str(metadata["langgraph_node"])
    namespace = str(metadata.get("checkpoint_ns") or "")
    return namespace.rsplit("|", 1)[-1].partition(":")[0] or None


def reply_index(script: Script, messages: Sequence[BaseMessage],
                metadata: dict[str, Any]) -> int:
    """Which reply of `script` answers this request (see the module docstring)."""
    turn = metadata.get(TURN_KEY)
    if script.index == "turn" and turn is not None:
        return int(turn)
    return sum(isinstance(m, AIMessage) for m in messages)


def text_of(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block if isinstance(block, str) else str(block.get("text", ""))
                   for block in content)


def to_message(reply: ScriptedReply, messages: Sequence[BaseMessage],
               message_id: str) -> AIMessage:
    """The AIMessage of a scripted reply, with its usage (stated or estimated)."""
    calls = [{"name": call.name, "args": dict(call.args), "id": f"{message_id}-call-{i}",
              "type": "tool_call"} for i, call in enumerate(reply.tool_calls)]
    sent = sum(len(text_of(m)) for m in messages)
    answered = len(reply.text) + sum(len(json.dumps(c.args)) for c in reply.tool_calls)
    input_tokens = reply.input_tokens if reply.input_tokens is not None \
        else max(1, sent // CHARS_PER_TOKEN)
    output_tokens = reply.output_tokens if reply.output_tokens is not None \
        else max(1, answered // CHARS_PER_TOKEN)
    return AIMessage(content=reply.text, tool_calls=calls, id=message_id, usage_metadata={
        "input_tokens": input_tokens, "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
        "input_token_details": {"cache_read": min(reply.cached_tokens, input_tokens)}})


def scripted_model(path: Path) -> ScriptedChatModel:
    """The scripted model of a replies file."""
    script = load_script(path)
    return ScriptedChatModel(scripts=script.all_scripts(), model_name=script.model_name,
                             source=str(path))
