"""The reading cadence ("Bounds": reads of a conversation), read by read."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.interaction.replies.cadence import (
    delay_before_read,
    reads_within,
    retry_after_delay,
    time_of_read,
)

FLOOR = timedelta(seconds=5)  # replies.wait left out: PT5S
waits = st.integers(min_value=5, max_value=3600).map(lambda s: timedelta(seconds=s))


def seconds(value: timedelta) -> float:
    return value.total_seconds()


def test_the_cadence_table_read_by_read() -> None:
    # the wait before each read: 5 s after the join, then 10, 20 and 40 s, a minute through the 18th read,
    # then 5 minutes
    expected = [5, 10, 20, 40] + [60] * 14 + [300] * 5
    assert [seconds(delay_before_read(n, FLOOR)) for n in range(1, 24)] == expected


def test_reads_wait_5_10_20_and_40_seconds_then_each_minute_then_every_5_minutes() -> None:
    times = [seconds(time_of_read(n, FLOOR)) for n in range(1, 21)]
    assert times[:4] == [5, 15, 35, 75]
    assert times[4:6] == [135, 195]
    assert times[4:18] == [75 + 60 * k for k in range(1, 15)]
    assert times[17] == 915  # the 18th read
    assert times[18:] == [1215, 1515]


def test_wait_is_a_floor_for_every_delay() -> None:
    minute = timedelta(minutes=1)
    assert [seconds(delay_before_read(n, minute)) for n in (1, 2, 3, 4, 5, 18, 19)] == [60] * 6 + [300]
    hour = timedelta(hours=1)
    assert {delay_before_read(n, hour) for n in range(1, 30)} == {hour}
    assert seconds(delay_before_read(3, timedelta(seconds=30))) == 30
    assert seconds(delay_before_read(4, timedelta(seconds=30))) == 40  # a floor, not a ceiling


def test_reads_are_numbered_from_one() -> None:
    with pytest.raises(ValueError, match="from 1"):
        delay_before_read(0, FLOOR)
    with pytest.raises(ValueError, match="from 1"):
        time_of_read(0, FLOOR)


def test_retry_after_is_waited_for_up_to_an_hour_and_never_shortens_the_cadence() -> None:
    normal = timedelta(minutes=5)
    assert retry_after_delay(None, normal) == normal
    assert retry_after_delay(30, normal) == normal
    assert retry_after_delay(900, normal) == timedelta(minutes=15)
    assert retry_after_delay(86_400, normal) == timedelta(hours=1)
    assert retry_after_delay(-5, normal) == normal
    assert retry_after_delay(float("nan"), normal) == normal
    assert retry_after_delay(float("inf"), normal) == normal


def test_reads_within_counts_a_read_at_the_very_end() -> None:
    assert reads_within(timedelta(seconds=4), FLOOR) == 0
    assert reads_within(timedelta(seconds=5), FLOOR) == 1
    assert reads_within(timedelta(seconds=14), FLOOR) == 1
    assert reads_within(timedelta(seconds=15), FLOOR) == 2
    assert reads_within(timedelta(seconds=34), FLOOR) == 2
    assert reads_within(timedelta(seconds=35), FLOOR) == 3
    assert reads_within(timedelta(seconds=74), FLOOR) == 3
    assert reads_within(timedelta(seconds=75), FLOOR) == 4
    assert reads_within(timedelta(seconds=134), FLOOR) == 4
    assert reads_within(timedelta(seconds=135), FLOOR) == 5
    assert reads_within(timedelta(seconds=914), FLOOR) == 17
    assert reads_within(timedelta(seconds=915), FLOOR) == 18
    assert reads_within(timedelta(seconds=1214), FLOOR) == 18
    assert reads_within(timedelta(seconds=1215), FLOOR) == 19
    assert reads_within(timedelta(-1), FLOOR) == 0


def test_reads_in_the_first_hour_and_in_two_days() -> None:
    # 18 reads by 915 s, then one each 5 minutes: (3600 - 915) // 300 = 8 more
    assert reads_within(timedelta(hours=1), FLOOR) == 26
    assert reads_within(timedelta(days=2), FLOOR) == 18 + (172_800 - 915) // 300 == 590
    # wait: PT1M lifts the first four waits to a minute: 18 reads by 1080 s, then each 5 minutes
    assert reads_within(timedelta(hours=1), timedelta(minutes=1)) == 18 + (3600 - 1080) // 300
    assert reads_within(timedelta(hours=1), timedelta(hours=1)) == 1


@given(st.integers(min_value=1, max_value=200), waits)
def test_delays_never_fall_below_wait_and_never_shrink(number: int, wait: timedelta) -> None:
    delay = delay_before_read(number, wait)
    assert delay >= wait
    assert delay_before_read(number + 1, wait) >= delay
    assert delay <= max(timedelta(minutes=5), wait)


@given(st.integers(min_value=0, max_value=7 * 86_400), waits)
def test_reads_within_agrees_with_the_read_times(total: int, wait: timedelta) -> None:
    duration = timedelta(seconds=total)
    count = reads_within(duration, wait)
    if count:
        assert time_of_read(count, wait) <= duration
    assert time_of_read(count + 1, wait) > duration


@given(st.integers(min_value=1, max_value=100), waits)
def test_read_times_are_the_sums_of_the_delays(number: int, wait: timedelta) -> None:
    assert time_of_read(number, wait) == sum(
        (delay_before_read(n, wait) for n in range(1, number + 1)), timedelta(0)
    )
