"""The overview of a reasoning function: the function in plain words (``reasoning-format.md``, "The
overview"; ``output-shapes.md``, "In the overview").

``get_definition`` shows it before the document, for a person who reads neither Liquid nor YAML. It is
written once, from the checked document, when the document is saved, so it says only what the document
says, in the page's order: the description, what the function needs, what it produces, the model and the
tools it may call (with a Mermaid diagram when it names any), whom an agent run may ask and which tools
wait for a person's approval (``agent-runs.md``, "Turning it on: ``ask``"), then what the model is told, the
instructions (the system block) and the message, read as ``parley.documents.template_words`` reads every
template. The sections read as an interaction function's overview does (``parley.interaction.overview``).

**Used by** is not written here: the definitions that use a function are read each time it is returned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from liquid.exceptions import LiquidError

from parley.documents.durations import duration_in_words
from parley.documents.schema_words import schema_in_words
from parley.documents.template_words import MESSAGE_CUT, cut_template_in_words, template_in_words
from parley.documents.words import (
    MAX_LISTED,
    bold,
    code,
    counted,
    mermaid_label,
    one_line,
    section,
    value_in_words,
)
from parley.reasoning.document import ApproveEntry, AskBlock, ReasoningDocument, ToolReference
from parley.reasoning.shapes import shape_sentence
from parley.templates.environment import SYSTEM_TAG, SystemNode, compile_template

_FUNCTION_LABEL: Final = "This function"
_SYSTEM_OPEN: Final = re.compile(r"\{%-?\s*system\s*-?%\}")
_SYSTEM_CLOSE: Final = re.compile(r"\{%-?\s*endsystem\s*-?%\}")


# --------------------------------------------------------------------------------------------------
# Sections


def _quote(text: str) -> list[str]:
    """A reading as a block quote; trailing spaces stay, since they may be the author's line breaks."""
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return [f"> {line}" if line.strip() else ">" for line in lines]


# --------------------------------------------------------------------------------------------------
# What it needs and what it produces


def _with_defaults(schema: Mapping[str, Any], default: Mapping[str, Any]) -> dict[str, Any]:
    """The input schema with each field's ``input.default`` value written as its ``default``.

    ``schema_in_words`` then says "`value` when left out" for it. ``input.default`` wins over a
    ``default`` the field's own schema writes, as a run fills the input from it.
    """
    merged = dict(schema)
    written = schema.get("properties")
    properties: dict[str, Any] = dict(written) if isinstance(written, Mapping) else {}
    for name, value in default.items():
        if name not in properties:
            continue
        field = properties[name]
        if isinstance(field, Mapping):
            properties[name] = {**field, "default": value}
        elif field is True:
            properties[name] = {"default": value}
    if properties:
        merged["properties"] = properties
    return merged


def _unlisted_defaults(schema: Mapping[str, Any] | None, default: Mapping[str, Any]) -> list[str]:
    """Bullets for the default values of fields the schema does not list."""
    written = schema.get("properties") if schema is not None else None
    listed = written if isinstance(written, Mapping) else {}
    others = [(str(name), value) for name, value in default.items() if name not in listed]
    lines = [f"- {bold(name)}: {value_in_words(value)}." for name, value in others[:MAX_LISTED]]
    if len(others) > MAX_LISTED:
        lines.append(f"- and {counted(len(others) - MAX_LISTED, 'field', 'fields')} more.")
    return lines


def _needs(document: ReasoningDocument) -> list[str]:
    default = document.input_default if isinstance(document.input_default, Mapping) else {}
    schema = document.input_schema
    paragraphs: list[str | list[str]] = []
    if isinstance(schema, Mapping):
        paragraphs.append(schema_in_words(_with_defaults(schema, default), "It takes no input fields."))
    else:
        schema = None
        paragraphs.append("The document gives no input schema, so its input may be any JSON object.")
    unlisted = _unlisted_defaults(schema, default)
    if unlisted:
        lead = "Other fields" if schema is not None else "Fields"
        paragraphs += [f"{lead} the input gets when it leaves them out:", unlisted]
    return section("What it needs", *paragraphs)


