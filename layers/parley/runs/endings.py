"""How a waiting run ends, whatever its type (``interaction-format.md``, "How a run ends"):

- ``cancel_run``: the request ends ``cancelled`` and the run ``rejected`` as cancelled (a run at work
  that holds no request, such as a reasoning run, ends so at once);
- ``expire_request`` (the timer's work): an open request past its time ends ``expired``, the run
  ``rejected`` as ``unanswered``, kind ``expired`` — or, for a type whose requests do not end its runs
  (an agent run), ``request_expired`` while the run goes on;
- ``park_request`` (the execution's wait task): the task token kept on the open request, or the wait
  ended at once when the request ended first;
- ``settle_run`` (the execution's settle step): an answered run resumed by its type (an agent run's
  expired request too); the backstop (the wait's own timeout) expires a request whose expiry was lost.

Exactly one of an answer, the expiry and a cancel moves the request from ``open`` (the store's
condition); the others are told ``409`` (the timer does nothing). Every step is idempotent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict, StoreContention
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import CANCELLED_ERROR, EXPIRED_ERROR, UNDELIVERED_ERROR, RunKey
from parley.runs import events
from parley.runs.events import run_event
from parley.runs.kinds import CALLER_TYPE
from parley.runs.model import Rejection, Run, invalid_input
from parley.runs.reading import get_run
from parley.runs.waiting import TIMEOUT_ERROR, expiry_name

if TYPE_CHECKING:
    from parley.runs.service import RunService

CANCEL_REASON_MAX_CHARS: Final = 1_024


def cancel_run(
    runs: RunService,
    playbook: PlaybookRef,
    run_id: str,
    *,
    reason: str | None,
    cancelled_by: str,
    kind: str | None = None,
) -> Run:
    """Cancel a waiting run: its request ends ``cancelled`` and the run ``rejected`` as cancelled.

    ``kind`` says why, where a workflow is involved (``workflow-format.md``, "How a run ends"): a
    workflow run cancelled by ``cancel_run`` is ``requested``; a run its workflow no longer waits for,
    ``parent_ended``. A cancelled workflow cancels the runs it waits for (its type's ``cancelled``)."""
    if reason is not None and not 1 <= len(reason) <= CANCEL_REASON_MAX_CHARS:
        raise invalid_input(
            [ErrorEntry("/reason", f"A reason is 1 to {CANCEL_REASON_MAX_CHARS:,} characters.")]
        )
    for attempt in range(runs.write_attempts):
        run = get_run(runs, playbook, run_id)
        if run.status != "started":
            raise Problem(
                "conflict",
                f"The run {run_id} has ended ({run.status}); only a waiting run can be cancelled.",
            )
        request = runs.store.get_request(playbook, run_id)
        works_elsewhere = runs.kind(run.type).works_elsewhere
        if works_elsewhere and request is not None and request.state != "open":
            request = None  # an agent run at work again after its last request: it holds none now
        if request is None and not works_elsewhere:
            raise Problem(
                "conflict",
                f"The run {run_id} finishes within the request that started it, which cancel_run cannot "
                "reach; it has asked nothing that waits.",
            )
        if request is not None and request.state != "open":
            raise Problem(
                "conflict",
                f"The run {run_id} is no longer waiting: its request was {request.state}, and the run is "
                "taking that ending.",
            )
        now = runs.runtime.clock.now()
        detail = reason if reason is not None else f"cancel_run cancelled the run (by {cancelled_by})."
        if kind is None and run.type == CALLER_TYPE:
            kind = "requested"
        rejection = Rejection("cancelled", detail, kind=kind)
        ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now), input=None)
        event = run_event(
            events.RUN_REJECTED,
            now,
            run_id,
            {"rejection": rejection.as_json(), "cancelled_by": cancelled_by},
        )
        try:
            if request is None:
                # A run that holds no request (a reasoning run at work): its ending is written while it
                # is still started; the work that finishes later finds it ended and writes nothing.
                runs.store.end_run(playbook, ended, event)
                if run.type == CALLER_TYPE:
                    caller: Any = runs.kind(CALLER_TYPE)
                    caller.cancelled(playbook, ended, detail)
                return replace(ended, record=None)
            runs.store.end_request(playbook, ended, "cancelled", event)
        except StoreConflict:
            continue  # answered, expired or cancelled meanwhile: read again and say so
        except StoreContention:
            runs.back_off(attempt)
            continue
        after_ending(runs, playbook, RunKey(playbook.org, playbook.playbook, run_id), CANCELLED_ERROR, detail)
        return ended
    raise Problem("unavailable", "The run kept changing while it was cancelled; try again.")


def expire_request(runs: RunService, key: RunKey) -> str:
    """The timer's work: end the request as expired once it is due and still open. What happened:
    ``expired``, or ``unchanged`` (already ended, or not yet due: the backstop covers that)."""
    return runs.retrying(lambda: _expire(runs, key, due=True))


