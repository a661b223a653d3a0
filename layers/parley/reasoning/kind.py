"""Reasoning functions as the run lifecycle sees them (``parley.runs.kinds``): check a document and
write its overview; warn, on saving, of a model this server would not call
(``parley.reasoning.model_warnings``); run a definition (``parley.reasoning.running``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.documents.definition import CheckedDocument
    from parley.documents.problems import DocumentWarning
    from parley.ports.runtime import Runtime
    from parley.reasoning.running import Reasoning
    from parley.runs.service import RunService


def check(source: str) -> CheckedDocument:
    """Check a reasoning document when it is saved (``reasoning-format.md``, "How a document is
    checked"), and write its overview and its warnings."""
    from parley.documents.definition import CheckedDocument
    from parley.reasoning.document import MEDIA_TYPE, check_reasoning_document
    from parley.reasoning.overview import write_reasoning_overview

    document = check_reasoning_document(source)
    return CheckedDocument(
        media_type=MEDIA_TYPE,
        description=document.description,
        front_matter=dict(document.front_matter),
        body=document.template,
        overview=write_reasoning_overview(document),
        warnings=list(document.warnings),
    )


def warnings_here(runtime: Runtime, source: str) -> list[DocumentWarning]:
    """What this server's configuration says of a saved document: a model it would not call (issue 29)."""
    from parley.reasoning.model_warnings import model_warnings_here

    return model_warnings_here(runtime, source)


def bind(runs: RunService) -> Reasoning:
    from parley.reasoning.running import Reasoning

    return Reasoning(runs)
