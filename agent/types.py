"""Value types of the agent package: model specs, prices and usage records."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ModelSpec(BaseModel):
    """A parsed model spec string such as `anthropic:claude-sonnet-4-6`."""

    model_config = ConfigDict(frozen=True)

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    base_url: str | None = None

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


class Price(BaseModel):
    """Dollars per million tokens for one model.

    `cached_input` applies to prompt tokens served from the provider's cache, `cache_write` to
    prompt tokens written into it (Anthropic bills these above the normal input price).
    """

    model_config = ConfigDict(frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


class CallUsage(BaseModel):
    """Tokens and dollars of one model call; `dollars` is None when the model has no price."""

    model_config = ConfigDict(frozen=True)

    model: str
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    dollars: float | None = None


class UsageTotals(BaseModel):
    """Sums over calls. Calls of unpriced models are counted apart so $0 never hides them."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    dollars: float = 0.0
    unpriced_calls: int = 0

    def __add__(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(**{name: getattr(self, name) + getattr(other, name)
                              for name in UsageTotals.model_fields})


class Budget(BaseModel):
    """Limits of one run, checked before every model call; None means no limit.

    Tokens count what the provider reports (cached prompt tokens included in `input_tokens`);
    seconds are the run's active wall-clock time summed over resumes, so a run resumed a day
    later is not charged for the pause.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0, description="input + output tokens")
    dollars: float | None = Field(default=None, ge=0)
    seconds: float | None = Field(default=None, ge=0)
    calls: int | None = Field(default=None, ge=0, description="model calls")
