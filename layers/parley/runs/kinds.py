"""The registry of function types: the one way the lifecycle (``parley.runs``) and the definitions
(through the runtime's document check) reach a type.

A type is a package (``parley.interaction``, ``parley.reasoning``) whose ``kind`` module has:

- ``check(source) -> CheckedDocument``: check a document when it is saved, and write its overview;
- ``bind(runs) -> FunctionKind``: the type working over one lifecycle (:class:`FunctionKind`);
- optionally ``saved(runtime, playbook, definition)``: a definition of the type was saved or retired
  (``definition`` is its head now), for what the type keeps beside it (a workflow's schedule), called
  by :func:`definition_saved`;
- optionally ``warnings_here(runtime, source) -> list[DocumentWarning]``: what the server's configuration
  says of a document being saved (a reasoning function's model that it would not call), added to the
  definition's ``warnings`` by :func:`warnings_here`.

Types are named here by module path and imported on first use, so the lifecycle imports no type (the
types import the lifecycle, never the other way round) and a function's cold start loads only the
types its events use.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Protocol

from parley.definitions.model import Definition, PlaybookRef

if TYPE_CHECKING:
    from parley.documents.definition import CheckedDocument
    from parley.documents.problems import DocumentWarning
    from parley.errors import ErrorEntry
    from parley.ports.runtime import Runtime
    from parley.ports.waiting import RunKey
    from parley.runs.model import Request, Run

#: Each type's ``kind`` module.
KINDS: Final[Mapping[str, str]] = {
    "interaction": "parley.interaction.kind",
    "reasoning": "parley.reasoning.kind",
    "workflow": "parley.workflow.kind",
}
#: The type whose runs call others (``call: run_definition``): a called run's ending answers it.
CALLER_TYPE: Final = "workflow"
#: Timed work (the timer function's ``work``) that a type schedules for itself, by the type doing it.
TIMED_WORK: Final[Mapping[str, str]] = {
    "deliver": "interaction",
    "lost": "interaction",
    "read": "interaction",
    "reason_bound": "reasoning",
    "schedule": "workflow",
}


class FunctionKind(Protocol):
    """A function type as the lifecycle sees it, bound to one lifecycle (``parley.runs.service``)."""

    #: Whether a started run of the type goes on after the call that started it, holding no request
    #: (a reasoning run at work in the ``reason`` function): ``cancel_run`` may then end it.
    works_elsewhere: bool
    #: Whether a request that expires ends its run (an interaction run: ``unanswered``); an agent run's
    #: request expires and the run goes on (``agent-runs.md``), taken up again by ``resume``.
    requests_end_runs: bool

    def run(self, start: RunStart) -> Run:
        """Run the definition for a run the lifecycle has made (its id, retries and input digest
        settled): the run ``started`` or ``succeeded``; a rejection is recorded on the run
        (``RunService.rejected``) and raised as its :class:`Problem`."""
        ...

    def waiting(self, playbook: PlaybookRef, request: Request) -> None:
        """The run's wait has (re)started: schedule what the type does while it waits (idempotent)."""
        ...

    def resume(self, key: RunKey, request: Request) -> str:
        """The run's request ended (answered, or, where requests do not end runs, expired) and the run,
        still ``started``, has not taken it: an agent run has its next step taken (``resumed``: the
        ``reason`` function is invoked, idempotent by its claim); a run whose requests end it takes the
        answer now (``succeeded``: its ending was never written, by data an older version wrote) or
        ``unchanged``."""
        ...

    def answer_errors(self, request: Request, answer: Any) -> list[ErrorEntry]:
        """The answer's problems beyond the request's ``answer_schema`` (pointers under ``/answer``)."""
        ...

    def forget(self, key: RunKey, request: Request) -> None:
        """The run's wait ended otherwise: cancel the timed work the type still has pending."""
        ...

    def timed(self, work: Mapping[str, Any]) -> dict[str, Any]:
        """Do a piece of the type's timed work (one of :data:`TIMED_WORK`); what happened."""
        ...

    def listed(self, request: Request) -> dict[str, Any]:
        """The request as ``list_interactions`` shows it."""
        ...


@dataclass(frozen=True)
class RunStart:
    """What a type needs to run a definition: the run as the lifecycle made it (``started``, its
    ``attempt`` counted), the active definition, the input, the attempt it replaces, and the moment."""

    playbook: PlaybookRef
    definition: Definition
    run: Run
    input_value: Any
    replacing: int | None
    moment: datetime


def kind_module(definition_type: str) -> Any:
    """The ``kind`` module of a type; ``404`` for a type there is none of, as every route says it
    (``parley.definitions.service.require_type``; every type of the definitions has its kind here)."""
    from parley.definitions.service import require_type

    require_type(definition_type)
    return importlib.import_module(KINDS[definition_type])


def check_source(definition_type: str, source: str) -> CheckedDocument:
    """Check ``source`` as a document of ``definition_type`` (the runtime's default document check).

    Raises :class:`~parley.errors.Problem` ``invalid_input`` with every problem under ``/source``.
    """
    checked: CheckedDocument = kind_module(definition_type).check(source)
    return checked


def definition_saved(runtime: Runtime, playbook: PlaybookRef, definition: Definition) -> None:
    """A definition was created, updated (also with its source unchanged) or retired: its type's
    ``saved`` hook, if it has one. Each hook is harmless to call again, so a save answered with a failure
    here is repaired by saving the same source again."""
    hook = getattr(kind_module(definition.type), "saved", None)
    if hook is not None:
        hook(runtime, playbook, definition)


def warnings_here(runtime: Runtime, definition_type: str, source: str) -> list[DocumentWarning]:
    """The type's warnings about ``source`` on this server (its ``warnings_here`` hook), none without one."""
    hook = getattr(kind_module(definition_type), "warnings_here", None)
    return [] if hook is None else list(hook(runtime, source))


def work_kind(work: str) -> str:
    """The type doing a piece of timed work; ``ValueError`` for work nobody does."""
    kind = TIMED_WORK.get(work)
    if kind is None:
        raise ValueError(f"the timer does not know the work {work!r}")
    return kind
