"""A workflow's schedule (workflow-format.md, "Schedules"): cron's five fields, and every."""

from __future__ import annotations

from datetime import timedelta

import pytest

from parley.workflow.document_schedule import cron_problem, every_problem


@pytest.mark.parametrize(
    "cron",
    [
        "* * * * *",
        "0 9 * * MON-FRI",
        "*/15 * * * *",
        "0-30/10 8-18/2 * * *",
        "0 0 1,15 * *",
        "0 0 1 jan,Jul *",
        "0 12 * JAN-MAR sun",
        "59 23 31 12 *",
        "0 0 * * 0",
        "0 0 * * 7",
    ],
)
def test_a_cron_of_five_fields(cron: str) -> None:
    assert cron_problem(cron) is None


@pytest.mark.parametrize(
    ("cron", "problem"),
    [
        (
            5,
            "Expected a cron expression as text, such as '0 9 * * MON-FRI' (minute, hour, day of the month, "
            "month, day of the week)",
        ),
        (
            "0 9 * *",
            "A cron expression has five fields, not 4: such as '0 9 * * MON-FRI' (minute, hour, day of "
            "the month, month, day of the week)",
        ),
        (
            "0 9 * * * 2026",
            "A cron expression has five fields, not 6: such as '0 9 * * MON-FRI' (minute, hour, "
            "day of the month, month, day of the week)",
        ),
        ("60 * * * *", "'60' is not a minute: write *, 0 to 59, a range, a step or a list of them"),
        ("0 24 * * *", "'24' is not a hour: write *, 0 to 23, a range, a step or a list of them"),
        ("0 0 0 * *", "'0' is not a day of the month: write *, 1 to 31, a range, a step or a list of them"),
        (
            "0 0 * 13 *",
            "'13' is not a month: write *, 1 to 12 or JAN to DEC, a range, a step or a list of them",
        ),
        (
            "0 0 * * 8",
            "'8' is not a day of the week: write *, 0 to 7 or SUN to SAT, a range, a step or a list of them",
        ),
        (
            "0 0 * * MONDAY",
            "'MONDAY' is not a day of the week: write *, 0 to 7 or SUN to SAT, a range, a step or "
            "a list of them",
        ),
        ("*/0 * * * *", "In '*/0', a step is a whole number of at least 1, such as */15"),
        ("5/15 * * * *", "In '5/15', a step follows * or a range, such as */2 or 1-5/2"),
        ("30-10 * * * *", "In '30-10', a range goes from the lower minute to the higher"),
        ("0,,5 * * * *", "'0,,5' is not a minute field: write *, 0 to 59, a range, a step or a list of them"),
        ("0 0 L * *", "'L' is not a day of the month: write *, 1 to 31, a range, a step or a list of them"),
        ("0 0 ? * MON", "'?' is not a day of the month: write *, 1 to 31, a range, a step or a list of them"),
        (
            "0 0 1 * MON",
            "A schedule restricts the day of the month or the day of the week, not both: write * "
            "for one of them",
        ),
    ],
)
def test_a_cron_that_is_not_one(cron: object, problem: str) -> None:
    assert cron_problem(cron) == problem


@pytest.mark.parametrize("minutes", [1, 15, 60, 24 * 60])
def test_every_whole_minutes(minutes: int) -> None:
    assert every_problem(timedelta(minutes=minutes)) is None


def test_every_less_than_a_minute() -> None:
    assert every_problem(timedelta(seconds=59)) == (
        "A schedule runs at most once a minute: write every as PT1M or longer"
    )


def test_every_of_part_of_a_minute() -> None:
    assert every_problem(timedelta(seconds=90)) == "every is a whole number of minutes, such as PT15M or PT1H"
