"""Workflows as the run lifecycle sees them (``parley.runs.kinds``): check a document and write its
overview and compiled state machine; run it (``parley.workflow.running``); keep its schedule when it is
saved or retired (``parley.workflow.schedules``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.definitions.model import Definition, PlaybookRef
    from parley.documents.definition import CheckedDocument
    from parley.ports.runtime import Runtime
    from parley.runs.service import RunService
    from parley.workflow.running import Workflows


def check(source: str) -> CheckedDocument:
    """Check a workflow when it is saved (``workflow-format.md``), and compile it: the definition shows
    the compiled ``state_machine`` (the entry function's ARN as a placeholder) and its ``schedule``."""
    from parley.documents.definition import CheckedDocument
    from parley.workflow.compiler import compile_workflow, not_yet_compiled
    from parley.workflow.document import MEDIA_TYPE, check_workflow_document
    from parley.workflow.overview import write_workflow_overview

    document = check_workflow_document(source, not_run=not_yet_compiled)
    compiled = compile_workflow(document.data)
    return CheckedDocument(
        media_type=MEDIA_TYPE,
        description=document.description,
        front_matter={},
        body="",
        overview=write_workflow_overview(document.data),
        shows={"state_machine": compiled.definition, "schedule": document.schedule},
        uses=tuple(dict.fromkeys(f"{call.type}/{call.name}" for call in document.calls)),
    )


def bind(runs: RunService) -> Workflows:
    from parley.workflow.running import Workflows

    return Workflows(runs)


def saved(runtime: Runtime, playbook: PlaybookRef, definition: Definition) -> None:
    """A workflow was saved or retired: its schedule set, replaced or stopped (``workflow-format.md``,
    "Schedules")."""
    from parley.workflow.schedules import saved as schedule_saved

    schedule_saved(runtime, playbook, definition)
