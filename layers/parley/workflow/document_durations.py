"""Durations in a workflow document (``workflow-format.md``, "Durations").

A duration is ISO 8601 text with weeks, days, hours, minutes and seconds only (``PT30M``, ``P7D``; years
and months have no fixed length), as the other formats read it (``parley.documents.durations``); or a
mapping of ``days``, ``hours``, ``minutes``, ``seconds`` and ``milliseconds``, each a whole number of at
least 0; or an expression ``${ … }``, evaluated when the task runs (the caller parses it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from parley.documents.durations import parse_duration
from parley.workflow.expressions import expression_body

#: The fields of a duration written as a mapping, with the length of one of each.
DURATION_FIELDS: Final = {
    "days": timedelta(days=1),
    "hours": timedelta(hours=1),
    "minutes": timedelta(minutes=1),
    "seconds": timedelta(seconds=1),
    "milliseconds": timedelta(milliseconds=1),
}
_FORMS: Final = (
    "a duration is ISO 8601 text such as PT30M or P7D, a mapping of days, hours, minutes, seconds and "
    "milliseconds, or an expression ${ … }"
)
#: More than any duration a run may take (365 days), so a mapping's numbers stay small.
_LONGEST: Final = timedelta(days=10 * 365)


@dataclass(frozen=True)
class DurationProblem:
    """A duration's problem: the tokens after the duration's own pointer (a mapping's field), and why;
    ``about_value`` when it is about what the place holds rather than the field itself."""

    path: tuple[str, ...]
    message: str
    about_value: bool = True


@dataclass(frozen=True)
class ReadDuration:
    """A duration read: its length, or ``None`` when it is an expression (``expression`` is its text)."""

    length: timedelta | None
    expression: str | None = None


def read_duration(value: Any) -> ReadDuration | list[DurationProblem]:
    """Read a duration as the page writes it, or say what is wrong with it."""
    if isinstance(value, str):
        body = expression_body(value)
        if body is not None:
            return ReadDuration(None, body)
        try:
            length = parse_duration(value)
        except ValueError as exc:
            return [DurationProblem((), str(exc))]
        return ReadDuration(length)
    if isinstance(value, dict):
        return _mapping(value)
    return [DurationProblem((), f"Expected a duration: {_FORMS}")]


def _mapping(value: dict[str, Any]) -> ReadDuration | list[DurationProblem]:
    if not value:
        return [DurationProblem((), "A duration written as a mapping names at least one of its fields")]
    problems: list[DurationProblem] = []
    length = timedelta(0)
    for name, amount in value.items():
        unit = DURATION_FIELDS.get(name)
        if unit is None:
            message = f"{name!r} is not a field of a duration; expected {', '.join(DURATION_FIELDS)}"
            problems.append(DurationProblem((name,), message, about_value=False))
        elif isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            problems.append(DurationProblem((name,), f"Expected a whole number of {name}, at least 0"))
        elif amount > _LONGEST // unit:
            problems.append(DurationProblem((name,), f"{amount} {name} is longer than any run"))
        else:
            length += amount * unit
    return problems or ReadDuration(length)
