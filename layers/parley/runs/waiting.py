"""A run that waits (``architecture.md``: the store is the truth; executions only wait): its expiry
scheduled and its execution started, both idempotent by name, with the execution's own timeout
(``expires`` plus a minute) as the backstop of a lost expiry; then the type schedules what it does
while the run waits (``FunctionKind.waiting``).

A run a workflow called starts no execution (issue 26): its ending answers the workflow's task token,
which is the wait that matters, and the workflow's own bounds (its ``timeout``, the operator's longest
duration) end whatever it still waits for."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict, StoreContention
from parley.errors import Problem
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import run_event
from parley.runs.model import Rejection, Request, Run

if TYPE_CHECKING:
    from parley.runs.lifecycle import Lifecycle

#: Step Functions' error when the wait task's own timeout (the backstop) ran out.
TIMEOUT_ERROR: Final = "States.Timeout"
#: The wait task's own timeout is the request's expiry plus this: the backstop of a lost expiry.
BACKSTOP_SECONDS: Final = 60


def expiry_name(key: RunKey) -> str:
    return f"expire-{key.scoped_id}"


def start_waiting(
    runs: Lifecycle, playbook: PlaybookRef, request: Request, *, execution: bool = True
) -> None:
    """Schedule the expiry and (``execution``: a run no workflow called) start the execution of the run's
    wait (both idempotent by name), then let the type schedule its own work."""
    waits, scheduler = runs.ports()
    key = RunKey(playbook.org, playbook.playbook, request.run_id)
    expires_at = parse_time(request.expires_at)
    scheduler.schedule(expiry_name(key), expires_at, {"work": "expire", "run": key.as_json()})
    if execution:
        seconds = max(1, round((expires_at - parse_time(request.requested_at)).total_seconds()))
        waits.start(key, timeout_seconds=seconds + BACKSTOP_SECONDS, number=request.number)
    runs.kind(request.type).waiting(playbook, request)


def abandoned(runs: Lifecycle, playbook: PlaybookRef, run: Run, cause: Exception) -> Problem:
    """A request whose expiry or execution could not be started would hold its place with nothing to
    end it: end it at once, the run rejected as ``unavailable`` (which may run again under its id)."""
    problem = Problem(
        "unavailable",
        "The run could not start waiting for its answer (the runtime's scheduler or executions failed); "
        "try again shortly.",
    )
    now = runs.runtime.clock.now()
    rejection = Rejection.of(problem)
    ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now))
    event = run_event(events.RUN_REJECTED, now, run.run_id, {"rejection": rejection.as_json()})
    with contextlib.suppress(StoreConflict, StoreContention):  # else it ended meanwhile, by itself
        runs.store.end_request(playbook, ended, "cancelled", event)
    return problem
