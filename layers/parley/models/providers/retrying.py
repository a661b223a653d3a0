"""Retries of a model call within its budget (reasoning-format.md, "How a run ends", "More rules").

A call may take ``request.timeout_seconds`` in all, retries included. A failure is retried, at most
twice, when the provider answered HTTP 408, 409, 429 or 5xx (529 "overloaded" included), or when the
call could not connect. Between attempts the loop waits what the provider asked for (``Retry-After``,
``retry-after-ms``, Gemini's ``RetryInfo``) when that fits in the remaining budget, else 0.5 s then 1 s
when the provider said nothing; a wait the provider asked for that does not fit ends the call with the
last failure at once (retrying sooner would only meet the same answer), so the caller can say how long
the provider asked to wait. Each attempt gets the remaining budget as its timeout, and an attempt
that would start past the deadline ends the call as ``timed_out``.

``sleep`` and ``clock`` are injected so tests run instantly; ``clock`` is monotonic seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeVar

from parley.models.providers.base import ModelCallFailed

T = TypeVar("T")

#: At most this many retries after the first attempt.
MAX_RETRIES: Final = 2
#: The waits when the provider did not say how long: the first retry, then the second.
BACKOFF_SECONDS: Final = (0.5, 1.0)
RETRIED_STATUSES: Final = frozenset({408, 409, 429})
#: A retry is worth starting only with at least this much budget left after its wait.
MIN_ATTEMPT_SECONDS: Final = 1.0


@dataclass(frozen=True)
class Deadline:
    """When the whole call must be over, on ``clock``'s scale."""

    at: float
    seconds: float
    clock: Callable[[], float]

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float]) -> Deadline:
        return cls(clock() + seconds, seconds, clock)

    def remaining(self) -> float:
        return self.at - self.clock()


def is_retried(failure: ModelCallFailed) -> bool:
    """Whether the failure may go away by itself: the statuses above, 5xx, or no connection."""
    if failure.kind == "unreachable":
        return True
    status = failure.status
    return status is not None and (status in RETRIED_STATUSES or 500 <= status <= 599)


def timed_out(provider: str, deadline: Deadline) -> ModelCallFailed:
    return ModelCallFailed(
        "timed_out",
        provider,
        f"{provider} did not answer within the call's {deadline.seconds:g} seconds",
    )


def with_retries(
    attempt: Callable[[float], T],
    *,
    provider: str,
    deadline: Deadline,
    sleep: Callable[[float], None],
) -> T:
    """``attempt(remaining_seconds)``, retried as the module says; raises the last failure."""
    retries = 0
    while True:
        remaining = deadline.remaining()
        if remaining <= 0:
            raise timed_out(provider, deadline)
        try:
            return attempt(remaining)
        except ModelCallFailed as failure:
            if retries >= MAX_RETRIES or not is_retried(failure):
                raise
            wait = _wait(failure, retries, deadline.remaining())
            if wait is None:
                raise
            sleep(wait)
            retries += 1


def _wait(failure: ModelCallFailed, retries: int, remaining: float) -> float | None:
    asked = failure.retry_after_seconds
    if asked is not None:
        # The provider said how long: retrying sooner only meets the same answer again.
        return max(0.0, asked) if asked + MIN_ATTEMPT_SECONDS <= remaining else None
    backoff = BACKOFF_SECONDS[min(retries, len(BACKOFF_SECONDS) - 1)]
    if backoff + MIN_ATTEMPT_SECONDS <= remaining:
        return backoff
    return None
