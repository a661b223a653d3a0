"""The states of a compiled workflow, by name (``workflow-format.md``, "On AWS": every state is named
after its task's reference), and what each one is to its task, so that a run's history can be read back
from the execution's own history by state name ("How a run ends").

**Names.** A task's states are named after its reference (its JSON Pointer, such as
``/do/0/approval/try/0/ask``): the task's own state is the reference itself, the others the reference and
a short part after ``#`` (``/do/0/approval#catch``). The machine's own states belong to the document,
whose reference is the empty pointer (``#start``, ``#flow``, ``#end``). Step Functions takes at most 80
characters: a longer name keeps its start and ends with ``~`` and a digest of the whole name.

**Roles.** Each state has one or more roles in its task; the history event each one means:

- ``entered``: entering the state starts the task (``task_started``);
- ``completed``: leaving the state means the task produced its output, the state's output
  (``task_completed``);
- ``skipped``: the task's ``if`` did not hold; the state hands the task's input on (``task_skipped``);
- ``retried``: the Wait of a retry; its input is ``{"attempt", "delay", "data"}``: the retry's number
  (1 for the first retry), the seconds it waits, the task's data (``task_retried``);
- ``failed``: the state raises the task's error, its ``Cause`` (``task_failed``): a ``raise``, or a
  ``catch`` that did not take the error of its ``try``;
- ``call``: the Task of ``call: run_definition`` (``call_started`` when it is scheduled; its failure
  is the task's failure, ``task_failed``);
- ``condition``: the Choice of the task's ``if`` (no event: the task has not started);
- ``catch``: the Choice deciding whether a ``catch`` takes its ``try``'s error and whether it retries;
- ``part``: any other state of the task (shaping its input or output, a branch's first or last state).

The document's states (reference ``""``): ``start`` (the first state: the variables every expression
reads), ``flow`` (the Parallel around every task, whose Catch takes any error nothing else took),
``part`` (the document's ``input.from`` and ``output.as``), ``end`` (the Task telling the workflow entry
how the run ended: its input is ``{"output"}`` or ``{"error"}``), ``finish`` (the Succeed after it).
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
    "flow",
    "end",
    "finish",
]

#: The reference of the document itself (the empty JSON Pointer): the machine's own states.
DOCUMENT: Final = ""


@dataclass(frozen=True, slots=True)
class TaskState:
    """What one state of a compiled machine is: its task's reference and its roles in that task."""

    reference: str
    roles: frozenset[Role]

    def has(self, role: Role) -> bool:
        return role in self.roles


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
