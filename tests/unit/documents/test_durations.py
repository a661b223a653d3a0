"""ISO 8601 durations of ``expires`` and ``wait`` (interaction-format.md, "Fields", "Bounds")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.documents.durations import (
    EXPIRES_MAX,
    EXPIRES_MIN,
    WAIT_DEFAULT,
    WAIT_MAX,
    WAIT_MIN,
    duration_in_words,
    expires_problem,
    parse_duration,
    wait_problem,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT4H", timedelta(hours=4)),
        ("P2D", timedelta(days=2)),
        ("PT5S", timedelta(seconds=5)),
        ("PT1H", timedelta(hours=1)),
        ("PT1M", timedelta(minutes=1)),
        ("P30D", timedelta(days=30)),
        ("PT90M", timedelta(minutes=90)),
        ("P1W", timedelta(weeks=1)),
        ("P2DT4H30M15S", timedelta(days=2, hours=4, minutes=30, seconds=15)),
        ("PT1.5S", timedelta(seconds=1, microseconds=500_000)),
        ("PT0,25S", timedelta(microseconds=250_000)),
        ("PT0S", timedelta(0)),
    ],
)
def test_parse_duration_reads_fixed_length_parts(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("P1Y", "use days"),
        ("P2M", "use days"),
        ("P1Y2M3D", "use days"),
        ("PT1.5H", "only seconds may have a fraction"),
        ("P1.5D", "only seconds may have a fraction"),
        ("PT2.5M", "only seconds may have a fraction"),
        ("p2d", "capitals"),
        ("pt4h", "capitals"),
        ("-P1D", "not a positive duration"),
        ("P1W2D", "weeks are written alone"),
        ("", "not an ISO 8601 duration"),
        ("P", "not an ISO 8601 duration"),
        ("PT", "not an ISO 8601 duration"),
        ("P1DT", "not an ISO 8601 duration"),
        ("4 hours", "not an ISO 8601 duration"),
        (" PT4H", "not an ISO 8601 duration"),
        ("PT4H ", "not an ISO 8601 duration"),
        ("P4H", "not an ISO 8601 duration"),
        ("PT4D", "not an ISO 8601 duration"),
        ("P" + "9" * 30 + "D", "too long"),
        ("PT" + "9" * 5000 + "S", "too long"),
    ],
)
def test_parse_duration_refuses_with_a_message_that_helps(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_duration(text)


def test_parse_duration_refuses_what_is_not_text() -> None:
    with pytest.raises(ValueError, match="as text"):
        parse_duration(5)  # type: ignore[arg-type]


def test_a_long_text_is_shortened_in_the_message() -> None:
    with pytest.raises(ValueError) as caught:
        parse_duration("X" * 500)
    assert len(str(caught.value)) < 150


@pytest.mark.parametrize(
    ("duration", "words"),
    [
        (timedelta(days=2), "2 days"),
        (timedelta(hours=1, minutes=30), "1 hour 30 minutes"),
        (timedelta(hours=4), "4 hours"),
        (timedelta(minutes=1), "1 minute"),
        (timedelta(days=1), "1 day"),
        (timedelta(seconds=5), "5 seconds"),
        (timedelta(seconds=1), "1 second"),
        (timedelta(weeks=1), "7 days"),
        (timedelta(days=1, hours=2, minutes=3, seconds=4), "1 day 2 hours 3 minutes 4 seconds"),
        (timedelta(seconds=1, microseconds=500_000), "1.5 seconds"),
        (timedelta(0), "0 seconds"),
        (timedelta(days=-2), "minus 2 days"),
    ],
)
def test_duration_in_words(duration: timedelta, words: str) -> None:
    assert duration_in_words(duration) == words


def test_duration_in_words_of_the_spec_examples() -> None:
    assert duration_in_words(parse_duration("P2D")) == "2 days"
    assert duration_in_words(parse_duration("PT4H")) == "4 hours"


def test_bounds_are_the_spec_values() -> None:
    assert (timedelta(minutes=1), timedelta(days=30)) == (EXPIRES_MIN, EXPIRES_MAX)
    assert (
        timedelta(seconds=5),
        timedelta(hours=1),
        timedelta(seconds=5),
    ) == (WAIT_MIN, WAIT_MAX, WAIT_DEFAULT)


@pytest.mark.parametrize("text", ["PT1M", "PT60S", "PT4H", "P2D", "P30D", "P4W", "P29DT23H59M59S"])
def test_expires_within_one_minute_and_thirty_days(text: str) -> None:
    assert expires_problem(text) is None


@pytest.mark.parametrize("text", ["PT59S", "PT59.9S", "P30DT1S", "P31D", "P5W", "PT0S"])
def test_expires_outside_is_refused(text: str) -> None:
    problem = expires_problem(text)
    assert problem is not None
    assert "one minute" in problem and "thirty days" in problem


@pytest.mark.parametrize("value", [None, 5, ["P2D"], "P1M", "two days"])
def test_expires_that_is_no_duration_is_refused(value: object) -> None:
    assert expires_problem(value) is not None


@pytest.mark.parametrize("text", ["PT5S", "PT30S", "PT1M", "PT1H", "PT60M", "PT3600S"])
def test_wait_within_five_seconds_and_an_hour(text: str) -> None:
    assert wait_problem(text) is None


@pytest.mark.parametrize("text", ["PT4S", "PT4.999S", "PT1H0M1S", "PT61M", "P1D", "PT0S"])
def test_wait_outside_is_refused(text: str) -> None:
    problem = wait_problem(text)
    assert problem is not None
    assert "PT5S" in problem and "PT1H" in problem


@given(
    days=st.integers(0, 1000),
    hours=st.integers(0, 100),
    minutes=st.integers(0, 1000),
    seconds=st.integers(0, 100_000),
)
def test_written_parts_are_read_back(days: int, hours: int, minutes: int, seconds: int) -> None:
    text = f"P{days}DT{hours}H{minutes}M{seconds}S"
    assert parse_duration(text) == timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


@given(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=10_000)))
def test_words_name_every_part(duration: timedelta) -> None:
    words = duration_in_words(duration)
    assert ("day" in words) == (duration.days > 0)
    assert ("hour" in words) == (duration.seconds >= 3600)


@given(st.text(max_size=30) | st.from_regex(r"-?[Pp][0-9YMWDTHS.,]{0,12}", fullmatch=True))
def test_any_text_is_read_or_refused_with_value_error(text: str) -> None:
    try:
        result = parse_duration(text)
    except ValueError as exc:
        assert str(exc)
    else:
        assert result >= timedelta(0)
