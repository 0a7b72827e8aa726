"""The `scripted:PATH` model: replies from a file, picked by script conditions and by turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from sabench.agent.models import ModelConfigError, make_model
from sabench.agent.replay import TURN_KEY
from sabench.agent.scripted import ScriptedChatModel, ScriptEnded
from sabench.agent.usage import UsageRecorder

SCRIPT = """
model_name: scripted-test
scripts:
  - name: tools
    when: {tools: [submit]}
    replies:
      - text: first
        tool_calls: [{name: bash, args: {command: ls}}]
        input_tokens: 100
        output_tokens: 7
      - tool_calls: [{name: submit, args: {summary: done}}]
  - name: planner
    when: {system: "You plan", prompt: "plan please"}
    index: conversation
    repeat: last
    replies:
      - text: "the plan"
"""

SUBMIT = {"type": "function", "function": {"name": "submit", "parameters": {}}}


@pytest.fixture
def model(tmp_path: Path) -> ScriptedChatModel:
    path = tmp_path / "replies.yaml"
    path.write_text(SCRIPT)
    built = make_model(f"scripted:{path}")
    assert isinstance(built, ScriptedChatModel)
    return built


def test_replies_follow_the_run_turn_and_carry_usage(model: ScriptedChatModel) -> None:
    recorder = UsageRecorder()
    bound = model.bind_tools([SUBMIT])
    first = bound.invoke([HumanMessage("go")], config={
        "callbacks": [recorder], "metadata": {TURN_KEY: 0}})
    assert first.content == "first" and first.tool_calls[0]["args"] == {"command": "ls"}
    # A new process resuming at turn 1 gets the second reply, whatever it served before.
    again = model.bind_tools([SUBMIT]).invoke([HumanMessage("go")],
                                             config={"metadata": {TURN_KEY: 1}})
    assert again.tool_calls[0]["name"] == "submit"
    totals = recorder.totals()
    assert (totals.input_tokens, totals.output_tokens, totals.unpriced_calls) == (100, 7, 1)
    assert recorder.calls[0].model == "scripted-test"
    with pytest.raises(ScriptEnded, match="2 replies; reply 3"):
        bound.invoke([HumanMessage("go")], config={"metadata": {TURN_KEY: 2}})


def test_scripts_are_chosen_by_their_conditions(model: ScriptedChatModel) -> None:
    conversation = [SystemMessage("You plan the code."), HumanMessage("plan please")]
    assert model.invoke(conversation).content == "the plan"
    # `repeat: last` serves the last reply again; the estimate counts characters / 4.
    longer = [*conversation, AIMessage("x"), HumanMessage("plan please")]
    reply = model.invoke(longer)
    assert reply.content == "the plan" and reply.usage_metadata["output_tokens"] == 2
    with pytest.raises(ScriptEnded, match="no script matches"):
        model.invoke([HumanMessage("something else")])


@pytest.mark.parametrize(("text", "message"), [
    ("replies: []", "no replies"),
    ("replies: [{txt: a}]", "replies.0.txt: Extra inputs are not permitted"),
    ("scripts: [{replies: [{text: a}], index: sometimes}]", "scripts.0.index"),
    ("replies: [", "not YAML/JSON"),
])
def test_bad_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ModelConfigError) as info:
        make_model(f"scripted:{path}")
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="cannot read the scripted replies"):
        make_model(f"scripted:{tmp_path / 'none.yaml'}")
