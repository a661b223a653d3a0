"""Answering a request (``interaction-format.md``, "Answering a request"; ``http-api.md``:
``answer_interaction``): the answer checked against the request's ``answer_schema``, the fact written
while the request is open (exactly one of an answer, the expiry and a cancel wins: the store's
condition), then the run's wait ended so it takes the answer at once. The same answer sent again gets
the recorded fact; any other after the request ended is ``409``.

An answer read from a reply (``answer_by_reply``) takes the same path, answered by the playbook.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict, StoreContention
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import new_event_id
from parley.runs.ids import is_run_id
from parley.runs.model import AnswerFact, Event, Request, invalid_input
from parley.runs.reading import no_run
from parley.runs.waiting import expiry_name

if TYPE_CHECKING:
    from datetime import datetime

    from parley.runs.service import RunService

CLAIMED_FOR_MAX_BYTES: Final = 256


def answer_interaction(
    runs: RunService,
    playbook: PlaybookRef,
    run_id: str,
    answer: Any,
    *,
    claimed_for: str | None,
    answered_by: str,
) -> AnswerFact:
    """Answer the run's request; the fact (``request_answered``) the run takes."""
    from parley.documents.json_schema import json_bounds_errors, validate_instance

    errors = json_bounds_errors(answer, "/answer")
    if claimed_for is not None:
        size = len(claimed_for.encode("utf-8", "surrogatepass"))
        if size > CLAIMED_FOR_MAX_BYTES:
            errors.append(
                ErrorEntry(
                    "/claimed_for",
                    f"claimed_for is at most {CLAIMED_FOR_MAX_BYTES} bytes; this one is {size:,}.",
                )
            )
    if errors:
        raise invalid_input(errors)
    request = _request_of(runs, playbook, run_id)
    for attempt in range(runs.write_attempts):
        fact = _answered(request, answer)
        if fact is not None:
            _wake(runs, request)
            return fact
        now = runs.runtime.clock.now()
        if now >= parse_time(request.expires_at):
            raise ended(request.run_id, f"Its request expired at {request.expires_at}.")
        errors = validate_instance(answer, request.answer_schema, "/answer")
        if not errors:
            errors = runs.kind(request.type).answer_errors(request, answer)
        if errors:
            raise invalid_input(errors)
        fact, event = answer_fact(now, request.run_id, answer, claimed_for, answered_by)
        try:
            runs.store.answer_request(playbook, fact, event)
        except StoreConflict:
            request = _request_of(runs, playbook, run_id)  # it ended meanwhile: say how
            continue
        except StoreContention:
            runs.back_off(attempt)
            continue
        _after_answer(runs, playbook, run_id)
        return fact
    raise Problem("unavailable", "The request kept changing while it was answered; try again.")


def answer_by_reply(
    runs: RunService, playbook: PlaybookRef, run_id: str, answer: Any, reply: Mapping[str, str]
) -> AnswerFact | None:
    """Record an answer read from a reply ("Answering by reply"): ``request_answered`` with
    ``reply`` (the message's identity), answered by ``playbook:<id>``; the run takes it at once.
    ``None`` when the request no longer takes an answer (answered, expired or cancelled first)."""
    for attempt in range(runs.write_attempts):
        request = runs.store.get_request(playbook, run_id)
        now = runs.runtime.clock.now()
        if request is None or request.state != "open" or now >= parse_time(request.expires_at):
            return None
        answered_by = f"playbook:{playbook.playbook}"
        fact, event = answer_fact(now, run_id, answer, None, answered_by, reply=dict(reply))
        try:
            runs.store.answer_request(playbook, fact, event)
        except StoreConflict:
            return None  # another answer, the expiry or a cancel came first
        except StoreContention:
            runs.back_off(attempt)
            continue
        _after_answer(runs, playbook, run_id)
        return fact
    return None


def answer_fact(
    moment: datetime,
    run_id: str,
    answer: Any,
    claimed_for: str | None,
    answered_by: str,
    **more: Any,
) -> tuple[AnswerFact, Event]:
    """The answer fact and its ``request_answered`` (``more``: such as the ``reply`` it was read from)."""
    at = format_time(moment)
    answer_id = new_event_id(events.REQUEST_ANSWERED, moment)
    data = {"answer": answer, "claimed_for": claimed_for, "answered_by": answered_by, **more}
    fact = AnswerFact(run_id, answer_id, answer, claimed_for, answered_by, at)
    return fact, Event(answer_id, events.REQUEST_ANSWERED, at, run_id, data)


def ended(run_id: str, how: str) -> Problem:
    return Problem("conflict", f"The run {run_id} takes no answer now. {how}")


def _after_answer(runs: RunService, playbook: PlaybookRef, run_id: str) -> None:
    """The run takes the answer at once (its wait ends, if it has parked) and the expiry is forgotten."""
    current = runs.store.get_request(playbook, run_id)
    if current is not None:
        _wake(runs, current)
    runs.ports()[1].cancel(expiry_name(RunKey(playbook.org, playbook.playbook, run_id)))


def _request_of(runs: RunService, playbook: PlaybookRef, run_id: str) -> Request:
    """The run's request: ``404`` for no run, ``409`` for a run that asks nothing."""
    found = runs.store.get_request(playbook, run_id) if is_run_id(run_id) else None
    if found is not None:
        return found
    run = runs.store.get_run(playbook, run_id) if is_run_id(run_id) else None
    if run is None:
        raise no_run(run_id)
    if run.status == "rejected":
        raise ended(run_id, "It was rejected before it asked anything.")
    if runs.kind(run.type).works_elsewhere:
        if run.status != "started":
            raise ended(run_id, f"It has ended ({run.status}).")
        raise Problem("conflict", f"The run {run_id} is at work and waits for no answer now.")
    raise Problem("conflict", f"The run {run_id} sent a notification, which takes no answer.")


def _answered(request: Request, answer: Any) -> AnswerFact | None:
    """The recorded fact when the same answer is sent again; ``409`` when the request ended in any
    other way; ``None`` while it is open."""
    from parley.documents.json_schema import canonical_json

    if not request.takes_answer:
        raise Problem("conflict", f"The run {request.run_id} sent a notification, which takes no answer.")
    if request.state == "answered" and request.fact is not None:
        if canonical_json(request.fact.answer) == canonical_json(answer):
            return request.fact
        raise ended(
            request.run_id,
            f"Its request was answered at {request.fact.answered_at} with another answer; a run takes "
            "one answer.",
        )
    if request.state == "expired":
        raise ended(request.run_id, f"Its request expired at {request.expires_at}.")
    if request.state == "cancelled":
        raise ended(request.run_id, "It was cancelled.")
    return None


def _wake(runs: RunService, request: Request) -> None:
    """End the execution's wait with the answer, if it has parked (else parking does it)."""
    if request.token is not None and request.fact is not None:
        runs.ports()[0].succeed(request.token, {"answer_id": request.fact.answer_id})
