"""Usage and cost accounting through the callback handler and from usage_metadata."""

from __future__ import annotations

import threading

import pytest
from langchain_core.messages import AIMessage

from sabench.agent.types import CallUsage, Price
from sabench.agent.usage import PRICES, UsageRecorder, dollars_of, price_for, totals_of, usage_of
from tests.agent.scripted import ScriptedChatModel


def test_price_lookup_uses_longest_prefix_and_ignores_provider() -> None:
    assert price_for("gpt-4o-mini-2024-07-18") == PRICES["gpt-4o-mini"]
    assert price_for("openai:gpt-4o-2024-08-06") == PRICES["gpt-4o"]
    assert price_for("anthropic:claude-sonnet-4-6") == PRICES["claude-sonnet-4"]
    assert price_for("my-local-llama") is None


def test_dollars_split_fresh_cached_and_output_tokens() -> None:
    price = Price(input=2.0, output=10.0, cached_input=0.5)
    usage = CallUsage(model="m", input_tokens=1_000_000, cached_tokens=400_000,
                      output_tokens=100_000)
    # 600k fresh at $2/M + 400k cached at $0.5/M + 100k out at $10/M
    assert dollars_of(usage, price) == pytest.approx(1.2 + 0.2 + 1.0)


def test_usage_of_reads_usage_metadata() -> None:
    message = AIMessage(content="x", usage_metadata={
        "input_tokens": 2000, "output_tokens": 500, "total_tokens": 2500,
        "input_token_details": {"cache_read": 1000, "cache_creation": 500}})
    usage = usage_of(message, "claude-sonnet-4-6")
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == (2000, 1000, 500)
    expected = (500 * 3.0 + 1000 * 0.3 + 500 * 3.75 + 500 * 15.0) / 1e6
    assert usage.dollars == pytest.approx(expected)


def test_recorder_totals_calls_through_callbacks() -> None:
    recorder = UsageRecorder()
    model = ScriptedChatModel(replies=["a", "b", "c"], model_name="gpt-4o",
                              input_tokens_per_call=10_000, cached_tokens_per_call=2_000,
                              output_tokens_per_call=1_000, callbacks=[recorder])
    for _ in range(3):
        model.invoke("hello")
    totals = recorder.totals()
    assert (totals.calls, totals.input_tokens, totals.cached_tokens, totals.output_tokens) == (
        3, 30_000, 6_000, 3_000)
    one_call = (8_000 * 2.5 + 2_000 * 1.25 + 1_000 * 10.0) / 1e6
    assert totals.dollars == pytest.approx(3 * one_call)
    assert totals.unpriced_calls == 0


def test_unpriced_model_is_counted_not_zeroed() -> None:
    recorder = UsageRecorder()
    model = ScriptedChatModel(replies=["a"], model_name="homegrown-7b", callbacks=[recorder])
    model.invoke("hello")
    assert recorder.calls[0].dollars is None
    assert recorder.totals().unpriced_calls == 1 and recorder.totals().dollars == 0.0


def test_recorder_is_thread_safe() -> None:
    recorder = UsageRecorder(default_model="gpt-4o")
    message = AIMessage(content="x", usage_metadata={
        "input_tokens": 1, "output_tokens": 1, "total_tokens": 2})

    def work() -> None:
        for _ in range(500):
            recorder.record(message)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert recorder.totals().calls == 2000


def test_totals_add_up() -> None:
    a = totals_of([CallUsage(model="m", input_tokens=5, dollars=0.5)])
    b = totals_of([CallUsage(model="m", output_tokens=7, dollars=None)])
    both = a + b
    assert (both.calls, both.input_tokens, both.output_tokens, both.dollars,
            both.unpriced_calls) == (2, 5, 7, 0.5, 1)
