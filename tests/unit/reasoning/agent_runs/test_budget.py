"""A run's budget of input tokens, and which step is its last (reasoning-format.md, "Limits on calls")."""

from __future__ import annotations

import json

from parley.models.providers.base import Usage
from parley.reasoning.agent_runs.budget import DEFAULT_MAX_INPUT_TOKENS, Budget, input_tokens


def test_the_default_is_2_million_input_tokens() -> None:
    assert DEFAULT_MAX_INPUT_TOKENS == 2_000_000
    assert Budget().max_input_tokens == 2_000_000
    assert Budget().left == 2_000_000


def test_steps_are_counted() -> None:
    budget = Budget(100_000)
    budget.after_step(10_000, 40_000)
    budget.after_step(12_000, 48_000)
    assert budget.used == 22_000
    assert budget.left == 78_000


def test_the_next_step_is_estimated_from_the_step_before() -> None:
    budget = Budget(100_000)
    assert budget.estimate_next(1_000) is None  # no step before
    budget.after_step(10_000, 40_000)  # 4 bytes a token
    assert budget.estimate_next(8_000) == 12_000
    assert budget.estimate_next(1) == 10_001  # rounded up


def test_the_step_is_the_last_when_the_budget_would_not_cover_another_after_it() -> None:
    budget = Budget(100_000)
    budget.after_step(30_000, 120_000)  # 70,000 left
    assert not budget.next_is_last(35_000)  # 35,000 left after it: another of 35,000 fits
    assert budget.next_is_last(35_001)
    assert budget.next_is_last(80_000)


def test_with_no_estimate_only_an_empty_budget_makes_the_step_the_last() -> None:
    assert not Budget(10).next_is_last(None)
    spent = Budget(10)
    spent.after_step(10, 40)
    assert spent.next_is_last(None)


def test_a_step_the_provider_did_not_count_is_counted_at_4_bytes_a_token() -> None:
    budget = Budget(1_000)
    budget.after_step(None, 401)
    assert budget.used == 101
    budget.after_step(None)
    assert budget.used == 101


def test_input_tokens_of_a_step_include_the_cache() -> None:
    assert input_tokens(Usage(input_uncached=100, input_cache_read=900, input_cache_write=50)) == 1_050
    assert input_tokens(Usage(input_uncached=100)) == 100
    assert input_tokens(Usage(output_text=10)) is None


def test_the_state_goes_through_json() -> None:
    budget = Budget(50_000)
    budget.after_step(1_234, 5_000)
    again = Budget.from_json(json.loads(json.dumps(budget.as_json())))
    assert again == budget
    assert again.estimate_next(500) == budget.estimate_next(500)
    assert Budget.from_json({}) == Budget()
