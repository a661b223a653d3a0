"""Operations of ``http-api.md`` "Events": list_playbook_events and get_event.

Content (answers, outputs) is shown in a list where it takes at most 2 KiB as JSON, else as its size
(see ``parley.runs.events``); ``get_event`` shows it whole.
"""

from __future__ import annotations

from typing import Any, Final

from parley.api.definitions import CURSOR, LIMIT
from parley.api.operation import Answer, Call, Hints, Operation, Param, Services, page_words
from parley.api.shapes import EVENT, page_of

TAG: Final = "Events"


def list_playbook_events(services: Services, call: Call) -> Answer:
    page = services.runs.list_playbook_events(
        call.ref,
        event_type=call.values["type"],
        since=call.values["since"],
        run_id=call.values["run_id"],
        order=call.values["order"],
        limit=call.values["limit"],
        cursor=call.values["cursor"],
    )
    return Answer(page.as_json())


def get_event(services: Services, call: Call) -> Answer:
    return Answer(services.runs.get_event(call.ref, call.values["event_id"]))


def _got(services: Services, call: Call, body: dict[str, Any]) -> str:
    of_run = f" of run {body['run_id']}" if body.get("run_id") else ""
    return f"The event {body.get('id')} is {body.get('type')}{of_run}, at {body.get('at')}."


OPERATIONS: Final = (
    Operation(
        name="list_playbook_events",
        title="List the playbook's events",
        method="GET",
        route="/events",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="List the playbook's events, newest first.",
        description=(
            "List what happened in the playbook (runs started and ended, requests asked and answered, "
            "tools executed), newest first unless order is asc, a page at a time; filter by type, run "
            "or time. Large content shows as its size here: get_event shows an event whole."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=list_playbook_events,
        summarize=lambda services, call, body: page_words(len(body.get("events") or []), "event", body),
        params=(
            Param("type", "query", "Only the events of this type, such as run_started or request_answered."),
            Param(
                "since",
                "query",
                "Only the events at or after this time: ISO 8601 with its offset, such as "
                "2026-10-17T10:18:42Z.",
                format="date-time",
            ),
            Param("run_id", "query", "Only the events of this run (a UUID).", format="uuid"),
            Param(
                "order",
                "query",
                "desc (newest first, when left out) or asc.",
                enum=("asc", "desc"),
                default="desc",
                rule="order is asc or desc (desc, newest first, when left out).",
            ),
            LIMIT,
            CURSOR,
        ),
        output=page_of("events", EVENT),
    ),
    Operation(
        name="get_event",
        title="Read an event",
        method="GET",
        route="/events/{event_id}",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="Read one event with its content whole.",
        description=(
            "Read one event with all its content (arguments, results, messages, answers), which a list "
            "shows as its size when it is large. The answer_id of an answer is an event's id."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=get_event,
        summarize=_got,
        params=(Param("event_id", "path", "The event's id, as a list or an answer gives it."),),
        output=EVENT,
    ),
)
