"""Model registry: spec strings to langchain chat models.

Spec strings name a provider and a model: `anthropic:claude-sonnet-4-6`, `openai:gpt-4o`,
`openai-compatible:deepseek-v4-pro` (any server speaking the OpenAI chat API; its base URL comes
from the `base_url` argument or `OPENAI_BASE_URL`), `replay:PATH` (a recorded run's replies),
`scripted:PATH` (replies written in a file, see `agent/scripted.py`).
A new provider is one factory in `PROVIDERS`.
Construction never touches the network; keys are read from the providers' usual variables.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel

from sabench.agent.types import ModelSpec


class ModelConfigError(ValueError):
    """A model spec that cannot be parsed or a provider that is not configured (one line)."""


ModelFactory = Callable[[ModelSpec, dict[str, Any]], BaseChatModel]


def _anthropic(spec: ModelSpec, options: dict[str, Any]) -> BaseChatModel:
    from langchain_anthropic import ChatAnthropic

    if not (options.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")):
        raise ModelConfigError(f"{spec}: set ANTHROPIC_API_KEY to use Anthropic models")
    options.setdefault("max_tokens", 8192)
    if spec.base_url:
        options["base_url"] = spec.base_url
    return ChatAnthropic(model=spec.model, **options)


def _openai(spec: ModelSpec, options: dict[str, Any]) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    if not (options.get("api_key") or os.environ.get("OPENAI_API_KEY")):
        raise ModelConfigError(f"{spec}: set OPENAI_API_KEY to use OpenAI models")
    if spec.base_url:
        options["base_url"] = spec.base_url
    return ChatOpenAI(model=spec.model, **options)


def _openai_compatible(spec: ModelSpec, options: dict[str, Any]) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    if not spec.base_url:
        raise ModelConfigError(
            f"{spec}: an openai-compatible model needs a base URL (--base-url or OPENAI_BASE_URL)")
    # Self-hosted servers (vLLM, llama.cpp) accept any key; hosted ones read OPENAI_API_KEY.
    options.setdefault("api_key", os.environ.get("OPENAI_API_KEY") or "not-needed")
    return ChatOpenAI(model=spec.model, base_url=spec.base_url, **options)


def _replay(spec: ModelSpec, options: dict[str, Any]) -> BaseChatModel:
    """A recorded run's replies (`replay:PATH`, PATH its folder or its messages.jsonl); a
    PaperCoder recording also takes `released`, the repository its coding replies wrote."""
    from pathlib import Path

    path = Path(spec.model)
    if (path / "planning_response.json").is_file():
        from sabench.agent.replay_papercoder import papercoder_replay

        return papercoder_replay(path, options.get("released"))
    from sabench.agent.replay import replay_model

    return replay_model(path)


def _scripted(spec: ModelSpec, options: dict[str, Any]) -> BaseChatModel:
    """Replies from a file (`scripted:PATH`): demos and tests that need no key."""
    from pathlib import Path

    from sabench.agent.scripted import ScriptError, scripted_model

    try:
        return scripted_model(Path(spec.model))
    except ScriptError as exc:
        raise ModelConfigError(str(exc)) from None


PROVIDERS: dict[str, ModelFactory] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-compatible": _openai_compatible,
    "replay": _replay,
    "scripted": _scripted,
}


def parse_model_spec(text: str, base_url: str | None = None) -> ModelSpec:
    """Parse `provider:model`; `openai-compatible` takes `base_url` or `OPENAI_BASE_URL`.

    Raises:
        ModelConfigError: the string has no provider or model, or the provider is unknown.
    """
    provider, sep, model = text.strip().partition(":")
    if not sep or not provider or not model:
        raise ModelConfigError(
            f"model spec {text!r}: expected 'provider:model', providers: {', '.join(PROVIDERS)}")
    if provider not in PROVIDERS:
        raise ModelConfigError(
            f"model spec {text!r}: unknown provider {provider!r} (known: {', '.join(PROVIDERS)})")
    if base_url is None and provider == "openai-compatible":
        base_url = os.environ.get("OPENAI_BASE_URL") or None
    return ModelSpec(provider=provider, model=model, base_url=base_url)


def make_model(spec: str | ModelSpec, *, base_url: str | None = None,
               callbacks: Sequence[BaseCallbackHandler] = (), temperature: float | None = 0.0,
               timeout: float | None = 120.0, max_retries: int = 2,
               **options: Any) -> BaseChatModel:
    """Build the chat model a spec names.

    Args:
        spec: a spec string or a parsed `ModelSpec`.
        base_url: server URL (required for `openai-compatible` unless OPENAI_BASE_URL is set).
        callbacks: handlers attached to every call, e.g. a `UsageRecorder`.
        temperature: sampling temperature; None leaves the provider default (some reasoning
            models reject any other value).
        timeout: seconds per request.
        max_retries: the SDK's own retries of transient HTTP errors.
        **options: passed to the langchain constructor unchanged.

    Raises:
        ModelConfigError: bad spec, unknown provider, missing key or base URL.
    """
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec, base_url)
    if base_url and parsed.base_url != base_url:
        parsed = parsed.model_copy(update={"base_url": base_url})
    settings: dict[str, Any] = {"timeout": timeout, "max_retries": max_retries, **options}
    if temperature is not None:
        settings["temperature"] = temperature
    if callbacks:
        settings["callbacks"] = list(callbacks)
    return PROVIDERS[parsed.provider](parsed, settings)
