"""The states of a compiled workflow, by name (``workflow-format.md``, "On AWS": every state is named
after its task's reference), and what each one is to the tasks, so that a run's history can be read back
from the execution's own history by state name ("How a run ends").

**Names.** A task's states are named after its reference (its JSON Pointer, such as
``/do/0/approval/try/0/ask``): the task's own state is the reference itself, the others the reference and
a short part after ``#`` (``/do/0/approval#catch``). The machine's own states belong to the document,
whose reference is the empty pointer (``#start``, ``#end``). Step Functions takes at most 80 characters:
a longer name keeps its start and ends with ``~`` and a digest of the whole name.

**Roles.** Each state has one or more roles in its own task (:attr:`TaskState.reference`); the history
event each one means:

- ``entered``: entering the state starts the task (``task_started``);
- ``completed``: leaving the state means the task produced its output, the state's output
  (``task_completed``) — unless the state failed and its ``Catch`` took the error (a Task's failure:
  ``TaskFailed``, ``TaskTimedOut`` or ``EvaluationFailed`` after its last attempt began);
- ``skipped``: the task's ``if`` did not hold; the state hands the task's input on (``task_skipped``);
- ``retried``: the Wait of a retry; its input is ``{"attempt", "delay", "data"}``: the retry's number
  (1 for the first retry), the seconds it waits, the task's data (``task_retried``);
- ``failed``: the state raises the task's error (``task_failed``): a ``raise``, or a ``catch`` that did
  not take the error of its ``try`` (inside a ``try`` a Fail whose ``Cause`` is the error; outside any,
  a Pass that keeps the error for the end);
- ``call``: the Task of ``call: run_definition`` (``call_started`` when it is scheduled; its failure
  is the task's failure, ``task_failed``);
- ``condition``: the Choice of the task's ``if`` (no event: the task has not started);
- ``catch``: the Choice deciding whether a ``catch`` takes its ``try``'s error and whether it retries;
- ``part``: any other state of the task (shaping its input or output, a branch's first or last state;
  a ``for``'s Choice ``R#each`` before each iteration; a competing fork's branch's ``B#race``, ``B#won``
  and ``B#lost``; a fork's branch ending the run, ``B#ending``; a call's ``R#deadline`` inside a
  ``try``; the race of a timed task of several states: ``R#in-time``, ``R#timed-end``, ``R#clock``,
  ``R#late``, ``R#timed-begin``, and the Parallel ``R#timed`` itself: the timed task's own first state, in
  its branch, starts it).

A task's ``timeout`` raises its error in a state of the role ``failed``: ``R#timeout``, or outside any
``try`` a call's ``R#deadline`` (which tells the entry first); a competing fork whose every branch
failed raises the first branch's error in ``R#lost`` (``failed``). A wait, a listen and an emit are
states ``entered`` and ``completed`` like a call (a listen's ``event_received`` and an emit's
``event_published`` are the entry's to record).

**One state for several tasks.** A state that does no work of its own is left out wherever the state
after it can be named directly, so one state may stand for several tasks:

- :attr:`TaskState.starts`: the tasks around its own that entering it starts too, outermost first,
  told before its own (the first state of a ``do`` without an ``input.from``, the Task of a ``try``
  whose list is that one call);
- :attr:`TaskState.completes`: the tasks around its own that it completes too when it completes,
  innermost first, told after its own (the last state of a ``do``, of a ``try`` or of its recovery);
- :attr:`TaskState.ways`: for a Choice, what leaving it for each of the states it may go to means, told
  when the next state is entered: a task skipped (an ``if`` that did not hold goes straight to the next
  task), a task of a ``catch.do`` started and completed (the first ``set`` of a recovery is the catch's
  own rule), the tasks it completes on that way.

The document's states (reference ``""``): ``start`` (the first state: the variables every expression
reads, the document's ``input.from``; where the first task's state is entered once, ``#start`` is
folded into it and that state starts the document: ``""`` is the first of its ``starts``), ``part``
(the document's ``output.as``), ``end`` (the Task telling the workflow entry how the run ended, then
ending the execution: its input is the run's output, or an error it reads from the variable
``uncaught``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final, Literal

#: Step Functions' longest state name.
MAX_NAME: Final = 80
#: Between a task's reference and the part of one of its states.
PART_SEPARATOR: Final = "#"
#: Before the digest of a name that had to be cut.
CUT_MARK: Final = "~"
_DIGEST: Final = 8

Role = Literal[
    "entered",
    "completed",
    "skipped",
    "retried",
    "failed",
    "call",
    "condition",
    "catch",
    "part",
    "start",
    "end",
]

#: The reference of the document itself (the empty JSON Pointer): the machine's own states.
DOCUMENT: Final = ""

#: Roles in one task: its reference and the roles.
TaskRoles = tuple[str, frozenset[Role]]


@dataclass(frozen=True, slots=True)
class TaskState:
    """What one state of a compiled machine is: its own task's reference and its roles in that task; the
    tasks around it it starts and completes too; for a Choice, what each way out means."""

    reference: str
    roles: frozenset[Role]
    starts: tuple[str, ...] = ()
    completes: tuple[str, ...] = ()
    ways: tuple[tuple[str, tuple[TaskRoles, ...]], ...] = ()

    def has(self, role: Role) -> bool:
        return role in self.roles

    def way(self, name: str) -> tuple[TaskRoles, ...] | None:
        """What leaving this Choice for the state ``name`` means (``None``: not one of its ways)."""
        for target, told in self.ways:
            if target == name:
                return told
        return None


def state_name(reference: str, part: str | None = None) -> str:
    """The name of a task's state: the reference, or the reference and ``#part``; cut to
    :data:`MAX_NAME` characters with a digest of the whole name where longer."""
    name = reference if part is None else f"{reference}{PART_SEPARATOR}{part}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_DIGEST]
    return name[: MAX_NAME - _DIGEST - len(CUT_MARK)] + CUT_MARK + digest


def is_cut(name: str) -> bool:
    """Whether a state's name was cut (its reference cannot be read from it)."""
    return len(name) == MAX_NAME and name[-_DIGEST - len(CUT_MARK)] == CUT_MARK


def reference_of(name: str) -> str:
    """The reference of an uncut state name (what is before ``#``)."""
    return name.split(PART_SEPARATOR, 1)[0]
