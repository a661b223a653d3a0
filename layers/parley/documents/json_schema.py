"""JSON Schemas of inputs and answers: the rules a schema must keep to be saved, and validation against one.

"Answers that are JSON" (``reasoning-format.md``) gives the rules, which hold for ``input.schema`` and
``output.schema`` of reasoning and interaction functions alike. They keep validation cheap and finite:
no regular expressions, no conditional or counting keywords, ``$ref`` only into the document's own
definitions, and no definition that loops without consuming a property or an item.

A keyword counts only where the schema has a keyword: the walk below visits schema positions alone, so a
property *named* ``pattern`` under ``properties``, or a ``pattern`` inside an ``enum`` value, is data.

A keyword no draft defines (``requried``, ``proprties``, ``maxLenght``) is allowed, as JSON Schema allows
it, and checks nothing: :func:`schema_keyword_warnings` names each one, and the keyword it probably meant,
for the definition's warnings. Every schema of every function type is checked so (``parley.documents.
save_warnings``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, Literal
from urllib.parse import unquote

# jsonschema ships no type hints (types-jsonschema is not a dependency); its classes are Any here.
from jsonschema import Draft7Validator, Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]
from jsonschema.protocols import Validator  # type: ignore[import-untyped]

from parley.documents.front_matter import LineIndex
from parley.documents.pointers import escape_token, join_pointer, unescape_token
from parley.documents.problems import DocumentProblem, DocumentWarning
from parley.errors import ErrorEntry, capped_errors

SCHEMA_MAX_BYTES: Final = 65_536
SCHEMA_MAX_DEPTH: Final = 64
ENUM_MAX_VALUES: Final = 1_000
ANSWER_MAX_BYTES: Final = 65_536
ANSWER_MAX_DEPTH: Final = 512

Draft = Literal["2020-12", "draft-07"]

_DRAFTS: Final[dict[str, Draft]] = {
    "json-schema.org/draft/2020-12/schema": "2020-12",
    "json-schema.org/draft-07/schema": "draft-07",
}
_REGEX_REASON: Final = ", because a hostile regular expression can stall validation"
_REFUSED: Final[dict[str, str]] = {
    "pattern": _REGEX_REASON,
    "patternProperties": _REGEX_REASON,
    **dict.fromkeys(
        (
            "if",
            "then",
            "else",
            "contains",
            "minContains",
            "maxContains",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
            "unevaluatedItems",
            "unevaluatedProperties",
            "additionalItems",
            "$anchor",
            "$dynamicRef",
            "$dynamicAnchor",
            "$recursiveRef",
            "$recursiveAnchor",
        ),
        "",
    ),
}
# Where a schema holds schemas: one, a list of them, or a mapping of names to them.
_ONE: Final = frozenset({"additionalProperties", "propertyNames", "items", "not", "contentSchema"})
_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP: Final = frozenset({"properties", "$defs", "definitions"})
# Keywords that apply a schema to the same value: a loop through them alone never ends.
_IN_PLACE: Final = frozenset({"allOf", "anyOf", "oneOf"})
_DEFINITIONS: Final = ("$defs", "definitions")
_JSON_TYPES: Final = ("array", "boolean", "integer", "null", "number", "object", "string")
#: Every keyword of the drafts a schema is read by (2020-12 with the 2019-09 names it replaced, and
#: draft-07): the core, the applicators, validation, annotations, formats and content. The refused ones
#: (``_REFUSED``) are known too, since a schema that uses one is refused, not warned about.
SCHEMA_KEYWORDS: Final = frozenset(
    {
        *_REFUSED,
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "definitions",
        "$comment",
        "$vocabulary",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "properties",
        "additionalProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
        "required",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
#: The keywords a saved schema may not use (each with why).
REFUSED_KEYWORDS: Final = frozenset(_REFUSED)
#: The keywords a warning may name as the one meant: those a saved schema may use.
_SUGGESTED: Final = tuple(sorted(SCHEMA_KEYWORDS - _REFUSED.keys()))
#: How alike a keyword must be to a known one (``difflib`` ratio, case and ``_``/``-`` aside) to be named.
KEYWORD_CLOSE_ENOUGH: Final = 0.7


# --- sizes -----------------------------------------------------------------------------------------------


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON, the way the bounds count "as JSON"."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        return _json_size_deep(value)
    return len(text.encode("utf-8", "surrogatepass"))


def _json_size_deep(value: Any) -> int:
    """:func:`json_size` without recursion, for values nested beyond what ``json.dumps`` follows."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            size += 2 + max(len(item) - 1, 0) + len(item)  # braces, commas, colons
            for key, child in item.items():
                size += json_size(str(key))
                stack.append(child)
        elif isinstance(item, list):
            size += 2 + max(len(item) - 1, 0)
            stack.extend(item)
        else:
            size += json_size(item)
    return size


