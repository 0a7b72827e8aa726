"""A chat model that serves a recorded run's assistant messages.

It is stateless: the reply it serves is chosen by the request it is given. When the request's
metadata carries `sabench_turn` (how many model calls the run has made: `call_model` sets it
from the checkpointed state), that is the index served. Otherwise every reply it serves carries
the id `replay-<index>`, and the next reply is the one after the newest such id in the
conversation (the first one when there is none). Either way it survives a resume in a new
process like a real model would. The turn number is needed when a scaffold prunes its window
so that the newest reply falls out (BasicAgent's pruning can drop it): the conversation alone no
longer says how far the run has come.

Recordings are in the SA-Bench release layout: `messages.jsonl` (one `{"time", "message"}` per
line; assistant messages with OpenAI-style `tool_calls`) and, beside it, `meta.json` whose
`usage.step_timings` give each step's token counts (served as the reply's usage).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from sabench.verifiers.files import read_json

REPLY_ID = re.compile(r"^replay-(\d+)$")
#: Request metadata key holding the number of model calls a run has made.
TURN_KEY = "sabench_turn"


class RecordingEnded(Exception):
    """The conversation asks for a reply after the recording's last one."""


class RecordingError(ValueError):
    """A recording that cannot be read (one line naming the file and the entry)."""


class ReplayChatModel(BaseChatModel):
    """Serves `replies` (OpenAI-style assistant message dicts) in conversation order."""

    replies: list[dict[str, Any]] = Field(default_factory=list)
    usages: list[dict[str, int]] = Field(default_factory=list)
    model_name: str = "replay"

    @property
    def _llm_type(self) -> str:
        return "replay"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ReplayChatModel:
        return self  # the recording already holds the tool calls the model made

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        turn = (run_manager.metadata or {}).get(TURN_KEY) if run_manager else None
        index = int(turn) if turn is not None else next_index(messages)
        if index >= len(self.replies):
            raise RecordingEnded(f"the recording has {len(self.replies)} replies; "
                                 f"reply {index + 1} was asked for")
        message = to_ai_message(self.replies[index], f"replay-{index}")
        usage = self.usages[index] if index < len(self.usages) else {}
        message.usage_metadata = {
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "total_tokens": usage.get("input_tokens", 0) + usage.get("output_tokens", 0)}
        message.response_metadata = {"model_name": self.model_name}
        return ChatResult(generations=[ChatGeneration(message=message)])


def next_index(messages: Sequence[BaseMessage]) -> int:
    """One past the newest served reply found in the conversation."""
    for message in reversed(messages):
        match = REPLY_ID.match(str(getattr(message, "id", "") or ""))
        if isinstance(message, AIMessage) and match:
            return int(match.group(1)) + 1
    return 0


def to_ai_message(recorded: dict[str, Any], message_id: str) -> AIMessage:
    """An AIMessage with the recorded calls (arguments that are not JSON become invalid
    calls, as a real client would report them)."""
    calls, invalid = [], []
    for raw in recorded.get("tool_calls") or []:
        function = raw.get("function") or {}
        arguments = function.get("arguments") or ""
        try:
            args = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(args, dict):
                raise ValueError("arguments are not a JSON object")
        except ValueError as exc:
            invalid.append({"name": function.get("name"), "args": arguments,
                            "id": raw.get("id"), "error": str(exc), "type": "invalid_tool_call"})
            continue
        calls.append({"name": function.get("name"), "args": args, "id": raw.get("id"),
                      "type": "tool_call"})
    return AIMessage(content=recorded.get("content") or "", tool_calls=calls,
                     invalid_tool_calls=invalid, id=message_id,
                     additional_kwargs={"tool_calls": recorded.get("tool_calls") or []})


def recording_files(path: Path) -> tuple[Path, Path]:
    """`messages.jsonl` and `meta.json` of a recording given as its folder or its messages."""
    path = Path(path)
    messages = path / "messages.jsonl" if path.is_dir() else path
    if not messages.is_file():
        raise RecordingError(f"{messages}: no recorded messages (messages.jsonl) here")
    return messages, messages.parent / "meta.json"


def load_recorded_messages(path: Path) -> list[dict[str, Any]]:
    """Every recorded message (assistant, tool, user) in order."""
    messages_file, _ = recording_files(path)
    found = []
    with open(messages_file, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:  # decoded here: a line that is not UTF-8 is this line's error, one line
                entry = json.loads(raw.decode("utf-8"))
                message = entry["message"]
                message["role"]
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                raise RecordingError(f"{messages_file}: line {number} is not a recorded "
                                     f"message ({exc})") from None
            found.append(message)
    return found


def load_step_usage(path: Path) -> list[dict[str, int]]:
    """Per-step token counts from `meta.json` (empty when the run recorded none)."""
    _, meta_file = recording_files(path)
    if not meta_file.is_file():
        return []
    meta = read_json(meta_file, RecordingError, "cannot read the run's meta.json")
    try:
        steps = meta.get("usage", {}).get("step_timings") or []
        return [{"input_tokens": int(s.get("input_tokens") or 0),
                 "output_tokens": int(s.get("output_tokens") or 0)} for s in steps]
    except (ValueError, AttributeError, TypeError) as exc:
        raise RecordingError(f"{meta_file}: usage.step_timings is not a list of steps with "
                             f"token counts ({exc})") from None


def recorded_model_name(path: Path) -> str:
    _, meta_file = recording_files(path)
    try:
        return str(read_json(meta_file, RecordingError).get("model_name") or "replay")
    except (RecordingError, AttributeError):
        return "replay"


def replay_model(path: Path) -> ReplayChatModel:
    """The replay model of a recorded run."""
    replies = [m for m in load_recorded_messages(path) if m["role"] == "assistant"]
    return ReplayChatModel(replies=replies, usages=load_step_usage(path),
                           model_name=recorded_model_name(path))