def _produces(document: ReasoningDocument) -> list[str]:
    if document.output_schema is not None:
        return section(
            "What it produces",
            "The model's answer is JSON:",
            schema_in_words(document.output_schema, "An object."),
        )
    if document.output_shape is not None:
        return section(
            "What it produces",
            f"The model's answer is JSON of the shape {code(document.output_shape)}: "
            f"{shape_sentence(document.output_shape)}.",
        )
    return section("What it produces", "Text: the model's answer, as it writes it.")


# --------------------------------------------------------------------------------------------------
# The model and its tools


def _tool_words(tool: ToolReference) -> str:
    if tool.every_tool:
        return f"every tool the server {code(tool.server)} allows"
    return f"the tool {code(tool.tool)} on the server {code(tool.server)}"


def _diagram(document: ReasoningDocument) -> list[str]:
    """A Mermaid flowchart of the function, its model and the tools the model may call."""
    function, model = mermaid_label(_FUNCTION_LABEL), mermaid_label(str(document.model))
    lines = ["```mermaid", "flowchart LR", f"  function[{function}] -->|asks| model[{model}]"]
    for index, tool in enumerate(document.tools, 1):
        label = f"every tool of {tool.server}" if tool.every_tool else str(tool)
        lines.append(f"  model -->|may call| tool{index}[{mermaid_label(label)}]")
    lines.append("```")
    return lines


def _model(document: ReasoningDocument) -> list[str]:
    said = f"The model {code(str(document.model))} of the provider {code(document.model.provider)} answers."
    if not document.tools:
        return section("Which model it uses", said, "The model may call no tools.")
    tools = [f"- {_tool_words(tool)}" for tool in document.tools]
    return section(
        "Which model it uses",
        said,
        "The model may call these tools while it answers:",
        tools,
        _diagram(document),
    )


# --------------------------------------------------------------------------------------------------
# Whom it may ask


def _template_line(source: str) -> str:
    """A short template, such as ``ask.to`` or a confirmation, read in words on one line."""
    return one_line(template_in_words(source))


def _approval_words(entry: ApproveEntry) -> str:
    tool = f"the tool {code(entry.tool)} on the server {code(entry.server)}"
    if entry.preview is not None:
        return (
            f"{tool}, with the text of {code(entry.preview)} as its confirmation "
            "(that tool is called first, with the same arguments)"
        )
    confirmation = _template_line(entry.confirmation or "")
    return f"{tool}, with the confirmation “{confirmation}”" if confirmation else tool


def _asks(ask: AskBlock, approve: tuple[ApproveEntry, ...]) -> list[str]:
    party = _template_line(ask.to) or "nobody"
    waits = duration_in_words(ask.expires)
    paragraphs: list[str | list[str]] = [
        f"While it works, the run may ask {party} a question. Each question or approval waits {waits} "
        "for an answer; one nobody answers by then ends unanswered, and the run goes on.",
        "The model may report its progress while it works."
        if ask.progress
        else "The model does not report its progress.",
    ]
    if approve:
        paragraphs += [
            f"These tools wait for the approval of {party} before each call; a call that is not approved "
            "is not made:",
            [f"- {_approval_words(entry)}" for entry in approve],
        ]
    else:
        paragraphs.append("No tool waits for approval.")
    return section("Whom it may ask", *paragraphs)


# --------------------------------------------------------------------------------------------------
# What the model is told


@dataclass(frozen=True)
class _Part:
    """A part of the template: ``template[start:end]``."""

    start: int
    end: int


@dataclass(frozen=True)
class _Split:
    """The system block's instructions, and the message before and after the block."""

    instructions: _Part | None
    before: _Part
    after: _Part | None


def _tag_span(source: str, name_at: int) -> tuple[int, int] | None:
    """The ``{% … %}`` around a tag whose name starts at ``name_at``."""
    start = source.rfind("{%", 0, name_at)
    end = source.find("%}", name_at)
    if start < 0 or end < 0:
        return None
    return start, end + 2


