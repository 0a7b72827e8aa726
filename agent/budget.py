"""Budgets: which limit, if any, a run has reached before its next model call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sabench.agent.types import Budget

#: Stop reasons a budget can give, in the order they are checked.
BUDGET_REASONS = ("budget_calls", "budget_tokens", "budget_input_tokens",
                  "budget_output_tokens", "budget_dollars", "budget_seconds")


class BudgetExhausted(Exception):
    """Raised instead of a model call that the budget no longer allows.

    Attributes:
        reason: one of `BUDGET_REASONS`.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def exhausted(budget: Budget, usage: Mapping[str, Any], seconds: float) -> tuple[str, str] | None:
    """The first limit that `usage` (a `UsageTotals` dump) and `seconds` have reached.

    A limit is reached when the amount spent is at or above it: the next call could only
    overshoot it further.
    """
    spent = {
        "budget_calls": (usage.get("calls", 0), budget.calls),
        "budget_tokens": (usage.get("input_tokens", 0) + usage.get("output_tokens", 0),
                          budget.tokens),
        "budget_input_tokens": (usage.get("input_tokens", 0), budget.input_tokens),
        "budget_output_tokens": (usage.get("output_tokens", 0), budget.output_tokens),
        "budget_dollars": (usage.get("dollars", 0.0), budget.dollars),
        "budget_seconds": (seconds, budget.seconds),
    }
    for reason in BUDGET_REASONS:
        amount, limit = spent[reason]
        if limit is not None and amount >= limit:
            return reason, f"spent {amount:g} of {limit:g}"
    return None


def check(budget: Budget, usage: Mapping[str, Any], seconds: float) -> None:
    """Raise `BudgetExhausted` when a limit is reached."""
    hit = exhausted(budget, usage, seconds)
    if hit is not None:
        raise BudgetExhausted(*hit)
