from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest

from parley.clock import ManualClock, SystemClock, format_time, parse_time

START = datetime(2026, 10, 17, 10, 18, 42, tzinfo=UTC)


def test_a_manual_clock_stands_still_until_advanced() -> None:
    clock = ManualClock(START)

    assert clock.now() == clock.now() == START
    assert clock.advance(90) == START + timedelta(seconds=90)
    assert clock.advance(0) == clock.now() == START + timedelta(seconds=90)
    assert clock.advance(0.25) == START + timedelta(seconds=90.25)


@pytest.mark.parametrize("seconds", [-1, -0.001, math.nan])
def test_a_manual_clock_never_goes_back(seconds: float) -> None:
    clock = ManualClock(START)

    with pytest.raises(ValueError):
        clock.advance(seconds)
    assert clock.now() == START


def test_a_manual_clock_starts_in_utc() -> None:
    assert ManualClock(datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=2)))).now().tzinfo == UTC
    assert ManualClock().now().microsecond == 0
    with pytest.raises(ValueError):
        ManualClock(datetime(2026, 1, 1))


def test_the_system_clock_is_utc_now() -> None:
    before = datetime.now(UTC)
    now = SystemClock().now()

    assert now.tzinfo == UTC
    assert before <= now <= datetime.now(UTC)


def test_times_are_iso_8601_utc_with_z_and_milliseconds() -> None:
    moment = datetime(2026, 10, 17, 12, 18, 42, 123_999, tzinfo=timezone(timedelta(hours=2)))

    assert format_time(moment) == "2026-10-17T10:18:42.123Z"
    assert format_time(START) == "2026-10-17T10:18:42.000Z"
    assert parse_time("2026-10-17T10:18:42.123Z") == datetime(2026, 10, 17, 10, 18, 42, 123_000, tzinfo=UTC)
    assert format_time(parse_time("2026-10-17T10:18:42.123Z")) == "2026-10-17T10:18:42.123Z"


@pytest.mark.parametrize(
    "text", ["2026-10-17T10:18:42Z", "2026-10-17 10:18:42.000Z", "2026-10-17T10:18:42.000+00:00", "x"]
)
def test_other_time_forms_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError):
        format_time(datetime(2026, 1, 1))
