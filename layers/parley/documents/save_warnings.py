"""Warnings about mistakes a saved document may hold, for every function type (``http-api.md``,
"Definitions": the definition's ``warnings``; issue 18, point 3).

A document that passed its type's check is saved, and these do not refuse it, since each is something
the format pages allow. But each is most often a mistake that a run would find only later:

- a template that reads ``input.<field>`` where the input schema lists its ``properties`` without that
  field (``parley.templates.checks.input_warnings``): a run whose input lacks it ends ``invalid_input``
  with a pointer that blames the caller. The places that read ``input``: an interaction function's
  ``to``, ``from``, message, ``call.with`` and ``deliver.with``; a reasoning function's template and
  ``ask.to``;
- a keyword that no draft of JSON Schema defines, in any schema of the document (``input.schema``,
  ``output.schema``, the answer schema): it checks nothing
  (``parley.documents.json_schema.schema_keyword_warnings``);
- a tool server that does not serve the playbook (an interaction function's ``call.server`` or
  ``deliver.server``, a reasoning function's ``tools``): a run ends ``unavailable`` until the operator
  configures it, which the operator may yet do.

:func:`save_warnings` is pure: what the save knows beyond the document (the servers that serve the
playbook, from the runtime's operator configuration) comes in a :class:`SaveContext`, which the
definitions service makes for the playbook it saves to. The document is read again here for its lines,
so that no type's check needs to know about the context. The pointers name each type's fields; a pointer
that a type does not have is simply absent from its documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from parley.documents.front_matter import LineIndex, read_document
from parley.documents.json_schema import schema_keyword_warnings
from parley.documents.pointers import join_pointer
from parley.documents.problems import DocumentProblems, DocumentWarning
from parley.errors import Problem
from parley.templates.checks import PlaceNames, input_warnings, place_names

#: A definition shows at most this many warnings (``reasoning-format.md``: "at most 100").
MAX_WARNINGS: Final = 100

#: The fields whose value is one template over ``input``, ``today`` and ``now``, and how they are named.
_TEMPLATE_FIELDS: Final[Mapping[str, PlaceNames]] = {
    "/to": place_names("to"),
    "/from": place_names("from"),
    "/ask/to": replace(place_names("to"), label="`ask.to`"),
}
#: The fields whose every string inside is a template that reads ``input`` (typed arguments).
_ARGUMENT_FIELDS: Final[Mapping[str, PlaceNames]] = {
    "/call/with": place_names("call.with"),
    "/deliver/with": place_names("deliver.with"),
}
#: What the text after the front matter is, by type: the message a person is sent, or a model's prompt.
_BODY_PLACES: Final[Mapping[str, PlaceNames]] = {"interaction": place_names("message")}
_BODY_PLACE: Final = place_names("template")
#: The fields that name a tool server.
_SERVER_FIELDS: Final = ("/call/server", "/deliver/server")
_SCHEMA_FIELDS: Final = ("/input/schema", "/output/schema")

_MORE: Final = re.compile(r"Line \d+: (\d+) more warnings are not shown")
_LINE: Final = re.compile(r"Line (\d+)")


@dataclass(frozen=True)
class SaveContext:
    """What a save knows beyond the document: the names of the tool servers that serve the playbook
    saved to, or ``None`` where the runtime does not say (no warning about servers is then given)."""

    servers: frozenset[str] | None = None


def save_warnings(definition_type: str, source: str, context: SaveContext) -> list[DocumentWarning]:
    """Every warning about ``source``, a document of ``definition_type`` that passed its type's check,
    in line order, each once. A source that cannot be read as a document has none."""
    try:
        split, front_matter, lines = read_document(source, DocumentProblems())
    except Problem:
        return []
    if not isinstance(front_matter, dict):
        return []
    found: set[DocumentWarning] = set()
    found.update(_schema_warnings(front_matter, lines))
    found.update(_template_warnings(definition_type, front_matter, lines, split.body, split.body_first_line))
    if context.servers is not None:
        found.update(_server_warnings(front_matter, lines, context.servers))
    return sorted(found)


def merged_warnings(own: Sequence[str], found: Iterable[DocumentWarning]) -> list[str]:
    """The type's own warnings and :func:`save_warnings`' as the definition shows them: in line order, at
    most 100, the 100th counting the rest (``Line 230: 12 more warnings are not shown``).

    Where both speak of one keyword of a schema (a reasoning function's output schema warns of a keyword
    the runtime does not know), the shared warning, which names the keyword meant, stands for both: at
    an unknown keyword's pointer, the type says nothing else.
    """
    shared = list(found)
    replaced = tuple(
        f"Line {warning.line}, {warning.pointer}: "
        for warning in shared
        if warning.pointer.startswith(tuple(f"{field}/" for field in _SCHEMA_FIELDS))
    )
    kept = [text for text in own if not text.startswith(replaced)]
    entries = sorted([*kept, *map(str, shared)], key=_line_of)
    if len(entries) <= MAX_WARNINGS:
        return entries
    shown = entries[: MAX_WARNINGS - 1]
    rest = sum(_counted(text) for text in entries[MAX_WARNINGS - 1 :])
    return [*shown, f"Line {_line_of(entries[MAX_WARNINGS - 1])}: {rest} more warnings are not shown"]


# --- the findings ----------------------------------------------------------------------------------------


def _value(front_matter: Mapping[str, Any], pointer: str) -> Any:
    value: Any = front_matter
    for token in pointer.split("/")[1:]:
        if not isinstance(value, Mapping):
            return None
        value = value.get(token)
    return value


def _input_schema(front_matter: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The input schema as the type's check accepted it: an object schema, else none to compare with."""
    schema = _value(front_matter, "/input/schema")
    return schema if isinstance(schema, Mapping) and schema.get("type") == "object" else None


