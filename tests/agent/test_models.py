"""Model spec parsing and construction (no network: constructing a model makes no call)."""

from __future__ import annotations

import os

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI

from sabench.agent.models import PROVIDERS, ModelConfigError, make_model, parse_model_spec
from sabench.agent.usage import UsageRecorder


def test_parse_spec_splits_provider_and_model() -> None:
    spec = parse_model_spec("anthropic:claude-sonnet-4-6")
    assert (spec.provider, spec.model, str(spec)) == (
        "anthropic", "claude-sonnet-4-6", "anthropic:claude-sonnet-4-6")


def test_model_names_may_contain_colons() -> None:
    assert parse_model_spec("openai-compatible:qwen:7b", "http://h/v1").model == "qwen:7b"


@pytest.mark.parametrize("text", ["claude", ":gpt-4o", "openai:", "mistral:large"])
def test_bad_specs_are_one_line_errors(text: str) -> None:
    with pytest.raises(ModelConfigError) as info:
        parse_model_spec(text)
    assert text in str(info.value) and "\n" not in str(info.value)


def test_registry_holds_the_providers() -> None:
    assert set(PROVIDERS) == {"anthropic", "openai", "openai-compatible", "replay", "scripted"}


def test_replay_spec_builds_the_replay_model_of_a_recording(tmp_path) -> None:
    from sabench.agent.replay import RecordingError, ReplayChatModel

    (tmp_path / "messages.jsonl").write_text(
        '{"time": "t", "message": {"role": "assistant", "content": "hi"}}\n')
    model = make_model(f"replay:{tmp_path}")
    assert isinstance(model, ReplayChatModel) and model.replies[0]["content"] == "hi"
    with pytest.raises(RecordingError, match="no recorded messages"):
        make_model(f"replay:{tmp_path / 'missing'}")


def test_anthropic_model_is_built_with_callbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    recorder = UsageRecorder()
    model = make_model("anthropic:claude-sonnet-4-6", callbacks=[recorder])
    assert isinstance(model, ChatAnthropic)
    assert model.model == "claude-sonnet-4-6" and model.temperature == 0.0
    assert recorder in model.callbacks


def test_openai_model_without_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        make_model("openai:gpt-4o")


def test_openai_model_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = make_model("openai:gpt-4o", temperature=None)
    assert isinstance(model, ChatOpenAI) and model.model_name == "gpt-4o"


def test_openai_compatible_takes_base_url_argument_or_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelConfigError, match="base URL"):
        make_model("openai-compatible:deepseek-v4-pro")
    explicit = make_model("openai-compatible:deepseek-v4-pro", base_url="http://judge.local/v1")
    assert isinstance(explicit, ChatOpenAI)
    assert explicit.openai_api_base == "http://judge.local/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://from-env.local/v1")
    from_env = make_model("openai-compatible:deepseek-v4-pro")
    assert from_env.openai_api_base == "http://from-env.local/v1"
    assert from_env.model_name == "deepseek-v4-pro"


@pytest.mark.llm
def test_real_anthropic_call_records_usage() -> None:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        pytest.skip("no ANTHROPIC_API_KEY")
    recorder = UsageRecorder()
    model = make_model("anthropic:claude-haiku-4-5", callbacks=[recorder], max_tokens=16)
    model.invoke("Reply with the single word: ok")
    totals = recorder.totals()
    assert totals.calls == 1 and totals.input_tokens > 0 and totals.dollars > 0
