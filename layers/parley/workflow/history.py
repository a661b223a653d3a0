"""A workflow run's history (``workflow-format.md``, "How a run ends"): ``run_started``, then for each
task ``task_started``, ``task_completed``, ``task_skipped``, ``task_failed``, ``task_retried`` and
``call_started``, and the ending.

The tasks' events are read from the engine's own execution history (``GetExecutionHistory`` on AWS,
the local interpreter's history locally), by state name (``parley.workflow.states``: each state is
named after its task and has roles in it, and may stand for the tasks around it too), not from a second
record written task by task. What the store keeps (``run_started``, ``call_started`` with the called
run, the ending) is merged in: the start first, each ``call_started`` right after its task's
``task_started``, the ending last.

Events read from the execution have ids made from the execution event's time and number, so the same
history reads the same ids; ``get_event`` does not find them (they are not kept).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.runs import events
from parley.runs.model import Event
from parley.workflow.states import Role, TaskState

if TYPE_CHECKING:
    from datetime import datetime

TASK_STARTED: Final = "task_started"
TASK_COMPLETED: Final = "task_completed"
TASK_SKIPPED: Final = "task_skipped"
TASK_FAILED: Final = "task_failed"
TASK_RETRIED: Final = "task_retried"
#: A state's roles whose entry means an event of its task, in the order they are told.
_ON_ENTRY: Final[tuple[tuple[Role, str], ...]] = (
    ("entered", TASK_STARTED),
    ("skipped", TASK_SKIPPED),
    ("retried", TASK_RETRIED),
    ("failed", TASK_FAILED),
)
#: The roles of a Choice's way out, in the order they are told.
_ON_WAY: Final[tuple[tuple[Role, str], ...]] = (
    ("entered", TASK_STARTED),
    ("skipped", TASK_SKIPPED),
    ("completed", TASK_COMPLETED),
)
#: The execution events that fail a state (its exit, where its Catch took the error, completes nothing).
_FAILURES: Final = ("TaskFailed", "TaskTimedOut", "EvaluationFailed")
#: The step of the tasks' events in their ids (between the start's and the ending's).
_TASK_STEP: Final = 50


def task_events(
    run_id: str,
    execution_history: list[dict[str, Any]],
    states: Mapping[str, TaskState],
    fallback: datetime,
) -> list[Event]:
    """The tasks' events of an execution's history, in order.

    A state may stand for several tasks (``parley.workflow.states``): entering it starts the tasks it
    starts, then its own; leaving it completes its own, then the tasks it completes; a Choice's way out
    is told when the state it went to is entered. A state that failed and whose Catch took the error
    (its exit follows ``TaskFailed``, ``TaskTimedOut`` or ``EvaluationFailed`` since its last attempt
    began) completes nothing."""
    found: list[Event] = []
    failed: set[str] = set()
    left: dict[str, TaskState] = {}
    for entry in execution_history:
        name = str(entry.get("name") or "")
        kind = str(entry.get("type", ""))
        told: list[tuple[str, str]] = []
        if kind.endswith("StateEntered"):
            for choice, leaving in list(left.items()):
                way = leaving.way(name)
                if way is not None:
                    del left[choice]
                    told.extend(_way(way))
        state = states.get(name)
        if state is not None:
            told.extend(_mapped(kind, name, state, failed, left))
        at = _time(entry.get("timestamp"), fallback)
        for number, (reference, mapped) in enumerate(told):
            if not reference:
                continue  # the document's own states
            data: dict[str, Any] = {"task": reference, "name": reference.rpartition("/")[2]}
            if mapped == TASK_FAILED and entry.get("error"):
                data["error"] = entry.get("error")
                if entry.get("cause"):
                    data["cause"] = entry.get("cause")
            elif mapped == TASK_COMPLETED:
                # the output's size as JSON, in bytes: the state's output, or where a Choice's way
                # completed it, the input of the state it went to
                size = entry.get("output_size", entry.get("input_size"))
                if isinstance(size, int):
                    data["size"] = size
            elif mapped == TASK_RETRIED and isinstance(entry.get("input"), Mapping):
                # the retry's Wait is given {attempt, delay, data} (parley.workflow.states, "retried")
                data.update(
                    {key: entry["input"][key] for key in ("attempt", "delay") if key in entry["input"]}
                )
            event_id = _event_id(run_id, at, f"{entry.get('id')}.{number}")
            found.append(Event(event_id, mapped, format_time(at), run_id, data))
    return found


def _mapped(
    kind: str, name: str, state: TaskState, failed: set[str], left: dict[str, TaskState]
) -> list[tuple[str, str]]:
    """The tasks' events one execution event of a state means, as ``(task, event)`` (a ``raise`` state
    starts its task and fails it)."""
    if kind.endswith("StateEntered"):
        failed.discard(name)
        told = [(task, TASK_STARTED) for task in state.starts]
        return told + [(state.reference, event) for role, event in _ON_ENTRY if state.has(role)]
    if kind.endswith("StateExited"):
        if state.ways:
            left[name] = state
        if name in failed:
            return []
        told = [(state.reference, TASK_COMPLETED)] if state.has("completed") else []
        return told + [(task, TASK_COMPLETED) for task in state.completes]
    if kind in _FAILURES:
        failed.add(name)
        if (kind == "TaskFailed" and state.has("call")) or kind == "EvaluationFailed":
            return [(state.reference, TASK_FAILED)]
        return []
    if kind in ("TaskScheduled", "TaskSucceeded"):
        failed.discard(name)  # an attempt again (a retry), or the one that succeeded
    return []


def _way(way: tuple[tuple[str, frozenset[Role]], ...]) -> list[tuple[str, str]]:
    """What a Choice's way out tells: each task's events, in order."""
    return [(task, event) for task, roles in way for role, event in _ON_WAY if role in roles]


def merged(kept: list[Event], tasks: list[Event]) -> list[Event]:
    """The store's events and the tasks' in one order (see the module's docstring)."""
    head = [event for event in kept if event.type == events.RUN_STARTED]
    calls: dict[str, list[Event]] = {}
    for event in kept:
        if event.type == events.CALL_STARTED:
            calls.setdefault(str(event.data.get("task", "")), []).append(event)
    tail = [event for event in kept if event.type not in (events.RUN_STARTED, events.CALL_STARTED)]
    ordered = list(head)
    for event in tasks:
        ordered.append(event)
        if event.type == TASK_STARTED:
            ordered.extend(calls.pop(str(event.data["task"]), []))
    for left in calls.values():
        ordered.extend(left)
    ordered.extend(tail)
    return ordered


def _time(value: Any, fallback: datetime) -> datetime:
    if isinstance(value, str):
        try:
            return parse_time(value)
        except ValueError:
            return fallback
    return fallback


def _event_id(run_id: str, at: datetime, number: Any) -> str:
    millis = int(at.timestamp() * 1000)
    digest = hashlib.sha256(f"{run_id}/{number}".encode()).hexdigest()[:16]
    return f"{millis:013d}{_TASK_STEP:02d}{digest}"
