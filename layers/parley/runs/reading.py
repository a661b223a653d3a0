"""Reading runs and events (``http-api.md``, "Runs" and "Events"): ``get_run``, ``list_runs``,
``list_interactions``, ``get_run_history``, ``list_playbook_events`` and ``get_event``. Content over
2 KiB is shown in a list as its size (``parley.runs.events``); ``get_event`` shows it whole."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.clock import format_time
from parley.definitions.cursor import decode_cursor, encode_cursor
from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.infrastructure.keys import list_position
from parley.runs import events
from parley.runs.events import event_json, is_event_id
from parley.runs.ids import is_run_id
from parley.runs.kinds import CALLER_TYPE
from parley.runs.listing import DEFAULT_LIMIT, check_limit, foreign_cursor, list_scope, listing, since_time
from parley.runs.model import RUN_STATUSES, Event, Page, Request, Run

if TYPE_CHECKING:
    from parley.runs.lifecycle import Lifecycle


def no_run(run_id: str) -> Problem:
    return Problem("not_found", f"This playbook has no run {run_id!r}.")


def get_run(runs: Lifecycle, playbook: PlaybookRef, run_id: str) -> Run:
    """The run; a started run of a type at work elsewhere (an agent run) shows what it waits for while
    its request is open (``agent-runs.md``, "A run that waits")."""
    run = runs.store.get_run(playbook, run_id) if is_run_id(run_id) else None
    if run is None:
        raise no_run(run_id)
    if run.status == "started" and runs.kind(run.type).works_elsewhere:
        return replace(run, waiting=waiting_of(runs.store.get_request(playbook, run_id)))
    return run


def waiting_of(request: Request | None) -> dict[str, Any] | None:
    """``waiting`` of a run whose request is ``request``: ``None`` unless the request is open."""
    if request is None or request.state != "open":
        return None
    return {"for": request.waiting_for, "since": request.requested_at, "expires_at": request.expires_at}


def list_runs(
    runs: Lifecycle,
    playbook: PlaybookRef,
    *,
    definition_type: str | None = None,
    name: str | None = None,
    status: str | None = None,
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> Page:
    filters = {"type": definition_type, "name": name, "status": status}
    chosen, scope, after = listing("runs", playbook, filters, limit, cursor, statuses=RUN_STATUSES)
    found = runs.store.list_runs(playbook, filters=chosen, limit=limit, after=_joined(after))
    shown: list[Run] = found.items
    return Page(
        "runs", tuple(run.as_json() for run in shown), _time_cursor(scope, found.resume), found.scanned
    )


def list_interactions(
    runs: Lifecycle,
    playbook: PlaybookRef,
    *,
    to: str | None = None,
    definition_type: str | None = None,
    function: str | None = None,
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> Page:
    """The playbook's open requests, newest first (those past their expiry are left out), each as its
    type shows it."""
    filters = {"to": to, "type": definition_type, "function": function}
    chosen, scope, after = listing("interactions", playbook, filters, limit, cursor)
    now = format_time(runs.runtime.clock.now())
    found = runs.store.list_open_requests(
        playbook, filters=chosen, expiring_after=now, limit=limit, after=_joined(after)
    )
    requests: list[Request] = found.items
    listed = tuple(runs.kind(request.type).listed(request) for request in requests)
    return Page("interactions", listed, _time_cursor(scope, found.resume), found.scanned)


def _joined(after: tuple[str, str] | None) -> str | None:
    """A cursor's position (time, run id) as the position in the list's index."""
    return None if after is None else list_position(*after)


def _time_cursor(scope: str, resume: str | None) -> str | None:
    """The cursor of where a newest-first list goes on (its index's position: ``{time}#{run_id}``), in
    the shape cursors have always had: the time and the run id. A bounded read that stopped on a short
    page goes on from where it stopped."""
    if resume is None:
        return None
    at, _, run_id = resume.rpartition("#")
    return encode_cursor(scope, [at, run_id])


def get_run_history(
    runs: Lifecycle,
    playbook: PlaybookRef,
    run_id: str,
    *,
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> Page:
    """The run's events in order (content over 2 KiB shown as its size). A workflow run's come from its
    type, which reads its tasks' from the engine's own history (``parley.workflow.history``)."""
    run = get_run(runs, playbook, run_id)
    if run.type == CALLER_TYPE:
        return _paged_history(runs, playbook, run, limit, cursor)
    return _events(
        runs,
        playbook,
        run_id=run_id,
        event_type=None,
        since=None,
        descending=False,
        limit=limit,
        cursor=cursor,
    )


def list_playbook_events(
    runs: Lifecycle,
    playbook: PlaybookRef,
    *,
    event_type: str | None = None,
    since: str | None = None,
    run_id: str | None = None,
    order: str = "desc",
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> Page:
    """The playbook's events, newest first unless ``order`` is ``asc``; ``since`` is a time
    (ISO 8601 with its offset, such as ``2026-10-17T10:18:42Z``): events at or after it."""
    if order not in ("asc", "desc"):
        raise Problem("bad_request", "order is asc or desc (desc, newest first, when left out).")
    if run_id is not None and not is_run_id(run_id):
        raise Problem("bad_request", "run_id is a run's id, a UUID.")
    floor = events.event_id_floor(since_time(since)) if since is not None else None
    return _events(
        runs,
        playbook,
        run_id=run_id,
        event_type=event_type,
        since=floor,
        descending=order == "desc",
        limit=limit,
        cursor=cursor,
    )


def _paged_history(runs: Lifecycle, playbook: PlaybookRef, run: Run, limit: int, cursor: str | None) -> Page:
    """A page of a history made whole by its type (its cursor: the position of the page's end)."""
    check_limit(limit)
    scope = list_scope("events", playbook, {"run_id": run.run_id, "order": "asc"})
    start = 0
    if cursor is not None:
        parts = decode_cursor(scope, cursor)
        if len(parts) != 1 or not parts[0].isdigit():
            raise foreign_cursor()
        start = int(parts[0])
    caller: Any = runs.kind(CALLER_TYPE)
    every: list[Event] = caller.history(playbook, run)
    shown = every[start : start + limit]
    end = start + len(shown)
    next_cursor = encode_cursor(scope, [str(end)]) if end < len(every) else None
    return Page("events", tuple(event_json(e, listed=True) for e in shown), next_cursor)


def _events(
    runs: Lifecycle,
    playbook: PlaybookRef,
    *,
    run_id: str | None,
    event_type: str | None,
    since: str | None,
    descending: bool,
    limit: int,
    cursor: str | None,
) -> Page:
    check_limit(limit)
    filters = {
        "run_id": run_id,
        "type": event_type,
        "since": since,
        "order": "desc" if descending else "asc",
    }
    scope = list_scope(
        "events", playbook, {key: value for key, value in filters.items() if value is not None}
    )
    after = None
    if cursor is not None:
        parts = decode_cursor(scope, cursor)
        if len(parts) != 1 or not is_event_id(parts[0]):
            raise foreign_cursor()
        after = parts[0]
    found = runs.store.list_events(
        playbook,
        run_id=run_id,
        event_type=event_type,
        since=since,
        descending=descending,
        limit=limit,
        after=after,
    )
    shown: list[Event] = found.items
    next_cursor = encode_cursor(scope, [found.resume]) if found.resume is not None else None
    return Page("events", tuple(event_json(e, listed=True) for e in shown), next_cursor, found.scanned)


def get_event(runs: Lifecycle, playbook: PlaybookRef, event_id: str) -> dict[str, Any]:
    """One event with its content whole."""
    event = runs.store.get_event(playbook, event_id) if is_event_id(event_id) else None
    if event is None:
        raise Problem("not_found", f"This playbook has no event {event_id!r}.")
    return event_json(event, listed=False)
