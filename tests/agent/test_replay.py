"""The replay model: stateless choice of the next recorded reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from sabench.agent.replay import (
    RecordingEnded,
    RecordingError,
    ReplayChatModel,
    load_recorded_messages,
    replay_model,
    to_ai_message,
)

REPLIES = [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
    {"role": "assistant", "content": "thinking", "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{bad"}}]},
    {"role": "assistant", "content": "done"},
]


def test_replies_follow_the_conversation_not_the_number_of_calls() -> None:
    model = ReplayChatModel(replies=REPLIES)
    first = model.invoke([HumanMessage("go")])
    assert first.id == "replay-0" and first.tool_calls[0]["args"] == {"command": "ls"}
    conversation = [HumanMessage("go"), first, ToolMessage("out", tool_call_id="c1")]
    second = model.invoke(conversation)
    # Asked again with the same conversation (a resume), it answers the same.
    assert model.invoke(conversation).id == second.id == "replay-1"
    assert second.invalid_tool_calls and second.invalid_tool_calls[0]["id"] == "c2"
    assert model.invoke([*conversation, second]).content == "done"
    with pytest.raises(RecordingEnded):
        model.invoke([*conversation, second, AIMessage("done", id="replay-2")])


def test_the_turn_in_the_request_metadata_wins_over_a_pruned_conversation() -> None:
    model = ReplayChatModel(replies=REPLIES)
    pruned = [HumanMessage("go")]  # the window lost every earlier reply
    assert model.invoke(pruned, config={"metadata": {"sabench_turn": 2}}).id == "replay-2"


def test_recorded_usage_is_served(tmp_path: Path) -> None:
    (tmp_path / "messages.jsonl").write_text("".join(
        json.dumps({"time": "t", "message": m}) + "\n" for m in REPLIES))
    (tmp_path / "meta.json").write_text(json.dumps({"model_name": "gpt-4o", "usage": {
        "step_timings": [{"step": 1, "input_tokens": 120, "output_tokens": 7}]}}))
    model = replay_model(tmp_path)
    reply = model.invoke([HumanMessage("go")])
    assert reply.usage_metadata["input_tokens"] == 120
    assert reply.response_metadata["model_name"] == "gpt-4o"


def test_a_broken_recording_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "messages.jsonl").write_text('{"message": {"role": "tool"}}\nnot json\n')
    with pytest.raises(RecordingError, match=r"messages\.jsonl: line 2"):
        load_recorded_messages(tmp_path)
    with pytest.raises(RecordingError, match="no recorded messages"):
        load_recorded_messages(tmp_path / "nowhere")


def test_a_hostile_recording_is_one_line_naming_the_file(tmp_path: Path) -> None:
    good = json.dumps({"message": {"role": "assistant", "content": "hi"}}) + "\n"
    (tmp_path / "messages.jsonl").write_bytes(good.encode() + b'{"message": "\xff\xfe"}\n')
    with pytest.raises(RecordingError, match=r"messages\.jsonl: line 2"):
        load_recorded_messages(tmp_path)
    (tmp_path / "messages.jsonl").write_text(good + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(RecordingError, match=r"messages\.jsonl: line 2"):
        load_recorded_messages(tmp_path)
    (tmp_path / "messages.jsonl").write_text(good)
    for meta in ('{"usage": {"step_timings": 5}}', '{"usage": {"step_timings": [3]}}',
                 "[" * 100_000, '{"usage": '):
        (tmp_path / "meta.json").write_text(meta)
        with pytest.raises(RecordingError, match=r"meta\.json"):
            replay_model(tmp_path)


def test_arguments_that_are_json_but_not_an_object_are_invalid() -> None:
    message = to_ai_message({"tool_calls": [{"id": "x", "function": {
        "name": "bash", "arguments": "[1, 2]"}}]}, "replay-0")
    assert not message.tool_calls and message.invalid_tool_calls[0]["id"] == "x"
