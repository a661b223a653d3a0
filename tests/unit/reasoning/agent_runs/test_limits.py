"""The limits a run's calls are checked against (reasoning-format.md, "Limits on calls", "Limits on time
and failures")."""

from __future__ import annotations

import json

import pytest

from parley.models.providers.base import ToolCall, ToolResult
from parley.reasoning.agent_runs.limits import (
    ARGUMENTS_MAX_BYTES,
    MAX_CALLS,
    CallLimits,
    Refusal,
    arguments_not_object,
    arguments_size,
    wait_for_rate_limit,
)


def test_a_call_within_the_limits_may_be_made() -> None:
    assert CallLimits().check("graph__search", {"query": "lisbon"}) is None


def test_a_run_makes_at_most_25_calls() -> None:
    limits = CallLimits()
    for number in range(1, MAX_CALLS + 1):
        assert limits.check("graph__search", {"page": number}) is None
        assert limits.record("graph__search", {"page": number}) == number
    assert limits.spent()
    refusal = limits.check("graph__search", {"page": 26})
    assert refusal == Refusal("calls_used", "This call was not made: a run makes at most 25 calls.")


def test_the_24th_call_leaves_one() -> None:
    limits = CallLimits()
    for number in range(1, MAX_CALLS):
        limits.record("t", {"n": number})
    assert not limits.spent()
    assert limits.check("t", {"n": 99}) is None


def _arguments_of(size: int) -> dict[str, str]:
    arguments = {"q": "x" * (size - len('{"q":""}'))}
    assert arguments_size(arguments) == size
    return arguments


def test_arguments_of_16_kib_are_sent_and_one_byte_more_refused() -> None:
    limits = CallLimits()
    assert limits.check("t", _arguments_of(ARGUMENTS_MAX_BYTES)) is None
    refusal = limits.check("t", _arguments_of(ARGUMENTS_MAX_BYTES + 1))
    assert refusal is not None
    assert refusal.because == "arguments_too_large"
    assert (
        refusal.words
        == "This call was not made: its arguments are 16,385 bytes; a call sends at most 16 KiB."
    )


def test_arguments_are_counted_as_canonical_utf8_json() -> None:
    assert arguments_size({"b": 1, "a": "é"}) == len('{"a":"é","b":1}'.encode())
    refusal = CallLimits().check("t", _arguments_of(17_403))
    assert refusal is not None
    assert (
        refusal.words
        == "This call was not made: its arguments are 17,403 bytes; a call sends at most 16 KiB."
    )


def test_the_third_same_call_in_any_key_order_is_refused_and_pointed_to_the_second() -> None:
    limits = CallLimits()
    limits.record("graph__search", {"query": "lisbon", "limit": 5})
    limits.record("graph__search", {"query": "porto"})
    assert limits.check("graph__search", {"limit": 5, "query": "lisbon"}) is None
    limits.record("graph__search", {"limit": 5, "query": "lisbon"})
    refusal = limits.check("graph__search", {"limit": 5, "query": "lisbon"})
    assert refusal == Refusal(
        "same_call",
        "This call was not made: it is the third call of graph__search with the same arguments; its result "
        "is the result of call 3 above.",
        earlier_call=3,
    )
    # Refused calls are not recorded: a fourth try is refused the same way.
    assert limits.check("graph__search", {"query": "lisbon", "limit": 5}) == refusal
    # Another tool, or other arguments, is another call.
    assert limits.check("graph__query", {"query": "lisbon", "limit": 5}) is None
    assert limits.check("graph__search", {"query": "lisbon", "limit": 6}) is None


def test_the_third_same_call_names_the_earlier_call_id_when_known() -> None:
    limits = CallLimits()
    limits.record("graph__search", {"q": 1}, 1, "toolu_01")
    limits.record("graph__search", {"q": 1}, 2, "toolu_02")
    refusal = limits.check("graph__search", {"q": 1})
    assert refusal is not None
    assert refusal.words == (
        "This call was not made: it is the third call of graph__search with the same arguments; its result "
        "is the result of call 2 above (id toolu_02)."
    )


def test_the_limits_are_checked_in_the_spec_order() -> None:
    limits = CallLimits()
    for _ in range(2):
        limits.record("t", {"q": 1})
    for number in range(3, MAX_CALLS + 1):
        limits.record("t", {"n": number})
    refusal = limits.check("t", {"q": 1})
    assert refusal is not None
    assert refusal.because == "calls_used"
    refusal = CallLimits().check("t", _arguments_of(ARGUMENTS_MAX_BYTES + 1))
    assert refusal is not None
    assert refusal.because == "arguments_too_large"


def test_a_refusal_reaches_the_model_as_a_tool_error() -> None:
    call = ToolCall("toolu_09", "graph__search", {"q": 1})
    refusal = Refusal("calls_used", "This call was not made: a run makes at most 25 calls.")
    assert refusal.result_for(call) == ToolResult(
        "toolu_09", "graph__search", "This call was not made: a run makes at most 25 calls.", is_error=True
    )
    assert arguments_not_object("graph__search").words == (
        "This call was not made: the arguments of graph__search must be a JSON object."
    )


def test_five_server_failures_end_the_run() -> None:
    limits = CallLimits()
    assert [limits.server_failed() for _ in range(5)] == [False, False, False, False, True]
    assert limits.server_failures_spent()


@pytest.mark.parametrize(
    ("retry_after", "wait"),
    [(None, None), (0.0, 0.0), (2.5, 2.5), (10.0, 10.0), (10.001, None), (60.0, None), (-3.0, 0.0)],
)
def test_a_429_is_waited_out_only_up_to_10_seconds(retry_after: float | None, wait: float | None) -> None:
    assert wait_for_rate_limit(retry_after) == wait


def test_non_finite_retry_after_is_a_server_failure() -> None:
    assert wait_for_rate_limit(float("inf")) is None
    assert wait_for_rate_limit(float("nan")) is None


def test_the_state_goes_through_json() -> None:
    limits = CallLimits()
    limits.record("graph__search", {"q": "é"}, 1, "toolu_01")
    limits.record("graph__search", {"q": "é"}, 2)
    limits.server_failed()
    data = json.loads(json.dumps(limits.as_json()))
    again = CallLimits.from_json(data)
    assert again == limits
    assert again.check("graph__search", {"q": "é"}) == limits.check("graph__search", {"q": "é"})
    assert "é" not in json.dumps(data, ensure_ascii=False)  # the arguments are kept only as a digest
    assert CallLimits.from_json({}) == CallLimits()
