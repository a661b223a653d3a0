"""``Scheduler`` on EventBridge Scheduler: each piece of timed work is a one-time schedule
(``at(…)``, deleted after it fires) whose target is the ``timer`` function with the work as its input
(architecture.md, "Everything timed goes through one scheduler port").

- Schedules fire with 60-second precision and deliver at least once (the timer's handlers are
  idempotent); a target that fails is retried for up to a day.
- Scheduling a name twice is harmless (``ConflictException``: the schedule exists), and so is
  cancelling one that is gone (``ResourceNotFoundException``: it fired, or never was).
- Work due now (a delivery's first attempt, "at once") is not scheduled: a schedule fires with 60-second
  precision, so the adapter invokes the timer function directly and asynchronously (``InvocationType
  Event``; Lambda retries it twice and then sends it to the function's on-failure destination).
- Work due within 15 minutes (a delivery's next attempt, the check for a lost one, a conversation's next
  read) goes to the timer queue instead, as an SQS message with a per-message timer (``DelaySeconds``,
  at most 900): SQS makes it visible to the timer function's event source within about a second of its
  time, so the first reads, which wait 5, 10, 20 and 40 seconds, keep their cadence, which EventBridge
  Scheduler's minute could not. Such work cannot be cancelled; its handler finds nothing to do, as for a
  schedule fired twice.
- The later reads, a minute and five minutes apart, stay on the queue too, though a schedule's invocation
  ($1.00 a million) costs less than a queued message's three SQS requests (send, receive, delete: $1.20
  a million): a schedule fires anywhere in its minute, so reads due every five minutes could come six
  apart, and the cadence allows five at most ("Answering by reply"). The Scheduler would save $0.12 per
  1,000 requests answered by reply after two days, of $2.56 (issue 26, ``benchmarks/replies.py``).
- Names: EventBridge allows 1 to 64 of ``[0-9a-zA-Z-_.]``; :func:`schedule_name` makes any name fit,
  the same way every time, so ``cancel`` finds what ``schedule`` made.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Set
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from parley.aws.edge import translated

if TYPE_CHECKING:
    from mypy_boto3_lambda.client import LambdaClient
    from mypy_boto3_scheduler.client import EventBridgeSchedulerClient

MAX_NAME: Final = 64
_NAME: Final = re.compile(r"^[0-9A-Za-z_.-]{1,64}$")
_UNSAFE: Final = re.compile(r"[^0-9A-Za-z_.-]+")
#: Characters of the name's SHA-256 kept when a name has to be shortened or cleaned.
_DIGEST_CHARS: Final = 20

#: How long and how often EventBridge Scheduler tries a target that fails (both are its maximums).
MAX_EVENT_AGE_SECONDS: Final = 24 * 3600
MAX_RETRY_ATTEMPTS: Final = 185

UNAVAILABLE_CODES: Final = frozenset(
    {"ThrottlingException", "ServiceQuotaExceededException", "InternalServerException", "ServiceUnavailable"}
)


def schedule_name(name: str) -> str:
    """``name`` if EventBridge takes it as is; otherwise its allowed characters, cut short, then a
    digest of the whole name (so two names never share a schedule)."""
    if _NAME.match(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_DIGEST_CHARS]
    readable = _UNSAFE.sub("-", name).strip("-")[: MAX_NAME - _DIGEST_CHARS - 1]
    return f"{readable}-{digest}" if readable else digest


def at_expression(moment: datetime) -> str:
    """``at(yyyy-mm-ddThh:mm:ss)`` in UTC, rounded up to the next whole second (never early)."""
    if moment.tzinfo is None:
        raise ValueError("a schedule's time is timezone-aware")
    utc = moment.astimezone(UTC)
    if utc.microsecond:
        utc = utc.replace(microsecond=0) + timedelta(seconds=1)
    return f"at({utc.strftime('%Y-%m-%dT%H:%M:%S')})"


#: Work due within this much of now goes to the timer at once instead of through a schedule.
AT_ONCE: Final = timedelta(seconds=1)
#: SQS's longest per-message timer: work due sooner goes through the timer queue when there is one.
QUEUE_DELAY_MAX: Final = timedelta(seconds=900)
QUEUE_UNAVAILABLE_CODES: Final = frozenset(
    {
        "AWS.SimpleQueueService.ServiceUnavailable",
        "ServiceUnavailable",
        "ThrottlingException",
        "RequestThrottled",
    }
)
LAMBDA_UNAVAILABLE_CODES: Final = frozenset(
    {"TooManyRequestsException", "ServiceException", "EC2ThrottledException", "ResourceNotReadyException"}
)


class EventBridgeScheduler:
    """The ``Scheduler`` port on one schedule group, calling ``target_arn`` (the timer function) as
    ``role_arn`` (the scheduler's role, which may invoke only that function); work due now goes to the
    target through ``functions`` (a Lambda client). ``dead_letter_arn`` receives a schedule's event once
    its retries are spent."""

    def __init__(
        self,
        client: EventBridgeSchedulerClient,
        group: str,
        target_arn: str,
        role_arn: str,
        *,
        functions: LambdaClient | None = None,
        dead_letter_arn: str | None = None,
        queue: Any = None,
        queue_url: str | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._client = client
        self.group = group
        self.target_arn = target_arn
        self.role_arn = role_arn
        self._functions = functions
        self.dead_letter_arn = dead_letter_arn
        self._queue = queue
        self.queue_url = queue_url
        self._now = now

    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        now = self._now()
        if self._functions is not None and at <= now + AT_ONCE:
            self._invoke_now(work)
            return
        if self._queue is not None and self.queue_url and at <= now + QUEUE_DELAY_MAX:
            self._enqueue(work, at - now)
            return
        target: dict[str, Any] = {
            "Arn": self.target_arn,
            "RoleArn": self.role_arn,
            "Input": json.dumps(dict(work), separators=(",", ":")),
            "RetryPolicy": {
                "MaximumEventAgeInSeconds": MAX_EVENT_AGE_SECONDS,
                "MaximumRetryAttempts": MAX_RETRY_ATTEMPTS,
            },
        }
        if self.dead_letter_arn:
            target["DeadLetterConfig"] = {"Arn": self.dead_letter_arn}
        with _translated("schedule the work", ignore={"ConflictException"}):
            self._client.create_schedule(
                Name=schedule_name(name),
                GroupName=self.group,
                ScheduleExpression=at_expression(at),
                ScheduleExpressionTimezone="UTC",
                FlexibleTimeWindow={"Mode": "OFF"},
                ActionAfterCompletion="DELETE",
                State="ENABLED",
                Target=target,  # type: ignore[arg-type]
            )

    def _enqueue(self, work: Mapping[str, Any], delay: timedelta) -> None:
        seconds = min(int(QUEUE_DELAY_MAX.total_seconds()), max(0, math.ceil(delay.total_seconds())))
        with translated(
            "The timer queue", "queue the timed work", ignore=frozenset(), unavailable=QUEUE_UNAVAILABLE_CODES
        ):
            self._queue.send_message(
                QueueUrl=self.queue_url,
                MessageBody=json.dumps(dict(work), separators=(",", ":")),
                DelaySeconds=seconds,
            )

    def _invoke_now(self, work: Mapping[str, Any]) -> None:
        assert self._functions is not None
        with translated(
            "Lambda", "start the timed work", ignore=frozenset(), unavailable=LAMBDA_UNAVAILABLE_CODES
        ):
            self._functions.invoke(
                FunctionName=self.target_arn,
                InvocationType="Event",
                Payload=json.dumps(dict(work), separators=(",", ":")).encode("utf-8"),
            )

    def cancel(self, name: str) -> None:
        with _translated("cancel the schedule", ignore={"ResourceNotFoundException"}):
            self._client.delete_schedule(Name=schedule_name(name), GroupName=self.group)


def _translated(action: str, *, ignore: Set[str]) -> AbstractContextManager[None]:
    return translated("The scheduler", action, ignore=ignore, unavailable=UNAVAILABLE_CODES)
