"""ISO 8601 durations, as ``expires`` and ``wait`` are written (``interaction-format.md``, "Fields",
"Templates and pointers" and "Bounds").

How a duration is read (``parse_duration``) and said (``duration_in_words``) is ``parley.durations``,
below the documents, since the operator configuration reads one too; here are the bounds of each field.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final

from parley.durations import EXAMPLES, duration_in_words, parse_duration

EXPIRES_MIN: Final = timedelta(minutes=1)
EXPIRES_MAX: Final = timedelta(days=30)
WAIT_MIN: Final = timedelta(seconds=5)
WAIT_MAX: Final = timedelta(hours=1)
WAIT_DEFAULT: Final = timedelta(seconds=5)


def _bounded(value: object, minimum: timedelta, maximum: timedelta, lowest: str, highest: str) -> str | None:
    if not isinstance(value, str):
        return f"Expected an ISO 8601 duration as text, {EXAMPLES}"
    try:
        duration = parse_duration(value)
    except ValueError as exc:
        return str(exc)
    if not minimum <= duration <= maximum:
        return f"{value} ({duration_in_words(duration)}) is outside {lowest} to {highest}"
    return None


def expires_problem(value: object) -> str | None:
    """Why ``value`` is not a valid ``expires`` (one minute to thirty days), or ``None``."""
    return _bounded(value, EXPIRES_MIN, EXPIRES_MAX, "one minute (PT1M)", "thirty days (P30D)")


def wait_problem(value: object) -> str | None:
    """Why ``value`` is not a valid ``wait`` (``PT5S`` to ``PT1H``), or ``None``."""
    return _bounded(value, WAIT_MIN, WAIT_MAX, "PT5S", "PT1H")


__all__ = [
    "EXPIRES_MAX",
    "EXPIRES_MIN",
    "WAIT_DEFAULT",
    "WAIT_MAX",
    "WAIT_MIN",
    "duration_in_words",
    "expires_problem",
    "parse_duration",
    "wait_problem",
]
