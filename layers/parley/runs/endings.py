"""How a waiting run ends, whatever its type (``interaction-format.md``, "How a run ends"):

- ``cancel_run``: the request ends ``cancelled`` and the run ``rejected`` as cancelled, in one write (a
  run at work that holds no request, such as a reasoning run, ends so at once);
- ``expire_request`` (the timer's work): an open request past its time ends ``expired`` and the run
  ``rejected`` as ``unanswered``, kind ``expired``, in one write — or, for a type whose requests do not
  end its runs (an agent run), ``request_expired`` while the run goes on, its next step taken at once;
- ``park_request`` (the execution's wait task): the task token kept on the open request, or the wait
  ended at once when the request ended first;
- ``settle_run`` (the execution's backstop, when its wait timed out): what nothing else ended is ended
  from what the store says — an open request past its time expires, an answered request whose run never
  took it is taken (data an older version wrote), an agent run's ended request has its next step taken.

Exactly one of an answer, the expiry and a cancel moves the request from ``open`` (the store's
condition); the others are told ``409`` (the timer does nothing). Every ending is written before the
wait's token is answered (``SendTaskSuccess`` with the ending's name), so a crash between the two leaves
a run that has ended and an execution whose own timeout ends it. Every step is idempotent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict, StoreContention
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import CANCELLED, EXPIRED, RunKey
from parley.runs import events
from parley.runs.events import run_event
from parley.runs.kinds import CALLER_TYPE
from parley.runs.model import Rejection, Request, Run, invalid_input
from parley.runs.reading import get_run
from parley.runs.waiting import TIMEOUT_ERROR, expiry_name

if TYPE_CHECKING:
    from parley.runs.lifecycle import Lifecycle

CANCEL_REASON_MAX_CHARS: Final = 1_024


def cancel_run(
    runs: Lifecycle,
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
        after_ending(runs, playbook, RunKey(playbook.org, playbook.playbook, run_id), CANCELLED)
        return ended
    raise Problem("unavailable", "The run kept changing while it was cancelled; try again.")


def expire_request(runs: Lifecycle, key: RunKey) -> str:
    """The timer's work: end the request as expired once it is due and still open. What happened:
    ``expired``, or ``unchanged`` (already ended, or not yet due: the backstop covers that). A request
    that ended while its run, still ``started``, never took that ending (a write an older version made
    apart, an agent run's step whose invocation was lost) is taken now, as the backstop would."""

    def expire() -> str:
        outcome = _expire(runs, key, due=True)
        if outcome == "unchanged":
            return _settle(runs, key, None)
        return outcome

    return runs.retrying(expire)


def _expire(runs: Lifecycle, key: RunKey, *, due: bool, end_wait: bool = True) -> str:
    """End an open request as expired (``due``: only once its time has come; the backstop expires it
    whatever the clock says, a minute after it). What happened: ``expired`` or ``unchanged``.
    ``end_wait`` is false for the backstop: the wait is over already, and the settle function may neither
    answer tokens nor forget schedules (least privilege)."""
    playbook = PlaybookRef(key.org, key.playbook)
    request = runs.store.get_request(playbook, key.run_id)
    run = runs.store.get_run(playbook, key.run_id)
    if request is None or request.state != "open" or run is None or run.status != "started":
        return "unchanged"
    now = runs.runtime.clock.now()
    if due and now < parse_time(request.expires_at):
        return "unchanged"
    detail = f"Nobody answered the request before it expired at {request.expires_at}."
    kind = runs.kind(run.type)
    if not kind.requests_end_runs:
        # An agent run's request: it ends ``request_expired``, the run goes on (agent-runs.md): its next
        # step is taken at once, the model told that nobody answered.
        expired = run_event(
            events.REQUEST_EXPIRED, now, key.run_id, {"expires_at": request.expires_at, "detail": detail}
        )
        try:
            runs.store.expire_open_request(
                playbook, key.run_id, expired, due_by=format_time(now) if due else None
            )
        except StoreConflict:
            return "unchanged"
        kind.resume(key, replace(request, state="expired"))
        if end_wait:
            after_ending(runs, playbook, key, EXPIRED)
        return "expired"
    rejection = Rejection("unanswered", detail, kind="expired")
    ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now))
    event = run_event(events.RUN_REJECTED, now, key.run_id, {"rejection": rejection.as_json()})
    try:
        runs.store.end_request(playbook, ended, "expired", event, due_by=format_time(now) if due else None)
    except StoreConflict:
        return "unchanged"  # answered or cancelled first: the timer does nothing
    if end_wait:
        after_ending(runs, playbook, key, EXPIRED)
    return "expired"


def after_ending(runs: Lifecycle, playbook: PlaybookRef, key: RunKey, ending: str) -> None:
    """Once the ending is written: end the execution's wait with it (if it has parked; else parking
    finds the request ended and does it), forget the expiry and the type's pending work."""
    waits, scheduler = runs.ports()
    request = runs.store.get_request(playbook, key.run_id)
    if request is not None and request.token is not None:
        waits.succeed(request.token, {"ending": ending})
    if ending != EXPIRED:
        scheduler.cancel(expiry_name(key))
    if request is not None:
        runs.kind(request.type).forget(key, request)


def park_request(runs: Lifecycle, key: RunKey, token: str) -> str:
    """The wait task: keep the token on the open request; if the request has already ended (its
    ending raced ahead of the token), end the wait now with that ending — first taking an answer whose
    run never took it (data an older version wrote). Returns ``parked`` or the request's state."""
    playbook = PlaybookRef(key.org, key.playbook)
    try:
        runs.store.keep_token(playbook, key.run_id, token)
        return "parked"
    except StoreConflict:
        pass
    request = runs.store.get_request(playbook, key.run_id)
    if request is None:
        runs.ports()[0].succeed(token, {"ending": CANCELLED})
        return "gone"
    if request.state == "answered" and runs.kind(request.type).requests_end_runs:
        runs.retrying(lambda: _take(runs, key, request))
    runs.ports()[0].succeed(token, {"ending": request.state})
    return request.state


def settle_run(runs: Lifecycle, key: RunKey, error: str | None) -> str:
    """The backstop, when the execution's wait failed (its timeout ran out: a lost expiry or a lost
    ``SendTaskSuccess``): end from what the store says what nothing else has (idempotent). Returns
    ``expired``, ``succeeded`` or ``resumed`` (what it ended or took up), or ``unchanged``."""
    return runs.retrying(lambda: _settle(runs, key, error))


def _settle(runs: Lifecycle, key: RunKey, error: str | None) -> str:
    playbook = PlaybookRef(key.org, key.playbook)
    run = runs.store.get_run(playbook, key.run_id)
    request = runs.store.get_request(playbook, key.run_id)
    if run is None or run.status != "started" or request is None:
        return "unchanged"
    if request.state == "open":
        # The expiry's schedule was lost, and the wait ran out a minute after it.
        return _expire(runs, key, due=False, end_wait=False) if error == TIMEOUT_ERROR else "unchanged"
    if request.state == "answered" or (
        request.state == "expired" and not runs.kind(run.type).requests_end_runs
    ):
        return _take(runs, key, request)
    return "unchanged"


def _take(runs: Lifecycle, key: RunKey, request: Request) -> str:
    """The run takes its request's ending if it is still ``started`` (its type's ``resume``)."""
    run = runs.store.get_run(PlaybookRef(key.org, key.playbook), key.run_id)
    if run is None or run.status != "started":
        return "unchanged"
    return runs.kind(run.type).resume(key, request)