def _schema_warnings(front_matter: Mapping[str, Any], lines: LineIndex) -> Iterator[DocumentWarning]:
    for pointer in _SCHEMA_FIELDS:
        schema = _value(front_matter, pointer)
        if schema is not None:
            yield from schema_keyword_warnings(schema, pointer, lines)


def _template_warnings(
    definition_type: str, front_matter: Mapping[str, Any], lines: LineIndex, body: str, body_first_line: int
) -> Iterator[DocumentWarning]:
    schema = _input_schema(front_matter)
    if schema is None:
        return
    defaults = _value(front_matter, "/input/default")
    named = frozenset(defaults) if isinstance(defaults, Mapping) else frozenset()

    def warnings(source: str, pointer: str, place: PlaceNames, first_line: int) -> Iterator[DocumentWarning]:
        for line, message in input_warnings(
            source, place=place, input_schema=schema, first_line=first_line, defaults=named
        ):
            yield DocumentWarning(max(line, 1), pointer, message)

    for pointer, place in _TEMPLATE_FIELDS.items():
        value = _value(front_matter, pointer)
        if isinstance(value, str):
            yield from warnings(value, pointer, place, lines.value_line_of(pointer))
    for pointer, place in _ARGUMENT_FIELDS.items():
        for at, text in _strings(_value(front_matter, pointer), pointer):
            yield from warnings(text, at, place, lines.value_line_of(at))
    if body.strip():
        place = _BODY_PLACES.get(definition_type, _BODY_PLACE)
        yield from warnings(body, "", place, body_first_line)


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer, text) for each string inside typed arguments, in document order, without recursion."""
    stack: list[tuple[str, Any]] = [(pointer, value)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, str):
            yield at, item
        elif isinstance(item, dict):
            stack.extend((join_pointer(at, key), inner) for key, inner in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((join_pointer(at, index), inner) for index, inner in reversed(list(enumerate(item))))


def _server_uses(front_matter: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(pointer, server) for each tool server the document names: ``call.server``, ``deliver.server``,
    and the server of each ``tools`` entry (``server/tool`` or ``server/*``)."""
    for pointer in _SERVER_FIELDS:
        server = _value(front_matter, pointer)
        if isinstance(server, str):
            yield pointer, server
    tools = front_matter.get("tools")
    if isinstance(tools, list):
        for index, entry in enumerate(tools):
            if isinstance(entry, str) and "/" in entry:
                yield f"/tools/{index}", entry.partition("/")[0]


def _server_warnings(
    front_matter: Mapping[str, Any], lines: LineIndex, servers: frozenset[str]
) -> Iterator[DocumentWarning]:
    """One warning for each server that does not serve the playbook, where the document first names it."""
    named: set[str] = set()
    for pointer, server in _server_uses(front_matter):
        if server in servers or server in named:
            continue
        named.add(server)
        yield DocumentWarning(
            lines.line_of(pointer),
            pointer,
            f"no tool server named {server!r} serves this playbook; runs will end unavailable until the "
            "operator adds it",
        )


def _line_of(text: str) -> int:
    match = _LINE.match(text)
    return int(match.group(1)) if match else 0


def _counted(text: str) -> int:
    """How many warnings ``text`` stands for: a line that counts the rest stands for that many."""
    match = _MORE.fullmatch(text)
    return int(match.group(1)) if match else 1


__all__ = ["MAX_WARNINGS", "SaveContext", "merged_warnings", "save_warnings"]
