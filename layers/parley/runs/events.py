"""Events: their ids, their types, and how content is shown in lists (``interaction-format.md``, "The
run's history"; ``http-api.md``, "Events").

An event id sorts in time order: 13 digits of milliseconds since the epoch, 2 digits of the event's
step within its run, then 6 hex digits of the recording process's sequence and 10 of randomness (31
characters, URL-safe). The step keeps a run's
events in order when they happen in the same millisecond, as they do under a manual clock: the
request, then its answer, then the run's end.

Content (the answer, the output; later the message and the arguments of deliveries) is shown whole by
``get_event``. In a list (``list_playbook_events``, ``get_run_history``) a content field that takes more
than 2 KiB as JSON is replaced by ``{"size": <bytes as JSON>}``, and the event names the fields so
replaced in ``omitted``, so a client never mistakes the stand-in for the value::

    {"id": "…", "type": "request_answered", "at": "…", "run_id": "…",
     "data": {"answer": {"size": 5000}, "claimed_for": null, "answered_by": "alice"},
     "omitted": ["answer"]}
"""

from __future__ import annotations

import functools
import itertools
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from parley.runs.model import Event

INTERACTION_REQUESTED: Final = "interaction_requested"
REQUEST_ANSWERED: Final = "request_answered"
RUN_SUCCEEDED: Final = "run_succeeded"
RUN_REJECTED: Final = "run_rejected"
TOOL_CALL_STARTED: Final = "tool_call_started"
TOOL_CALL_ANSWERED: Final = "tool_call_answered"
TOOL_CALL_FAILED: Final = "tool_call_failed"
DELIVERY_STARTED: Final = "delivery_started"
DELIVERY_SUCCEEDED: Final = "delivery_succeeded"
DELIVERY_FAILED: Final = "delivery_failed"
DELIVERY_REFUSED: Final = "delivery_refused"
REPLY_REFUSED: Final = "reply_refused"
ACTIVITY_UPDATED: Final = "activity_updated"
#: A workflow run (``workflow-format.md``, "How a run ends"): its start, and each run a task called.
RUN_STARTED: Final = "run_started"
CALL_STARTED: Final = "call_started"
#: A workflow's schedule (``workflow-format.md``, "Schedules"): a due time skipped while the schedule's
#: previous run was still started. A playbook event: it belongs to no run.
SCHEDULE_SKIPPED: Final = "schedule_skipped"
#: A workflow run's events (``workflow-format.md``, "Events"): one sent to it (or emitted to a listen
#: of it), one an ``emit`` recorded, and a kept one dropped past the bounds (64 kept, 1 MiB).
EVENT_RECEIVED: Final = "event_received"
EVENT_PUBLISHED: Final = "event_published"
EVENT_DROPPED: Final = "event_dropped"

#: An agent run's requests (``agent-runs.md``, "The run's history").
INPUT_REQUESTED: Final = "input_requested"
APPROVAL_REQUESTED: Final = "approval_requested"
REQUEST_EXPIRED: Final = "request_expired"

#: Each type's step within a run: the second part of the id (see the module's docstring), so that
#: events of one moment (the manual clock stands still) list in the order they happen.
_STEPS: Final = {
    RUN_STARTED: 5,
    CALL_STARTED: 50,
    SCHEDULE_SKIPPED: 5,
    EVENT_RECEIVED: 50,
    EVENT_PUBLISHED: 50,
    EVENT_DROPPED: 50,
    INTERACTION_REQUESTED: 10,
    TOOL_CALL_STARTED: 20,
    TOOL_CALL_ANSWERED: 30,
    TOOL_CALL_FAILED: 30,
    DELIVERY_REFUSED: 20,
    DELIVERY_STARTED: 20,
    DELIVERY_SUCCEEDED: 30,
    DELIVERY_FAILED: 30,
    REQUEST_ANSWERED: 50,
    REQUEST_EXPIRED: 50,
    # A read of a conversation and what it set off, in the order it happened (the sequence orders them).
    REPLY_REFUSED: 40,
    "replies_read": 40,
    "reading_failed": 40,
    "telling_started": 40,
    "telling_succeeded": 40,
    "telling_failed": 40,
    RUN_SUCCEEDED: 90,
    RUN_REJECTED: 90,
}
#: The fields of each type's ``data`` that hold content.
CONTENT_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    REQUEST_ANSWERED: ("answer",),
    RUN_SUCCEEDED: ("output",),
    TOOL_CALL_STARTED: ("arguments",),
    TOOL_CALL_ANSWERED: ("result",),
    DELIVERY_STARTED: ("arguments",),
    DELIVERY_SUCCEEDED: ("result",),
    EVENT_RECEIVED: ("data",),
    EVENT_PUBLISHED: ("data",),
}
#: Content larger than this (bytes as JSON) is shown in lists as its size.
LISTED_CONTENT_MAX: Final = 2048

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
EVENT_ID_PATTERN: Final = re.compile(r"^[0-9]{15}[0-9a-f]{16}$")


