"""Durations in a workflow document (workflow-format.md, "Durations")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from parley.workflow.document_durations import DurationProblem, ReadDuration, read_duration


@pytest.mark.parametrize(
    ("value", "length"),
    [
        ("PT30M", timedelta(minutes=30)),
        ("P7D", timedelta(days=7)),
        ("P2W", timedelta(weeks=2)),
        ("P1DT2H3M4.5S", timedelta(days=1, hours=2, minutes=3, seconds=4.5)),
        ({"days": 1, "milliseconds": 500}, timedelta(days=1, milliseconds=500)),
        ({"hours": 0}, timedelta(0)),
    ],
)
def test_a_duration_written_out(value: Any, length: timedelta) -> None:
    assert read_duration(value) == ReadDuration(length)


def test_a_duration_that_is_an_expression() -> None:
    assert read_duration("${ $data.delay }") == ReadDuration(None, "$data.delay")


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        (
            "P1M",
            [
                DurationProblem(
                    (), "'P1M': years and months are not a fixed length; use days instead, such as P30D"
                )
            ],
        ),
        (
            "P1Y2D",
            [
                DurationProblem(
                    (), "'P1Y2D': years and months are not a fixed length; use days instead, such as P30D"
                )
            ],
        ),
        (
            "pt1h",
            [
                DurationProblem(
                    (), "'pt1h': write the letters of a duration in capitals, such as PT30M, PT4H, P2D or P1W"
                )
            ],
        ),
        (
            30,
            [
                DurationProblem(
                    (),
                    "Expected a duration: a duration is ISO 8601 text such as PT30M or P7D, a mapping "
                    "of days, hours, minutes, seconds and milliseconds, or an expression ${ … }",
                )
            ],
        ),
        ({}, [DurationProblem((), "A duration written as a mapping names at least one of its fields")]),
        (
            {"weeks": 1},
            [
                DurationProblem(
                    ("weeks",),
                    "'weeks' is not a field of a duration; expected days, hours, "
                    "minutes, seconds, milliseconds",
                    about_value=False,
                )
            ],
        ),
        ({"hours": 1.5}, [DurationProblem(("hours",), "Expected a whole number of hours, at least 0")]),
        ({"days": True}, [DurationProblem(("days",), "Expected a whole number of days, at least 0")]),
        ({"days": 10**30}, [DurationProblem(("days",), f"{10**30} days is longer than any run")]),
    ],
)
def test_a_duration_that_is_not_one(value: Any, problems: list[DurationProblem]) -> None:
    assert read_duration(value) == problems
