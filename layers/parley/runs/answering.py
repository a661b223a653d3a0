"""Answering a request (``interaction-format.md``, "Answering a request"; ``http-api.md``:
``answer_interaction``): the answer checked against the request's ``answer_schema``, then the fact written
while the request is open (exactly one of an answer, the expiry and a cancel wins: the store's
condition). Where the answer ends its run (an interaction run: it succeeds with the answer as its output,
settled as the caller that answered), the run's ending is written in the same transaction, so
``get_run`` says ``succeeded`` as soon as the answer's ``200`` is sent, and no crash can leave the two
apart. An agent run's answer has its next step taken at once (its type's ``resume``). Then the run's wait
ends (``SendTaskSuccess``) and the expiry is forgotten. The same answer sent again gets the recorded fact
(and repairs a run whose ending an older version never wrote); any other after the request ended is
``409``.

An answer read from a reply (``answer_by_reply``) takes the same path, answered by the playbook.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict, StoreContention
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import ANSWERED, RunKey
from parley.runs import events
from parley.runs.events import new_event_id, run_event
from parley.runs.ids import is_run_id
from parley.runs.model import AnswerFact, Event, Request, Run, invalid_input
from parley.runs.reading import no_run
from parley.runs.waiting import expiry_name

if TYPE_CHECKING:
    from datetime import datetime

    from parley.runs.lifecycle import Lifecycle

CLAIMED_FOR_MAX_BYTES: Final = 256
LOG: Final = logging.getLogger("parley.runs")


def answer_interaction(
    runs: Lifecycle,
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
            _taken(runs, playbook, request, repair=True)
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
            _record(runs, playbook, request, fact, event)
        except StoreConflict:
            request = _request_of(runs, playbook, run_id)  # it ended meanwhile: say how
            continue
        except StoreContention:
            runs.back_off(attempt)
            continue
        _taken(runs, playbook, replace(request, state="answered", fact=fact))
        return fact
    raise Problem("unavailable", "The request kept changing while it was answered; try again.")


def answer_by_reply(
    runs: Lifecycle, playbook: PlaybookRef, run_id: str, answer: Any, reply: Mapping[str, str]
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
            _record(runs, playbook, request, fact, event)
        except StoreConflict:
            return None  # another answer, the expiry or a cancel came first
        except StoreContention:
            runs.back_off(attempt)
            continue
        _taken(runs, playbook, replace(request, state="answered", fact=fact))
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


def answered_ending(run: Run, fact: AnswerFact, moment: datetime) -> tuple[Run, Event]:
    """The ending an answer gives a run whose requests end it: ``succeeded`` with the answer as its
    output, and its ``run_succeeded`` (which names who answered: the run is settled as them)."""
    done = replace(run, status="succeeded", output=fact.answer, finished_at=format_time(moment), input=None)
    event = run_event(
        events.RUN_SUCCEEDED, moment, run.run_id, {"output": fact.answer, "answered_by": fact.answered_by}
    )
    return done, event


def _record(runs: Lifecycle, playbook: PlaybookRef, request: Request, fact: AnswerFact, event: Event) -> None:
    """Write the answer, with the run's ending where the answer ends the run (one transaction)."""
    ending = None
    if runs.kind(request.type).requests_end_runs:
        run = runs.store.get_run(playbook, request.run_id)
        if run is not None and run.status == "started":
            ending = answered_ending(run, fact, parse_time(fact.answered_at))
    runs.store.answer_request(playbook, fact, event, ending=ending)


def _taken(runs: Lifecycle, playbook: PlaybookRef, request: Request, *, repair: bool = False) -> None:
    """After the answer's write: an agent run takes its next step (its type's ``resume``), or, with
    ``repair`` (the same answer sent again), a run whose ending an older version never wrote is ended
    now; then the run's wait ends with the ending and the expiry is forgotten. A step that could not be
    started leaves the wait parked: its own timeout is then the backstop that starts it."""
    key = RunKey(playbook.org, playbook.playbook, request.run_id)
    kind = runs.kind(request.type)
    if repair or not kind.requests_end_runs:
        run = runs.store.get_run(playbook, request.run_id)
        if run is not None and run.status == "started":
            try:
                kind.resume(key, request)
            except Exception:
                LOG.exception("run %s could not take its answer now; its wait's backstop will", key.run_id)
                return
    token = request.token
    if token is None:  # parked since it was read? (else parking finds the request ended and ends itself)
        current = runs.store.get_request(playbook, request.run_id)
        token = current.token if current is not None else None
    if token is not None:
        runs.ports()[0].succeed(token, {"ending": ANSWERED})
    runs.ports()[1].cancel(expiry_name(key))


def _request_of(runs: Lifecycle, playbook: PlaybookRef, run_id: str) -> Request:
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
