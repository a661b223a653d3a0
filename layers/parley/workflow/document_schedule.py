"""A workflow's ``schedule`` (``workflow-format.md``, "Schedules" and "Bounds"): ``cron``, five fields in
UTC, and ``every``, a duration of at least a minute.

The five fields are the minute (0–59), the hour (0–23), the day of the month (1–31), the month (1–12 or
``JAN``–``DEC``) and the day of the week (0–7, Sunday being 0 and 7, or ``SUN``–``SAT``). Each field is
``*`` or a list (``,``) of values, ranges (``1-5``, ``MON-FRI``) and steps of ``*`` or a range
(``*/15``, ``0-30/10``). Names are read in any case. A schedule restricts the day of the month or the day
of the week, not both: cron reads the two together as "either", which EventBridge Scheduler cannot say.

``every`` is written out (not an expression: it is read when the workflow is saved) in whole minutes, as
EventBridge Scheduler's rates are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

EVERY_LEAST: Final = timedelta(minutes=1)


@dataclass(frozen=True)
class CronField:
    """One field of a cron expression: what it is, its range, and the names it takes (lowercase)."""

    name: str
    least: int
    most: int
    names: tuple[str, ...] = ()
    #: the number of the first name (``jan`` is 1, ``sun`` is 0)
    first_name: int = 0


MONTHS: Final = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS: Final = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
CRON_FIELDS: Final = (
    CronField("minute", 0, 59),
    CronField("hour", 0, 23),
    CronField("day of the month", 1, 31),
    CronField("month", 1, 12, MONTHS, 1),
    CronField("day of the week", 0, 7, WEEKDAYS, 0),
)
_ITEM: Final = re.compile(r"(?P<range>\*|[^-/]+(?:-[^-/]+)?)(?:/(?P<step>[^/]*))?")
_NUMBER: Final = re.compile(r"[0-9]{1,2}")
_EXAMPLE: Final = "such as '0 9 * * MON-FRI' (minute, hour, day of the month, month, day of the week)"


def cron_problem(text: object) -> str | None:
    """Why ``text`` is not a five-field cron expression this runtime schedules, or ``None``."""
    if not isinstance(text, str):
        return f"Expected a cron expression as text, {_EXAMPLE}"
    fields = text.split()
    if len(fields) != len(CRON_FIELDS):
        return f"A cron expression has five fields, not {len(fields)}: {_EXAMPLE}"
    for written, field in zip(fields, CRON_FIELDS, strict=True):
        problem = _field_problem(written, field)
        if problem is not None:
            return problem
    if fields[2] != "*" and fields[4] != "*":
        return (
            "A schedule restricts the day of the month or the day of the week, not both: write * for one of "
            "them"
        )
    return None


def _field_problem(written: str, field: CronField) -> str | None:
    for item in written.split(","):
        match = _ITEM.fullmatch(item)
        if match is None or not item:
            return f"{_shown(written)} is not a {field.name} field: {_field_form(field)}"
        span, step = match.group("range"), match.group("step")
        if step is not None and (_NUMBER.fullmatch(step) is None or int(step) == 0):
            return f"In {_shown(written)}, a step is a whole number of at least 1, such as */15"
        if span == "*":
            continue
        low_text, _, high_text = span.partition("-")
        low = _value(low_text, field)
        high = _value(high_text, field) if high_text else low
        if low is None or high is None:
            bad = low_text if low is None else high_text
            return f"{_shown(bad)} is not a {field.name}: {_field_form(field)}"
        if high < low:
            return f"In {_shown(written)}, a range goes from the lower {field.name} to the higher"
        if step is not None and not high_text:
            return f"In {_shown(written)}, a step follows * or a range, such as */2 or 1-5/2"
    return None


def _value(text: str, field: CronField) -> int | None:
    if _NUMBER.fullmatch(text):
        number = int(text)
        return number if field.least <= number <= field.most else None
    lowered = text.lower()
    if lowered in field.names:
        return field.names.index(lowered) + field.first_name
    return None


def _field_form(field: CronField) -> str:
    names = f" or {field.names[0].upper()} to {field.names[-1].upper()}" if field.names else ""
    return f"write *, {field.least} to {field.most}{names}, a range, a step or a list of them"


def every_problem(length: timedelta) -> str | None:
    """Why ``every`` of this length is not a schedule, or ``None``."""
    if length < EVERY_LEAST:
        return "A schedule runs at most once a minute: write every as PT1M or longer"
    if length % timedelta(minutes=1):
        return "every is a whole number of minutes, such as PT15M or PT1H"
    return None


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")
