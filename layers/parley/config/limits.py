"""``limits`` (``http-api.md``, "Operator configuration"): how many requests an interaction function may
hold open, and a workflow run's longest duration (``workflow-format.md``, "Bounds"). The environment's
``INTERACTION_OPEN_REQUESTS`` and ``WORKFLOW_MAX_DURATION`` win (``parley.config.environment``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from parley.durations import duration_in_words, parse_duration
from parley.reading import reads, text, then, whole

DEFAULT_INTERACTION_OPEN_REQUESTS: Final = 10_000
DEFAULT_WORKFLOW_MAX_DURATION: Final = "P30D"
WORKFLOW_MAX_DURATION_MIN: Final = timedelta(hours=2)
WORKFLOW_MAX_DURATION_MAX: Final = timedelta(days=365)


def _workflow_max_duration(text: str) -> str:
    """A workflow run's longest duration (``workflow-format.md``, "Bounds"): 2 hours to 365 days."""
    duration = parse_duration(text)
    if not WORKFLOW_MAX_DURATION_MIN <= duration <= WORKFLOW_MAX_DURATION_MAX:
        words = duration_in_words(duration)
        raise ValueError(f"{text} ({words}) is outside 2 hours (PT2H) to 365 days (P365D)")
    return text


@dataclass(frozen=True)
class Limits:
    interaction_open_requests: int = field(
        default=DEFAULT_INTERACTION_OPEN_REQUESTS, metadata=reads(whole(minimum=1))
    )
    #: A workflow run's longest duration, ISO 8601 (``WORKFLOW_MAX_DURATION`` wins): past it the run ends
    #: ``cancelled`` as ``overrun``.
    workflow_max_duration: str = field(
        default=DEFAULT_WORKFLOW_MAX_DURATION, metadata=reads(then(text, _workflow_max_duration))
    )

    @property
    def workflow_max_seconds(self) -> int:
        return int(parse_duration(self.workflow_max_duration).total_seconds())


__all__ = [
    "DEFAULT_INTERACTION_OPEN_REQUESTS",
    "DEFAULT_WORKFLOW_MAX_DURATION",
    "WORKFLOW_MAX_DURATION_MAX",
    "WORKFLOW_MAX_DURATION_MIN",
    "Limits",
]
