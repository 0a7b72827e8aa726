"""Prompt caching of the stable prefix: the mark itself, and what each client sends over the
wire to the loopback model server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sabench.agent.caching import CACHE_CONTROL, mark_cacheable
from sabench.agent.models import make_model
from sabench.agent.usage import UsageRecorder
from tests.agent.model_server import LoopbackModelServer, Reply

PAPER = "# SmoothLR\n\nWe train with a learning rate of 3e-4 and cosine decay."


@pytest.fixture(autouse=True)
def _fake_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")


def conversation() -> list[BaseMessage]:
    return [SystemMessage("You reproduce papers."), HumanMessage(PAPER),
            AIMessage("I will start with the config."), HumanMessage("Go on.")]


def marks(value: Any) -> int:
    """How many cache_control keys a request body holds."""
    return json.dumps(value).count('"cache_control"')


def test_a_string_content_becomes_one_marked_text_block() -> None:
    messages = conversation()
    marked = mark_cacheable(messages, 2, "anthropic")
    assert marked[1].content == [{"type": "text", "text": PAPER, "cache_control": CACHE_CONTROL}]
    assert [m.content for m in marked[:1] + marked[2:]] == [
        m.content for m in messages[:1] + messages[2:]]
    assert messages[1].content == PAPER  # the caller's messages are left alone
    assert type(marked[1]) is HumanMessage and marked[1].id == messages[1].id


def test_only_the_last_block_of_a_list_content_is_marked() -> None:
    paper = HumanMessage([{"type": "text", "text": "Paper:"}, "the body of the paper"])
    marked = mark_cacheable([SystemMessage("s"), paper], 2, "anthropic:claude-sonnet-4-6")
    assert marked[1].content == [
        {"type": "text", "text": "Paper:"},
        {"type": "text", "text": "the body of the paper", "cache_control": CACHE_CONTROL}]
    assert paper.content[1] == "the body of the paper"


def test_marking_twice_is_marking_once() -> None:
    once = mark_cacheable(conversation(), 2, "anthropic")
    assert mark_cacheable(once, 2, "anthropic")[1].content == once[1].content


@pytest.mark.parametrize("provider", ["openai", "openai-compatible", "openai:gpt-4o",
                                      "scripted", "replay"])
def test_other_providers_get_the_messages_unchanged(provider: str) -> None:
    messages = conversation()
    marked = mark_cacheable(messages, 2, provider)
    assert marked == messages and marked is not messages


def test_nothing_is_marked_on_an_empty_prefix_or_an_empty_message() -> None:
    assert mark_cacheable(conversation(), 0, "anthropic") == conversation()
    empty = [SystemMessage("s"), HumanMessage("")]
    assert mark_cacheable(empty, 2, "anthropic") == empty


@pytest.mark.parametrize("prefix_len", [-1, 5])
def test_a_prefix_outside_the_conversation_is_an_error(prefix_len: int) -> None:
    with pytest.raises(ValueError, match="prefix_len"):
        mark_cacheable(conversation(), prefix_len, "anthropic")


# --- over the wire ---------------------------------------------------------------------------

def anthropic(server: LoopbackModelServer, recorder: UsageRecorder | None = None) -> Any:
    return make_model("anthropic:claude-sonnet-4-6", base_url=server.anthropic_url,
                      callbacks=[recorder] if recorder else ())


def openai(server: LoopbackModelServer) -> Any:
    return make_model("openai:gpt-4o", base_url=server.openai_url)


def test_anthropic_requests_carry_the_mark_on_the_paper_and_report_cache_reads(
        model_server: LoopbackModelServer) -> None:
    recorder = UsageRecorder()
    model_server.enqueue(Reply(text="a", input_tokens=5000, cached_tokens=0,
                               cache_write_tokens=4800),
                         Reply(text="b", input_tokens=5100, cached_tokens=4800))
    model = anthropic(model_server, recorder)
    history = conversation()
    model.invoke(mark_cacheable(history, 2, "anthropic"))
    history += [AIMessage("Config written."), HumanMessage("Now the model.")]
    model.invoke(mark_cacheable(history, 2, "anthropic"))
    first, second = (r.body for r in model_server.requests)
    for body in (first, second):
        assert marks(body) == 1 and marks(body["system"]) == 0
        assert body["messages"][0]["content"][-1] == {
            "type": "text", "text": PAPER, "cache_control": CACHE_CONTROL}
    # the cached prefix must be byte-identical from one call to the next
    assert json.dumps([first["system"], first["messages"][0]]) == json.dumps(
        [second["system"], second["messages"][0]])
    calls = recorder.calls
    assert [(c.cached_tokens, c.cache_write_tokens) for c in calls] == [(0, 4800), (4800, 0)]
    assert [c.input_tokens for c in calls] == [5000, 5100]
    assert recorder.totals().cached_tokens == 4800
    # claude-sonnet-4: the second call pays $0.30 instead of $3 per million cached tokens
    assert calls[1].dollars == pytest.approx((300 * 3 + 4800 * 0.3 + 20 * 15) / 1e6)


def test_a_prefix_of_the_system_prompt_alone_marks_the_system_field(
        model_server: LoopbackModelServer) -> None:
    model_server.enqueue(Reply(text="ok"))
    anthropic(model_server).invoke(mark_cacheable(conversation(), 1, "anthropic"))
    body = model_server.requests[0].body
    assert body["system"][-1] == {"type": "text", "text": "You reproduce papers.",
                                  "cache_control": CACHE_CONTROL}
    assert marks(body) == 1


def test_openai_requests_stay_free_of_the_anthropic_key(
        model_server: LoopbackModelServer) -> None:
    recorder = UsageRecorder()
    model_server.enqueue(Reply(text="ok", input_tokens=5000, cached_tokens=4096))
    model = make_model("openai:gpt-4o", base_url=model_server.openai_url,
                       callbacks=[recorder])
    model.invoke(mark_cacheable(conversation(), 2, "openai"))
    body = model_server.requests[0].body
    assert marks(body) == 0
    assert body["messages"][1] == {"role": "user", "content": PAPER}
    assert recorder.totals().cached_tokens == 4096  # OpenAI caches by itself


def test_langchain_openai_would_forward_the_key_which_is_why_marking_asks_the_provider(
        model_server: LoopbackModelServer) -> None:
    """If langchain-openai ever drops unknown block keys, this fails: the provider argument of
    `mark_cacheable` may then go."""
    model_server.enqueue(Reply(text="ok"))
    openai(model_server).invoke(mark_cacheable(conversation(), 2, "anthropic"))
    assert marks(model_server.requests[0].body) == 1
