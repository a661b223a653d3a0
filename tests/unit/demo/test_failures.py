"""The demo chat's failure switch (``parley.demo.failures``)."""

from __future__ import annotations

import pytest

from parley.demo.failures import HTTP_MODES, TOOL_MODES, Failure, FailureSwitch

TOOLS = frozenset({"post_message", "thread_replies"})


def test_the_next_count_calls_fail_then_the_tool_works_again() -> None:
    switch = FailureSwitch(TOOLS)
    switch.arm({"tool": "post_message", "count": 2, "mode": "error"})

    taken = [switch.take("post_message", TOOL_MODES) for _ in range(3)]

    assert taken == [Failure("post_message", "error", 2, 1.0), Failure("post_message", "error", 1, 1.0), None]
    assert switch.armed() == []


def test_a_failure_is_taken_only_by_its_tool_and_on_its_side() -> None:
    switch = FailureSwitch(TOOLS)
    switch.arm({"tool": "thread_replies", "mode": "retry_after", "seconds": 30})

    assert switch.take("post_message", HTTP_MODES) is None
    assert switch.take("thread_replies", TOOL_MODES) is None  # the tool's side leaves it to the HTTP front
    assert switch.take("thread_replies", HTTP_MODES) == Failure("thread_replies", "retry_after", 1, 30.0)
    assert switch.take("thread_replies", HTTP_MODES) is None


def test_a_new_switch_replaces_the_old_and_count_zero_or_clear_disarms() -> None:
    switch = FailureSwitch(TOOLS)
    switch.arm({"tool": "post_message", "count": 5, "mode": "error"})
    switch.arm({"tool": "post_message", "count": 1, "mode": "slow", "seconds": 0.5})
    switch.arm({"tool": "thread_replies", "count": 3})

    assert switch.armed() == [
        Failure("post_message", "slow", 1, 0.5),
        Failure("thread_replies", "error", 3, 1.0),
    ]
    switch.arm({"tool": "post_message", "count": 0})
    assert [f.tool for f in switch.armed()] == ["thread_replies"]
    switch.clear()
    assert switch.armed() == []


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ([], "JSON object"),
        ({"tool": "send"}, "tool is one of post_message, thread_replies"),
        (
            {"tool": "post_message", "mode": "explode"},
            "mode is one of error, server_error, slow, retry_after",
        ),
        ({"tool": "post_message", "count": -1}, "count is a whole number"),
        ({"tool": "post_message", "count": True}, "count is a whole number"),
        ({"tool": "post_message", "count": 1.5}, "count is a whole number"),
        ({"tool": "post_message", "seconds": 601}, "seconds is a number from 0 to 600"),
        ({"tool": "post_message", "seconds": "1"}, "seconds is a number"),
        ({"tool": "post_message", "times": 2}, "unknown field 'times'"),
    ],
)
def test_a_bad_switch_says_what_is_wrong_and_arms_nothing(body: object, words: str) -> None:
    switch = FailureSwitch(TOOLS)
    with pytest.raises(ValueError, match=words):
        switch.arm(body)
    assert switch.armed() == []
