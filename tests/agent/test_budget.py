"""Budgets: the first limit reached, checked before a call."""

from __future__ import annotations

import pytest

from sabench.agent.budget import BudgetExhausted, check, exhausted
from sabench.agent.types import Budget

SPENT = {"calls": 3, "input_tokens": 900, "output_tokens": 100, "dollars": 0.5}


@pytest.mark.parametrize(("budget", "reason"), [
    (Budget(calls=3), "budget_calls"),
    (Budget(tokens=1000), "budget_tokens"),
    (Budget(input_tokens=900), "budget_input_tokens"),
    (Budget(output_tokens=100), "budget_output_tokens"),
    (Budget(dollars=0.5), "budget_dollars"),
    (Budget(seconds=10), "budget_seconds"),
])
def test_a_limit_is_reached_when_spending_meets_it(budget: Budget, reason: str) -> None:
    hit = exhausted(budget, SPENT, seconds=10.0)
    assert hit is not None and hit[0] == reason
    with pytest.raises(BudgetExhausted) as info:
        check(budget, SPENT, 10.0)
    assert info.value.reason == reason


def test_below_every_limit_nothing_is_reached() -> None:
    budget = Budget(calls=4, tokens=1001, dollars=0.51, seconds=11)
    assert exhausted(budget, SPENT, seconds=10.0) is None
    assert exhausted(Budget(), SPENT, seconds=1e9) is None  # no limits at all


def test_budgets_refuse_negative_limits() -> None:
    with pytest.raises(ValueError):
        Budget(dollars=-1)