def json_depth(value: Any, limit: int | None = None) -> int:
    """Levels of objects and lists: ``0`` for a scalar, ``1`` for ``{}`` or ``[1]``. Without recursion.

    With ``limit``, stops once the depth passes it and returns ``limit + 1``.
    """
    return _deepest(value, limit)[0]


def _deepest(value: Any, limit: int | None) -> tuple[int, tuple[str | int, ...]]:
    """The depth of ``value`` and the path of a node at that depth (the first past ``limit``, if any)."""
    # each container visited is a (parent, key) record, so the path is rebuilt once, at the end
    records: list[tuple[int, str | int]] = [(-1, "")]
    deepest, deepest_record = 0, 0
    stack: list[tuple[Any, int, int]] = [(value, 0, 0)]
    while stack:
        item, depth, record = stack.pop()
        children: list[tuple[str | int, Any]]
        if isinstance(item, dict):
            children = list(item.items())
        elif isinstance(item, list):
            children = list(enumerate(item))
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest, deepest_record = depth, record
            if limit is not None and depth > limit:
                break
        for key, child in reversed(children):
            if isinstance(child, dict | list):
                records.append((record, key))
                stack.append((child, depth, len(records) - 1))
    path: list[str | int] = []
    while deepest_record > 0:
        deepest_record, key = records[deepest_record]
        path.append(key)
    return deepest, tuple(reversed(path))


def json_bounds_errors(
    value: Any,
    pointer: str = "/answer",
    *,
    max_bytes: int = ANSWER_MAX_BYTES,
    max_depth: int = ANSWER_MAX_DEPTH,
    what: str = "The answer",
) -> list[ErrorEntry]:
    """The bounds of an answer ("Bounds": 64 KiB as JSON, 512 levels), as ``invalid_input`` entries."""
    depth, path = _deepest(value, max_depth)
    if depth > max_depth:
        return [ErrorEntry(join_pointer(pointer, *path), f"{what} nests more than {max_depth} levels deep")]
    size = json_size(value)
    if size > max_bytes:
        return [
            ErrorEntry(pointer, f"{what} takes {size:,} bytes as JSON; at most {max_bytes:,} are allowed")
        ]
    return []


# --- drafts ----------------------------------------------------------------------------------------------


def schema_draft(schema: Any) -> Draft | None:
    """The draft ``schema`` is read by: 2020-12, or draft-07 when ``$schema`` says so or when it uses
    ``definitions`` without ``$defs``. ``None`` for a ``$schema`` naming any other draft."""
    if not isinstance(schema, dict):
        return "2020-12"
    named = schema.get("$schema")
    if named is None:
        return "draft-07" if "definitions" in schema and "$defs" not in schema else "2020-12"
    if not isinstance(named, str):
        return None
    bare = named.removesuffix("#").removeprefix("https://").removeprefix("http://")
    return _DRAFTS.get(bare)


def _validator_class(draft: Draft | None) -> Any:
    return Draft7Validator if draft == "draft-07" else Draft202012Validator


@lru_cache(maxsize=2)
def _metaschema_validator(draft: Draft) -> Validator:
    cls = _validator_class(draft)
    return cls(cls.META_SCHEMA)