def _system_tags(template: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Where the system block's opening and closing tags are, read from the parse tree."""
    try:
        nodes = compile_template(template).nodes
    except (LiquidError, RecursionError):
        return _system_tags_by_pattern(template)
    for node in nodes:
        if not isinstance(node, SystemNode):
            continue
        opening = node.token
        closing = node.block.token
        if not template.startswith(SYSTEM_TAG, opening.start_index) or not template.startswith(
            "end" + SYSTEM_TAG, closing.start_index
        ):
            return _system_tags_by_pattern(template)
        first = _tag_span(template, opening.start_index)
        last = _tag_span(template, closing.start_index)
        if first is None or last is None or first[1] > last[0]:
            return _system_tags_by_pattern(template)
        return first, last
    return None


def _system_tags_by_pattern(template: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    opening = _SYSTEM_OPEN.search(template)
    if opening is None:
        return None
    closing = _SYSTEM_CLOSE.search(template, opening.end())
    if closing is None:
        return None
    return opening.span(), closing.span()


def _skip_space(template: str, position: int, stop: int) -> int:
    while position < stop and template[position].isspace():
        position += 1
    return position


def _back_space(template: str, position: int, start: int) -> int:
    while position > start and template[position - 1].isspace():
        position -= 1
    return position


def _split(template: str) -> _Split:
    """Split the template at its system block, trimming the whitespace its tags' dashes remove."""
    tags = _system_tags(template)
    if tags is None:
        return _Split(None, _Part(0, len(template)), None)
    (open_start, open_end), (close_start, close_end) = tags
    inner_start, inner_end = open_end, close_start
    before_end, after_start = open_start, close_end
    if template.startswith("{%-", open_start):
        before_end = _back_space(template, before_end, 0)
    if template.startswith("-%}", open_end - 3):
        inner_start = _skip_space(template, inner_start, inner_end)
    if template.startswith("{%-", close_start):
        inner_end = _back_space(template, inner_end, inner_start)
    if template.startswith("-%}", close_end - 3):
        after_start = _skip_space(template, after_start, len(template))
    return _Split(_Part(inner_start, inner_end), _Part(0, before_end), _Part(after_start, len(template)))


def _line_at(document: ReasoningDocument, offset: int) -> int:
    return document.template_first_line + document.template.count("\n", 0, offset)


def _read(document: ReasoningDocument, part: _Part) -> tuple[str, int | None]:
    text = document.template[part.start : part.end]
    return cut_template_in_words(text, _line_at(document, part.start))


def _message(document: ReasoningDocument, split: _Split) -> tuple[str, int | None]:
    """The message in words: the text before and after the system block, read as one template."""
    template = document.template
    before, after = split.before, split.after
    if after is None or not template[after.start : after.end].strip():
        return _read(document, before)
    if not template[before.start : before.end].strip():
        return _read(document, after)
    joined = template[before.start : before.end] + template[after.start : after.end]
    reading, line = cut_template_in_words(joined, _line_at(document, before.start))
    if line is not None and before.end - before.start < MESSAGE_CUT:
        # The cut falls after the block: count the block's lines too.
        line += template.count("\n", before.end, after.start)
    return reading, line


def _told(document: ReasoningDocument) -> list[str]:
    split = _split(document.template)
    paragraphs: list[str | list[str]] = []
    if split.instructions is not None:
        reading, line = _read(document, split.instructions)
        quoted = _quote(reading)
        paragraphs += ["The instructions:", quoted] if quoted else ["The instructions are empty."]
        if line is not None:
            paragraphs.append(
                f"_The instructions are cut here; they continue on line {line:,} of the document._"
            )
    reading, line = _message(document, split)
    quoted = _quote(reading)
    paragraphs += ["The message:", quoted] if quoted else ["An empty message."]
    if line is not None:
        paragraphs.append(f"_The message is cut here; it continues on line {line:,} of the document._")
    return section("What the model is told", *paragraphs)


# --------------------------------------------------------------------------------------------------
# The overview


def write_reasoning_overview(document: ReasoningDocument) -> str:
    """The overview of a reasoning function, in Markdown (``reasoning-format.md``, "The overview").

    In order: the description (or that there is none yet), **What it needs**, **What it produces**,
    **Which model it uses** (with a Mermaid diagram when the function names tools), **Whom it may ask**
    (only with ``ask``) and **What the model is told**. It never raises on a checked document.
    """
    description = document.description
    if isinstance(description, str) and description.strip():
        lines = [description.strip(), ""]
    else:
        lines = ["This function has no description yet.", ""]
    lines += _needs(document)
    lines += _produces(document)
    lines += _model(document)
    if document.ask is not None:
        lines += _asks(document.ask, document.approve)
    lines += _told(document)
    return "\n".join(lines).rstrip("\n") + "\n"


__all__ = ["write_reasoning_overview"]
