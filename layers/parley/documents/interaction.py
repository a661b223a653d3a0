"""The interaction-format document checker (``interaction-format.md``). Work in progress."""

from __future__ import annotations

from parley.documents.definition import CheckedDocument
from parley.documents.problems import DocumentProblems


def check_interaction_source(source: str) -> CheckedDocument:
    """Temporary stand-in until the full checker lands: requires front matter between --- lines."""
    problems = DocumentProblems()
    if not source.startswith("---\n"):
        problems.add(1, "", "A document starts with YAML front matter between two --- lines")
    problems.raise_if_any()
    return CheckedDocument(
        media_type="text/markdown", description=None, front_matter={}, body=source, overview=""
    )