# --- the walk over schema positions ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Position:
    """One schema in a schema document: where it is, and the keyword whose value holds it."""

    node: Any  # a dict or a bool
    pointer: str  # from the schema's root
    container: dict[str, Any] | list[Any] | None
    key: str | int | None
    keyword: str | None


def _positions(schema: Any) -> Iterator[_Position]:
    """Every schema position, in document order, without recursion."""
    stack = [_Position(schema, "", None, None, None)]
    while stack:
        position = stack.pop()
        yield position
        node = position.node
        if not isinstance(node, dict):
            continue
        found: list[_Position] = []
        for keyword, value in node.items():
            base = join_pointer(position.pointer, keyword)
            if keyword in _REFUSED:
                continue
            if keyword in _ONE and isinstance(value, dict | bool):
                found.append(_Position(value, base, node, keyword, keyword))
            elif (keyword in _LIST or keyword == "items") and isinstance(value, list):
                found.extend(
                    _Position(item, join_pointer(base, index), value, index, keyword)
                    for index, item in enumerate(value)
                    if isinstance(item, dict | bool)
                )
            elif keyword in _MAP and isinstance(value, dict):
                found.extend(
                    _Position(item, join_pointer(base, name), value, name, keyword)
                    for name, item in value.items()
                    if isinstance(item, dict | bool)
                )
        stack.extend(reversed(found))


# --- the rules of "Answers that are JSON" ----------------------------------------------------------------


def check_schema(schema: Any, pointer: str, lines: LineIndex) -> list[DocumentProblem]:
    """Every problem of ``schema`` (at ``pointer`` in the front matter) under "Answers that are JSON"."""
    found: list[tuple[str, str]] = []
    if not isinstance(schema, dict | bool):
        found.append(("", "A JSON Schema is a mapping of keywords (or true or false)"))
        return _as_problems(found, pointer, lines)
    depth, deep_path = _deepest(schema, SCHEMA_MAX_DEPTH)
    too_deep = depth > SCHEMA_MAX_DEPTH
    if too_deep:
        found.append(
            (
                join_pointer("", *deep_path),
                f"A schema nests at most {SCHEMA_MAX_DEPTH} levels of objects and lists",
            )
        )
    too_large = not too_deep and json_size(schema) > SCHEMA_MAX_BYTES
    if too_large:
        found.append(("", f"A schema takes at most {SCHEMA_MAX_BYTES:,} bytes as JSON"))
    draft = schema_draft(schema)
    if draft is None:
        found.append(
            (
                "/$schema",
                "Only draft 2020-12 (https://json-schema.org/draft/2020-12/schema) and draft-07 "
                "(http://json-schema.org/draft-07/schema#) are read",
            )
        )
    found.extend(_rule_problems(schema))
    if not too_deep and not too_large:
        found.extend(_metaschema_problems(schema, draft or "2020-12"))
    return sorted(_as_problems(found, pointer, lines), key=lambda problem: problem.line)


def schema_keyword_warnings(schema: Any, pointer: str, lines: LineIndex) -> list[DocumentWarning]:
    """A warning for each keyword of ``schema`` (at ``pointer`` in the front matter, such as
    ``/input/schema``) that no draft defines, naming the keyword it probably meant, in line order.

    A keyword written ``x-…`` is an extension on purpose, and is left alone.
    """
    found: list[DocumentWarning] = []
    for relative, keyword in unknown_keywords(schema):
        where = pointer + relative
        shown = keyword if len(keyword) <= 60 else keyword[:59] + "…"
        message = f"{shown} is not a JSON Schema keyword, so nothing checks it"
        meant = closest_keyword(keyword)
        if meant is not None:
            message += f"; did you mean {meant}?"
        found.append(DocumentWarning(lines.line_of(where), where, message))
    return sorted(found, key=lambda warning: warning.line)