def _expire(runs: RunService, key: RunKey, *, due: bool, end_wait: bool = True) -> str:
    """End an open request as expired. ``end_wait`` is false for the settle step's backstop: the
    wait is over already, and settle may not call SendTask* (least privilege)."""
    playbook = PlaybookRef(key.org, key.playbook)
    request = runs.store.get_request(playbook, key.run_id)
    run = runs.store.get_run(playbook, key.run_id)
    if request is None or request.state != "open" or run is None or run.status != "started":
        return "unchanged"
    now = runs.runtime.clock.now()
    if due and now < parse_time(request.expires_at):
        return "unchanged"
    detail = f"Nobody answered the request before it expired at {request.expires_at}."
    if not runs.kind(run.type).requests_end_runs:
        # An agent run's request: it ends ``request_expired``, the run goes on (agent-runs.md) when its
        # execution settles and resumes it.
        expired = run_event(
            events.REQUEST_EXPIRED, now, key.run_id, {"expires_at": request.expires_at, "detail": detail}
        )
        try:
            runs.store.expire_open_request(
                playbook, key.run_id, expired, due_by=format_time(now) if due else None
            )
        except StoreConflict:
            return "unchanged"
        if end_wait:
            after_ending(runs, playbook, key, EXPIRED_ERROR, detail)
        return "expired"
    rejection = Rejection("unanswered", detail, kind="expired")
    ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now))
    event = run_event(events.RUN_REJECTED, now, key.run_id, {"rejection": rejection.as_json()})
    try:
        runs.store.end_request(playbook, ended, "expired", event, due_by=format_time(now) if due else None)
    except StoreConflict:
        return "unchanged"  # answered or cancelled first: the timer does nothing
    if end_wait:
        after_ending(runs, playbook, key, EXPIRED_ERROR, detail)
    return "expired"


def after_ending(runs: RunService, playbook: PlaybookRef, key: RunKey, error: str | None, cause: str) -> None:
    """End the execution's wait (if it has parked; else parking does it): with ``error``, or as a
    success (a notification delivered); forget the expiry and the type's pending work."""
    waits, scheduler = runs.ports()
    request = runs.store.get_request(playbook, key.run_id)
    if request is not None and request.token is not None:
        if error is None:
            waits.succeed(request.token, {"delivered": True})
        else:
            waits.fail(request.token, error, cause)
    if error != EXPIRED_ERROR:
        scheduler.cancel(expiry_name(key))
    if request is not None:
        runs.kind(request.type).forget(key, request)


def park_request(runs: RunService, key: RunKey, token: str) -> str:
    """The wait task: keep the token on the open request; if the request has already ended (its
    ending raced ahead of the token), end the wait now. Returns ``parked`` or the ending."""
    playbook = PlaybookRef(key.org, key.playbook)
    try:
        runs.store.keep_token(playbook, key.run_id, token)
        return "parked"
    except StoreConflict:
        pass
    waits = runs.ports()[0]
    request = runs.store.get_request(playbook, key.run_id)
    if request is None:
        waits.fail(token, CANCELLED_ERROR, f"The run {key.run_id} has no request.")
        return "gone"
    if request.state == "answered" and request.fact is not None:
        waits.succeed(token, {"answer_id": request.fact.answer_id})
    elif request.state == "delivered":
        waits.succeed(token, {"delivered": True})
    elif request.state == "undelivered":
        waits.fail(token, UNDELIVERED_ERROR, "Every attempt to deliver the notification failed.")
    elif request.state == "expired":
        waits.fail(token, EXPIRED_ERROR, f"The request expired at {request.expires_at}.")
    else:
        waits.fail(token, CANCELLED_ERROR, "The run was cancelled.")
    return request.state


def settle_run(runs: RunService, key: RunKey, error: str | None) -> str:
    """The settle step: write the run's ending from what the store says (idempotent). Returns
    ``succeeded``, ``expired`` (the backstop expired it), or ``unchanged``."""
    return runs.retrying(lambda: _settle(runs, key, error))


def _settle(runs: RunService, key: RunKey, error: str | None) -> str:
    playbook = PlaybookRef(key.org, key.playbook)
    run = runs.store.get_run(playbook, key.run_id)
    request = runs.store.get_request(playbook, key.run_id)
    if run is None or run.status != "started" or request is None:
        return "unchanged"
    kind = runs.kind(run.type)
    if request.state == "answered" and request.fact is not None:
        return kind.resume(key, run, request)
    if request.state == "open" and error == TIMEOUT_ERROR:
        # The backstop: the expiry's schedule was lost, and the wait ran out a minute after it.
        outcome = _expire(runs, key, due=False, end_wait=False)
        if outcome != "expired" or kind.requests_end_runs:
            return outcome
        request = runs.store.get_request(playbook, key.run_id) or request
    if request.state == "expired" and not kind.requests_end_runs:
        return kind.resume(key, run, request)
    return "unchanged"
