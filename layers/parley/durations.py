"""ISO 8601 durations, as Parley reads them wherever one is written (``interaction-format.md``, "Fields";
``workflow-format.md``, "Bounds"; the operator's ``limits.workflow_max_duration``).

Only the parts of a fixed length are read: weeks alone (``P1W``), or days, hours, minutes and seconds
(``P2DT4H30M``, ``PT1.5S``). Years and months have no fixed length, so they are refused with a hint to
write days; only seconds may carry a fraction.

A foundation module (issue 30): the operator configuration reads a duration too, and sits below the
documents; ``parley.documents.durations`` adds the documents' bounds (``expires``, ``wait``).
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Final

_DURATION: Final = re.compile(
    r"P(?:(?P<weeks>\d+)W"
    r"|(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:[.,]\d+)?)S)?)?)"
)
EXAMPLES: Final = "such as PT30M, PT4H, P2D or P1W"
_FRACTION_OUTSIDE_SECONDS: Final = re.compile(r"\d[.,]\d*[WDHMY]")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _refusal(text: str) -> str:
    """Why ``text`` is not a duration this runtime reads, in words that say how to write one."""
    if text[:1] in "+-" and text[1:2].upper() == "P":
        return f"{_shown(text)} is not a positive duration; write one {EXAMPLES}"
    if text != text.upper() and _DURATION.fullmatch(text.upper()):
        return f"{_shown(text)}: write the letters of a duration in capitals, {EXAMPLES}"
    if text.startswith("P"):
        date_part = text[1:].split("T", 1)[0]
        if "Y" in date_part or "M" in date_part:
            return f"{_shown(text)}: years and months are not a fixed length; use days instead, such as P30D"
        if _FRACTION_OUTSIDE_SECONDS.search(text):
            return (
                f"{_shown(text)}: only seconds may have a fraction, such as PT1.5S; write PT90M for 1.5 hours"
            )
        if "W" in text:
            return (
                f"{_shown(text)}: weeks are written alone, such as P2W; write days for the rest, such as P16D"
            )
    return f"{_shown(text)} is not an ISO 8601 duration {EXAMPLES}"


def parse_duration(text: str) -> timedelta:
    """Read an ISO 8601 duration such as ``PT4H`` or ``P2D``.

    Raises :class:`ValueError` with a message fit to show the writer of the document.
    """
    if not isinstance(text, str):
        raise ValueError(f"Expected an ISO 8601 duration as text, {EXAMPLES}")
    match = _DURATION.fullmatch(text)
    if match is None or text in ("P", "PT") or text.endswith("T"):
        raise ValueError(_refusal(text))
    parts = match.groupdict()
    try:
        seconds = Decimal((parts["seconds"] or "0").replace(",", "."))
        return timedelta(
            weeks=int(parts["weeks"] or 0),
            days=int(parts["days"] or 0),
            hours=int(parts["hours"] or 0),
            minutes=int(parts["minutes"] or 0),
            # whole seconds and microseconds apart, so a long fraction is not read through a float
            seconds=int(seconds),
            microseconds=int((seconds - int(seconds)) * 1_000_000),
        )
    except (OverflowError, ValueError, InvalidOperation) as exc:
        raise ValueError(f"{_shown(text)} is too long a duration") from exc


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


def duration_in_words(td: timedelta) -> str:
    """``2 days`` for ``P2D``, ``1 hour 30 minutes`` for ``PT90M``, ``0 seconds`` for nothing."""
    if td < timedelta(0):
        return "minus " + duration_in_words(-td)
    words: list[str] = []
    if td.days:
        words.append(_count(td.days, "day"))
    hours, rest = divmod(td.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        words.append(_count(hours, "hour"))
    if minutes:
        words.append(_count(minutes, "minute"))
    if td.microseconds:
        fraction = f"{seconds}.{td.microseconds:06d}".rstrip("0")
        words.append(f"{fraction} seconds")
    elif seconds or not words:
        words.append(_count(seconds, "second"))
    return " ".join(words)