def unknown_keywords(schema: Any) -> Iterator[tuple[str, str]]:
    """(pointer from the schema's root, keyword) for each keyword that no draft defines, a schema
    position at a time. Only schema positions are read: what an unknown keyword holds is not a schema."""
    for position in _positions(schema):
        if isinstance(position.node, dict):
            for keyword in position.node:
                if keyword not in SCHEMA_KEYWORDS and not str(keyword).startswith("x-"):
                    yield join_pointer(position.pointer, keyword), str(keyword)


def closest_keyword(keyword: str) -> str | None:
    """The keyword a saved schema may use that ``keyword`` most likely misspells, or ``None``."""

    def bare(word: str) -> str:
        return word.lower().replace("_", "").replace("-", "")

    known = {bare(word): word for word in _SUGGESTED}
    matches = difflib.get_close_matches(bare(keyword), list(known), n=1, cutoff=KEYWORD_CLOSE_ENOUGH)
    return known[matches[0]] if matches else None


def _as_problems(found: list[tuple[str, str]], pointer: str, lines: LineIndex) -> list[DocumentProblem]:
    problems: list[DocumentProblem] = []
    seen: set[DocumentProblem] = set()
    for relative, message in found:
        where = pointer + relative
        problem = DocumentProblem(lines.line_of(where), where, message)
        if problem not in seen:
            seen.add(problem)
            problems.append(problem)
    return problems


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _rule_problems(schema: Any) -> Iterator[tuple[str, str]]:
    """The restrictions of "Answers that are JSON", as (pointer from the schema's root, message)."""
    definitions = schema if isinstance(schema, dict) else {}
    edges: dict[str, list[tuple[str, str, str]]] = {}  # pointer -> [(target, via pointer, via text)]
    order: list[str] = []
    for position in _positions(schema):
        node, here = position.node, position.pointer
        order.append(here)
        if not isinstance(node, dict):
            continue
        out = edges.setdefault(here, [])
        for keyword, value in node.items():
            at = join_pointer(here, keyword)
            if keyword in _REFUSED:
                yield at, f"{keyword} is not allowed{_REFUSED[keyword]}"
            elif keyword == "$ref" and isinstance(value, str):
                target = _ref_target(value, definitions)
                if isinstance(target, str):
                    out.append((target, at, value))
                else:
                    yield at, target[0]
            elif keyword == "$id" and here:
                yield at, "$id is allowed only at the root of a schema, since $ref points into this document"
            elif keyword == "not" and value != {}:
                yield at, "not may only be {}"
            elif keyword == "enum" and isinstance(value, list):
                if len(value) > ENUM_MAX_VALUES:
                    yield at, f"An enum holds at most {ENUM_MAX_VALUES:,} values, not {len(value):,}"
                for index, item in enumerate(value):
                    if not _is_scalar(item):
                        yield (
                            join_pointer(at, index),
                            "enum may contain only strings, numbers, booleans and null",
                        )
            elif keyword == "const" and not _is_scalar(value):
                yield at, "const may be only a string, a number, a boolean or null"
            elif keyword == "additionalProperties" and "properties" in node and not isinstance(value, bool):
                yield (
                    at,
                    "additionalProperties may not be a schema when properties is present: use true or false",
                )
            elif keyword in _IN_PLACE and isinstance(value, list):
                out.extend(
                    (join_pointer(at, index), join_pointer(at, index), keyword)
                    for index, item in enumerate(value)
                    if isinstance(item, dict)
                )
    yield from _loops(order, edges)


def _ref_target(ref: str, root: dict[str, Any]) -> str | tuple[str]:
    """The pointer a ``$ref`` leads to, or (why it is refused,)."""
    for place in _DEFINITIONS:
        prefix = f"#/{place}/"
        if ref.startswith(prefix) and "/" not in ref[len(prefix) :] and len(ref) > len(prefix):
            name = unescape_token(unquote(ref[len(prefix) :]))
            held = root.get(place)
            if not isinstance(held, dict) or name not in held:
                return (f"$ref points to {ref}, which this schema does not define",)
            return f"/{place}/{escape_token(name)}"
    return ("$ref may point only to #/$defs/<name> or #/definitions/<name>",)


