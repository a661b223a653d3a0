"""What the formats that ask a person share when a document is saved (``interaction-format.md``,
"Templates and pointers"; ``agent-runs.md``, "Turning it on: ``ask``").

A template written as a front-matter value (an interaction function's ``to``, a reasoning function's
``ask.to`` or an approval's ``confirmation``) is checked as every template is, each problem at the
value's pointer and on the document's line where the template's own line is. The names a confirmation
reads are here too, with the check of the operator's confirmations (:func:`confirmation_problems`), since
the operator's configuration checks confirmations as documents do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from parley.config.tool_servers import TOOL_NAME
from parley.documents.front_matter import LineIndex
from parley.documents.problems import DocumentProblem
from parley.templates.checks import PlaceNames, check_template

#: A confirmation reads only ``arguments``: the call's validated arguments. Their schema is the tool's,
#: unknown when a document is saved, so any ``arguments.<name>`` may be read.
CONFIRMATION_PLACE: Final = PlaceNames(
    {"arguments": None}, label="the confirmation", structures=frozenset({"arguments"})
)


def template_problems(
    source: str,
    pointer: str,
    place: PlaceNames,
    *,
    input_schema: Mapping[str, Any] | None,
    lines: LineIndex,
    whole_value: bool = False,
) -> list[DocumentProblem]:
    """The problems of the template written at ``pointer``, each at that pointer and its own line."""
    return [
        DocumentProblem(max(line, 1), pointer, message)
        for line, message in check_template(
            source,
            place=place,
            input_schema=input_schema,
            first_line=lines.value_line_of(pointer),
            whole_value=whole_value,
        )
    ]


def confirmation_problems(confirmation: str) -> list[tuple[int, str]]:
    """The problems of a confirmation written in the operator's configuration (an approval of a tool
    server, ``parley.config.tool_servers``), each as ``(line, message)``; the configuration names this
    check by module path, since it sits below the templates."""
    return check_template(confirmation, place=CONFIRMATION_PLACE, input_schema=None, first_line=1)


__all__ = ["CONFIRMATION_PLACE", "TOOL_NAME", "confirmation_problems", "template_problems"]
