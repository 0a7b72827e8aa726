"""BasicAgent's message window, quirks included."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from sabench.agent.toolcalls import next_call
from sabench.scaffolds.basic import prune


def step(i: int) -> list:
    call = {"name": "bash", "args": {"command": f"echo {i}"}, "id": f"c{i}"}
    return [AIMessage("", tool_calls=[call], id=f"a{i}"), ToolMessage(f"{i}", tool_call_id=f"c{i}")]


def conversation(steps: int) -> list:
    messages = [SystemMessage("sys"), HumanMessage("task")]
    for i in range(steps):
        messages += step(i)
    return messages


def test_a_short_conversation_is_left_alone() -> None:
    messages = conversation(5)
    assert prune(messages, 200) is messages


def test_the_first_user_message_comes_back_and_the_newest_message_goes() -> None:
    messages = conversation(10)  # 22 messages
    window = prune(messages, 9)
    assert isinstance(window[0], SystemMessage) and window[1].content == "task"
    # The quirk dropped the newest tool result, so its call is dangling and goes too.
    assert messages[-1] not in window and messages[-2] not in window
    assert window[-1].tool_call_id == "c8"
    assert len(window) <= 9


def test_tool_results_whose_call_fell_out_are_dropped() -> None:
    messages = conversation(10)
    window = prune(messages, 8)
    ids = {m.id for m in window if isinstance(m, AIMessage)}
    for message in window:
        if isinstance(message, ToolMessage):
            assert "a" + message.tool_call_id[1:] in ids


def test_next_call_finds_the_first_unanswered_call_of_the_last_reply() -> None:
    calls = [{"name": "bash", "args": {}, "id": "x"}, {"name": "submit", "args": {}, "id": "y"}]
    messages = [HumanMessage("go"), AIMessage("", tool_calls=calls, id="m")]
    assert next_call(messages)["id"] == "x"
    assert next_call([*messages, ToolMessage("ok", tool_call_id="x")])["id"] == "y"
    assert next_call([*messages, ToolMessage("ok", tool_call_id="x"),
                      ToolMessage("ok", tool_call_id="y")]) is None