def _loops(order: list[str], edges: dict[str, list[tuple[str, str, str]]]) -> Iterator[tuple[str, str]]:
    """Loops through ``$ref``, ``allOf``, ``anyOf`` and ``oneOf`` alone: one problem per edge closing one.

    Depth-first from each schema in document order, so a loop is reported at the ``$ref`` that closes it.
    """
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in order:
        if start in state:
            continue
        state[start] = 1
        stack: list[tuple[str, Iterator[tuple[str, str, str]]]] = [(start, iter(edges.get(start, ())))]
        while stack:
            node, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                state[node] = 2
                stack.pop()
                continue
            target, via, text = step
            if state.get(target) == 1:
                what = f"$ref {text}" if text.startswith("#") else text
                yield (
                    via,
                    f"{what} loops back through $ref, allOf, anyOf or oneOf with no property or item between",
                )
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(edges.get(target, ()))))


def _metaschema_problems(schema: Any, draft: Draft) -> Iterator[tuple[str, str]]:
    """Each way ``schema`` breaks its draft's metaschema, at the pointer of the offending value."""
    try:
        errors = list(_metaschema_validator(draft).iter_errors(schema))
    except RecursionError:  # pragma: no cover - the depth bound keeps the walk shallow
        yield "", "The schema nests too deeply to be checked"
        return
    for error in errors:
        yield join_pointer("", *error.absolute_path), _message(error)


# --- messages --------------------------------------------------------------------------------------------


def json_type_name(value: Any) -> str:
    """The JSON Schema type name of a JSON value (``integer`` before ``number``, as schemas read it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _shown(value: Any, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def _words(values: list[Any], limit: int = 10) -> str:
    shown = ", ".join(_shown(v, 40) for v in values[:limit])
    return shown + (", …" if len(values) > limit else "")


def _message(error: ValidationError) -> str:
    """A short message that never repeats a large value."""
    keyword, expected, value = error.validator, error.validator_value, error.instance
    schema_path = list(error.schema_path)
    if keyword is None or (keyword == "not" and expected == {}):
        return "Not allowed here"
    if keyword == "type":
        names = expected if isinstance(expected, list) else [expected]
        return f"Expected {' or '.join(str(n) for n in names)}, found {json_type_name(value)}"
    if keyword == "anyOf" and schema_path[-2:] == ["type", "anyOf"] and isinstance(value, str | list):
        return f"Unknown type {_shown(value)}: use {', '.join(_JSON_TYPES)}"
    if keyword == "enum" and isinstance(expected, list):
        return f"Expected one of {_words(expected)}"
    if keyword == "const":
        return f"Expected {_shown(expected)}"
    bounds = {
        "minLength": "at least {} characters",
        "maxLength": "at most {} characters",
        "minimum": "at least {}",
        "maximum": "at most {}",
        "exclusiveMinimum": "more than {}",
        "exclusiveMaximum": "less than {}",
        "multipleOf": "a multiple of {}",
        "minItems": "at least {} items",
        "maxItems": "at most {} items",
        "minProperties": "at least {} properties",
        "maxProperties": "at most {} properties",
    }
    if keyword in bounds:
        return "Expected " + bounds[keyword].format(expected)
    if keyword == "uniqueItems":
        return "Expected items that are all different"
    if keyword == "items" and expected is False:
        prefix = error.schema.get("prefixItems", []) if isinstance(error.schema, dict) else []
        return f"Expected at most {len(prefix)} items"
    if keyword == "anyOf":
        return "Matches none of the schemas anyOf lists"
    if keyword == "oneOf":
        if error.context:
            return "Matches none of the schemas oneOf lists"
        return "Matches more than one of the schemas oneOf lists"
    if keyword == "required":
        return "A required property is missing"
    text = str(error.message)
    return text if len(text) <= 200 else text[:199] + "…"


# --- validation ------------------------------------------------------------------------------------------


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _for_validation(schema: Any, draft: Draft | None) -> Any:
    """``schema`` with each ``false`` below the root written ``{"not": {}}``.

    jsonschema drops the instance path of an error from a ``false`` subschema (such as
    ``properties: {x: false}``); ``{"not": {}}`` refuses the same values and keeps the path. The
    ``false`` of ``additionalProperties`` and of 2020-12 ``items`` is read by its keyword, so it stays.
    """
    keep = {"additionalProperties"} | ({"items"} if draft != "draft-07" else set())
    for position in list(_positions(schema)):
        if position.node is False and position.container is not None and position.keyword not in keep:
            position.container[position.key] = {"not": {}}  # type: ignore[index]
    return schema


@lru_cache(maxsize=256)
def _compiled(canonical: str) -> Validator:
    schema = json.loads(canonical)
    draft = schema_draft(schema)
    cls = _validator_class(draft)
    return cls(_for_validation(schema, draft))


def compiled_validator(schema: Any) -> Validator:
    """A validator for ``schema``'s draft, cached by its canonical JSON. Formats are annotations only."""
    return _compiled(canonical_json(schema))


