"""Time, injected: every time the runtime records comes from a :class:`Clock`.

Production uses :class:`SystemClock`. The local server's ``--clock manual`` uses :class:`ManualClock`,
which stands still until ``advance`` moves it (``http-api.md``, "Local server"), so expiries and
retries can be tested without waiting.

Times are shown as ISO 8601 UTC with ``Z`` and milliseconds (``2026-10-17T10:18:42.123Z``): a fixed
width, so that strings sort in time order inside DynamoDB sort keys.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final, Protocol

_ISO_PATTERN: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


class Clock(Protocol):
    """Where the runtime reads the time."""

    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The machine's clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that only moves when :meth:`advance` is called (thread-safe)."""

    def __init__(self, start: datetime | None = None) -> None:
        if start is None:
            start = datetime.now(UTC).replace(microsecond=0)
        if start.tzinfo is None:
            raise ValueError("a ManualClock starts at a timezone-aware time")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()
        #: Told each new time, in order (the local server's data folder keeps it).
        self.on_move: Callable[[datetime], None] | None = None

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        """Move the clock ``seconds`` (≥ 0) forward; returns the new time."""
        if not seconds >= 0:  # also refuses NaN
            raise ValueError("a clock only moves forward")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            if self.on_move is not None:
                self.on_move(self._now)
            return self._now


def format_time(moment: datetime) -> str:
    """``moment`` as ISO 8601 UTC with milliseconds and ``Z``."""
    if moment.tzinfo is None:
        raise ValueError("times are timezone-aware")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_time(text: str) -> datetime:
    """The inverse of :func:`format_time`; raises ``ValueError`` for any other form."""
    if not _ISO_PATTERN.match(text):
        raise ValueError(f"not a time in the form 2026-10-17T10:18:42.123Z: {text!r}")
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z").astimezone(UTC)
