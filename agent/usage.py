"""Usage and cost accounting: tokens in/out/cached and dollars for every model call.

A `UsageRecorder` is a langchain callback handler: pass it in a model's `callbacks` (or a call's
`config={"callbacks": [...]}`) and every chat-model response that carries `usage_metadata` is
recorded. Dollars come from `PRICES`, a table of list prices per million tokens; a model that is
not in the table is recorded with `dollars=None` and counted in `unpriced_calls`, never as $0.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from sabench.agent.types import CallUsage, Price, UsageTotals

# List prices in USD per million tokens, checked 2026-05 on the providers' pricing pages.
# Keys are model-name prefixes: `price_for` picks the longest key the model name starts with,
# so dated snapshots (`gpt-4o-2024-08-06`) share their family's price.
PRICES: dict[str, Price] = {
    "claude-opus-4": Price(input=15.0, output=75.0, cached_input=1.5, cache_write=18.75),
    "claude-sonnet-4": Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75),
    "claude-haiku-4": Price(input=1.0, output=5.0, cached_input=0.1, cache_write=1.25),
    "claude-3-5-haiku": Price(input=0.8, output=4.0, cached_input=0.08, cache_write=1.0),
    "gpt-4o-mini": Price(input=0.15, output=0.6, cached_input=0.075),
    "gpt-4o": Price(input=2.5, output=10.0, cached_input=1.25),
    "gpt-4.1-nano": Price(input=0.1, output=0.4, cached_input=0.025),
    "gpt-4.1-mini": Price(input=0.4, output=1.6, cached_input=0.1),
    "gpt-4.1": Price(input=2.0, output=8.0, cached_input=0.5),
    "gpt-5-nano": Price(input=0.05, output=0.4, cached_input=0.005),
    "gpt-5-mini": Price(input=0.25, output=2.0, cached_input=0.025),
    "gpt-5": Price(input=1.25, output=10.0, cached_input=0.125),
    "o3-mini": Price(input=1.1, output=4.4, cached_input=0.55),
    "o4-mini": Price(input=1.1, output=4.4, cached_input=0.275),
    "gemini-2.5-flash": Price(input=0.3, output=2.5, cached_input=0.075),
    "gemini-2.5-pro": Price(input=1.25, output=10.0, cached_input=0.31),
    "deepseek-chat": Price(input=0.28, output=0.42, cached_input=0.028),
    "deepseek-reasoner": Price(input=0.28, output=0.42, cached_input=0.028),
}


def price_for(model: str, prices: Mapping[str, Price] = PRICES) -> Price | None:
    """The price of `model` (provider prefix ignored), or None when the table lacks it."""
    name = model.split(":", 1)[-1].split("/")[-1].lower()
    matches = [key for key in prices if name.startswith(key.lower())]
    return prices[max(matches, key=len)] if matches else None


def usage_of(message: BaseMessage, model: str, prices: Mapping[str, Price] = PRICES) -> CallUsage:
    """Tokens and dollars of one response, from its `usage_metadata` (zeros when absent)."""
    meta: Mapping[str, Any] = getattr(message, "usage_metadata", None) or {}
    details: Mapping[str, Any] = meta.get("input_token_details") or {}
    cached = int(details.get("cache_read") or 0)
    written = int(details.get("cache_creation") or 0)
    usage = CallUsage(model=model, input_tokens=int(meta.get("input_tokens") or 0),
                      output_tokens=int(meta.get("output_tokens") or 0),
                      cached_tokens=cached, cache_write_tokens=written)
    return usage.model_copy(update={"dollars": dollars_of(usage, price_for(model, prices))})


def dollars_of(usage: CallUsage, price: Price | None) -> float | None:
    """Cost of a call. Both providers count cache reads and writes inside `input_tokens`."""
    if price is None:
        return None
    fresh = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
    cached_price = price.input if price.cached_input is None else price.cached_input
    write_price = price.input if price.cache_write is None else price.cache_write
    total = (fresh * price.input + usage.cached_tokens * cached_price
             + usage.cache_write_tokens * write_price + usage.output_tokens * price.output)
    return total / 1_000_000


def model_name_of(message: BaseMessage, default: str) -> str:
    """The model that answered, as the provider reports it, else `default`."""
    meta = getattr(message, "response_metadata", None) or {}
    return str(meta.get("model_name") or meta.get("model") or default)


def totals_of(calls: list[CallUsage]) -> UsageTotals:
    """Sum a list of call records."""
    return UsageTotals(
        calls=len(calls),
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        cached_tokens=sum(c.cached_tokens for c in calls),
        cache_write_tokens=sum(c.cache_write_tokens for c in calls),
        dollars=sum(c.dollars for c in calls if c.dollars is not None),
        unpriced_calls=sum(c.dollars is None for c in calls),
    )


class UsageRecorder(BaseCallbackHandler):
    """Records every chat-model response it sees; safe to share between threads.

    Args:
        default_model: name used when a response does not say which model produced it.
        prices: the price table (defaults to `PRICES`).
    """

    def __init__(self, default_model: str = "unknown",
                 prices: Mapping[str, Price] = PRICES) -> None:
        super().__init__()
        self.default_model = default_model
        self.prices = prices
        self._calls: list[CallUsage] = []
        self._lock = threading.Lock()

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                if isinstance(generation, ChatGeneration):
                    self.record(generation.message)

    def record(self, message: BaseMessage) -> CallUsage:
        """Record one response directly (for callers that do not use callbacks)."""
        model = model_name_of(message, self.default_model)
        usage = usage_of(message, model, self.prices)
        with self._lock:
            self._calls.append(usage)
        return usage

    @property
    def calls(self) -> list[CallUsage]:
        with self._lock:
            return list(self._calls)

    def totals(self) -> UsageTotals:
        return totals_of(self.calls)