def validate_instance(
    instance: Any, schema: Any, pointer_prefix: str, *, missing_at_root: bool = False
) -> list[ErrorEntry]:
    """Each distinct way ``instance`` breaks ``schema``, in document order, at most 20 and one counting the
    rest. Pointers start with ``pointer_prefix`` (such as ``/input`` or ``/answer``).

    ``missing_at_root`` lets required top-level properties be missing, as ``input.default`` may leave
    them "for the input to supply" (``reasoning-format.md``, "How a document is checked").
    """
    try:
        errors = list(compiled_validator(schema).iter_errors(instance))
    except RecursionError:
        return [ErrorEntry(pointer_prefix, "Nests too deeply to be checked against the schema")]
    ordered: list[tuple[tuple[int, ...], int, int, ErrorEntry]] = []
    places: dict[int, dict[Any, int]] = {}
    for number, error in enumerate(errors):
        if missing_at_root and error.validator == "required" and not error.absolute_path:
            continue
        # at one place, a wrong type comes first: the other messages follow from it
        rank = 0 if error.validator == "type" else 1
        for path, detail in _entries(error):
            entry = ErrorEntry(join_pointer(pointer_prefix, *path), detail)
            ordered.append((_place(instance, path, places), rank, number, entry))
    ordered.sort(key=lambda item: item[:3])
    return capped_errors(item[3] for item in ordered)


def _entries(error: ValidationError) -> Iterator[tuple[list[str | int], str]]:
    """One or more (instance path, detail) for an error: a missing property names itself, and each
    property ``additionalProperties: false`` refuses gets its own pointer."""
    path = list(error.absolute_path)
    value = error.instance
    if error.validator == "required" and isinstance(value, dict) and isinstance(error.validator_value, list):
        for name in error.validator_value:
            if isinstance(name, str) and name not in value:
                yield path, f"Missing required property {_shown(name)}"
        return
    if (
        error.validator == "additionalProperties"
        and error.validator_value is False
        and isinstance(value, dict)
    ):
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        for name in value:
            if name not in allowed:
                yield [*path, name], "Unexpected property: the schema allows no others here"
        return
    yield path, _message(error)


def _place(instance: Any, path: list[str | int], places: dict[int, dict[Any, int]]) -> tuple[int, ...]:
    """Where ``path`` is in document order: the position of each step within its object or list."""
    place: list[int] = []
    value = instance
    for step in path:
        if isinstance(value, dict):
            index = places.setdefault(id(value), {key: i for i, key in enumerate(value)})
            place.append(index.get(step, len(index)))
            value = value.get(step) if isinstance(step, str) else None
        elif isinstance(value, list) and isinstance(step, int):
            place.append(step)
            value = value[step] if 0 <= step < len(value) else None
        else:
            break
    return tuple(place)