def new_event_id(event_type: str, at: datetime, step: int | None = None) -> str:
    """Milliseconds, the type's step, then 6 hex digits of this process's sequence and 10 of randomness:
    events one process records in the same millisecond and step (the refusals and tellings of one read
    under a manual clock) list in the order they were recorded. ``step`` overrides the type's: a run's
    work that records many events in order (a reasoning run's tool calls and activity) gives them one
    step, so that they list as they happened."""
    sequence = next(_sequence()) % _SEQUENCE_SPAN
    chosen = _STEPS.get(event_type, 0) if step is None else step
    return f"{_millis(at):013d}{chosen:02d}{sequence:06x}{secrets.token_hex(5)}"


_SEQUENCE_SPAN: Final = 16**6


def step_of(event_type: str) -> int:
    """The type's step (the second part of its ids), for an id made otherwise than by
    :func:`new_event_id` (one derived from what the event records, so that it is written once)."""
    return _STEPS.get(event_type, 0)


@functools.cache
def _sequence() -> Iterator[int]:
    return itertools.count()


def event_id_floor(at: datetime) -> str:
    """The smallest id of an event at or after ``at`` (for ``since``)."""
    return f"{_millis(at):013d}"


def _millis(at: datetime) -> int:
    return (at - _EPOCH) // timedelta(milliseconds=1)


def is_event_id(text: str) -> bool:
    return EVENT_ID_PATTERN.match(text) is not None


def listed_data(event_type: str, data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``data`` as a list shows it, and the content fields replaced by their size."""
    from parley.documents.json_schema import json_size  # with the first list, not with the api module

    shown = dict(data)
    omitted: list[str] = []
    for name in CONTENT_FIELDS.get(event_type, ()):
        if name in shown:
            size = json_size(shown[name])
            if size > LISTED_CONTENT_MAX:
                shown[name] = {"size": size}
                omitted.append(name)
    return shown, omitted


def event_json(event: Event, *, listed: bool) -> dict[str, Any]:
    """The event as the API shows it: whole, or as a list shows it (``listed``)."""
    data = dict(event.data)
    omitted: list[str] = list(event.omitted)
    if listed:
        data, more = listed_data(event.type, data)
        omitted.extend(name for name in more if name not in omitted)
    shown: dict[str, Any] = {"id": event.id, "type": event.type, "at": event.at}
    if event.run_id is not None:
        shown["run_id"] = event.run_id
    shown["data"] = data
    if omitted:
        shown["omitted"] = omitted
    return shown


#: The step of a reasoning run's work (its tool calls and activity, in the order they happened): before
#: the run's ending (90) in the same millisecond.
WORK_STEP: Final = 50


def run_event(
    event_type: str, moment: datetime, run_id: str, data: dict[str, Any], *, step: int | None = None
) -> Event:
    """An event of a run at ``moment``, with a new id (``step``: see :func:`new_event_id`)."""
    from parley.clock import format_time

    return Event(new_event_id(event_type, moment, step), event_type, format_time(moment), run_id, data)
