"""The entry of the ``workflow`` function (``workflow-format.md``, "Calling a function", "How a run
ends"): the compiled state machines invoke it (``parley.workflow.engine``).

- ``{"action": "call", "token", "run", "depth", "task", "attempt", "type", "name", "input"}`` (a
  ``.waitForTaskToken`` task): start the called run and keep the token on it; its ending answers the
  token (``parley.workflow.running``).
- ``{"action": "end", "run", "output"}`` or ``{"action": "end", "run", "error"}``: write the run's
  ending.
- ``{"action": "ended", "run", "status", "error", "cause"}`` (the local executor), or EventBridge's
  ``Step Functions Execution Status Change`` (the stack's rule): the execution failed without its end;
  a run still started ends as the ``runtime`` error says.
- ``{"action": "listen", "token", "run", "task", "attempt", "to", "read"}`` (a ``.waitForTaskToken``
  task) and ``{"action": "emit", "run", "task", "attempt", "event"}``: a run's events
  (``parley.workflow.listening``); a run's end, its ending without the end and a task's deadline forget
  the listens that still wait there.

Both are idempotent: Step Functions delivers at least once. Its own module, so that the other functions
never load the workflow type.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from parley.workflow.engine import (
    CALL_ACTION,
    DEADLINE_ACTION,
    END_ACTION,
    ENDED_ACTION,
    STOPPED_ACTION,
)

#: EventBridge's event for a Step Functions execution that changed status (the stack's rule sends the
#: stage's workflow machines' FAILED and TIMED_OUT executions here).
STATUS_CHANGE: Final = "Step Functions Execution Status Change"

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime

FunctionHandler = Callable[[Mapping[str, Any], Any], dict[str, Any]]


def build_workflow_handler(runtime: Runtime) -> FunctionHandler:
    from parley.runs.service import run_service
    from parley.workflow import engine
    from parley.workflow.listening import RunEvents
    from parley.workflow.running import Workflows

    runs = run_service(runtime)
    listening = RunEvents(runs)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        workflows = runs.kind("workflow")
        assert isinstance(workflows, Workflows)
        if event.get("detail-type") == STATUS_CHANGE:
            event = _ended_of(event.get("detail") or {})
        action = event.get("action")
        if action == ENDED_ACTION:
            outcome = workflows.ended(event)
            listening.ended(event)
            return {"outcome": outcome}
        if action == STOPPED_ACTION:
            return {"outcome": workflows.stopped(event)}
        if action == DEADLINE_ACTION:
            listening.lapsed(event)
            return {"outcome": workflows.deadline(event)}
        if action == engine.LISTEN_ACTION:
            return {"outcome": listening.listen(event)}
        if action == engine.EMIT_ACTION:
            return {"outcome": listening.emit(event)}
        if action == CALL_ACTION:
            return {"outcome": workflows.call(event)}
        if action == END_ACTION:
            outcome = workflows.end(event)
            listening.ended(event)
            return {"outcome": outcome}
        raise ValueError(f"the workflow function does not know the action {action!r}")

    return handler


def _ended_of(detail: Mapping[str, Any]) -> dict[str, Any]:
    """An execution's status change as the entry's ``ended`` event (the run's key is in its input)."""
    try:
        given = json.loads(detail.get("input") or "{}")
    except ValueError:
        given = {}
    return {
        "action": ENDED_ACTION,
        "run": given.get("run") if isinstance(given, dict) else None,
        "status": detail.get("status"),
        "error": detail.get("error"),
        "cause": detail.get("cause"),
    }


def handle_workflow(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the ``workflow`` function."""
    return _default()(event, context)


@functools.cache
def _default() -> FunctionHandler:
    from parley.aws.environment import runtime_from_environment

    return build_workflow_handler(runtime_from_environment())
