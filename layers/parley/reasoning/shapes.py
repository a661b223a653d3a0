"""Output shapes (``output-shapes.md``): answers of a named shape that a person's screen can draw.

Each shape's schema is what the provider receives as ``output.schema`` would be. It keeps to what
every provider accepts and enforces: an object at the root, ``additionalProperties: false``, every
property required and nullable where optional, no bounds. The bounds and the rules a schema cannot say
(the order of a series' points, distinct labels, cells of their column's type) are checked here by
:func:`check_shape`, so an answer that breaks one fails as ``output_invalid`` whichever provider wrote it.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator, Mapping
from datetime import date
from typing import Any, Final, Literal, TypeAlias

from parley.documents.json_schema import validate_instance
from parley.documents.pointers import join_pointer
from parley.errors import ErrorEntry, capped_errors

ShapeName = Literal["series", "categories", "table", "text"]
SHAPE_NAMES: Final[tuple[ShapeName, ...]] = ("series", "categories", "table", "text")

#: One way an answer breaks its shape: a JSON Pointer into the answer and what is wrong there.
Issue: TypeAlias = ErrorEntry

POINTS_MAX: Final = 1_000
ITEMS_MAX: Final = 1_000
LABEL_MAX_CHARS: Final = 200
COLUMNS_MAX: Final = 50
COLUMN_NAME_MAX_CHARS: Final = 100
ROWS_MAX: Final = 10_000
TEXT_MAX_CHARS: Final = 200_000
COLUMN_TYPES: Final = ("text", "number", "boolean", "date")

#: "In the overview": what the function produces, in a sentence.
SHAPE_SENTENCES: Final[Mapping[ShapeName, str]] = {
    "series": "a series of points (`x`, `y`) with a title and a unit",
    "categories": "values of categories",
    "table": "a table of rows under named columns",
    "text": "a passage of text",
}

_NULLABLE_TEXT: Final = {"type": ["string", "null"]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_SCHEMAS: Final[Mapping[ShapeName, dict[str, Any]]] = {
    "text": _object({"text": {"type": "string"}}),
    "series": _object(
        {
            "title": _NULLABLE_TEXT,
            "unit": _NULLABLE_TEXT,
            "x_label": _NULLABLE_TEXT,
            "y_label": _NULLABLE_TEXT,
            "points": {
                "type": "array",
                "items": _object({"x": {"type": ["number", "string"]}, "y": {"type": ["number", "null"]}}),
            },
        }
    ),
    "categories": _object(
        {
            "title": _NULLABLE_TEXT,
            "unit": _NULLABLE_TEXT,
            "items": {
                "type": "array",
                "items": _object({"label": {"type": "string"}, "value": {"type": "number"}}),
            },
        }
    ),
    "table": _object(
        {
            "title": _NULLABLE_TEXT,
            "columns": {
                "type": "array",
                "items": _object({"name": {"type": "string"}, "type": {"enum": list(COLUMN_TYPES)}}),
            },
            "rows": {
                "type": "array",
                "items": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}},
            },
        }
    ),
}

_ISO_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def shape_schema(name: ShapeName) -> dict[str, Any]:
    """The JSON Schema of the shape ``name`` (a fresh copy: callers may keep or change it)."""
    return copy.deepcopy(_SCHEMAS[name])


def shape_sentence(name: ShapeName) -> str:
    """What a function of this shape produces, as the overview says it."""
    return SHAPE_SENTENCES[name]


def check_shape(name: ShapeName, answer: Any, pointer_prefix: str = "") -> list[Issue]:
    """Each way ``answer`` breaks the shape ``name``: its schema first, then the shape's rules.

    Pointers start with ``pointer_prefix`` (such as ``/answer``). At most 20 issues, then one that
    counts the rest, as a run's rejection lists them. The rules are checked only on an answer that
    matches the schema, since they read the fields the schema guarantees.
    """
    mismatches = validate_instance(answer, _SCHEMAS[name], pointer_prefix)
    if mismatches:
        return mismatches
    rules = {"series": _series, "categories": _categories, "table": _table, "text": _text}[name]
    return capped_errors(
        ErrorEntry(join_pointer(pointer_prefix, *path), message) for path, message in rules(answer)
    )


# --- the rules ------------------------------------------------------------------------------------------

_Found: TypeAlias = Iterator[tuple[tuple[str | int, ...], str]]


def _finite(value: object) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _count(items: list[Any], field: str, least: int, most: int, noun: str) -> _Found:
    if not least <= len(items) <= most:
        yield (field,), f"Expected {least:,} to {most:,} {noun}, found {len(items):,}"


def _series(answer: dict[str, Any]) -> _Found:
    points: list[dict[str, Any]] = answer["points"]
    yield from _count(points, "points", 1, POINTS_MAX, "points")
    first_kind: str | None = None
    previous: Any = None
    seen: set[Any] = set()
    for index, point in enumerate(points):
        x, y = point["x"], point["y"]
        if not _finite(y):
            yield ("points", index, "y"), "Expected a finite number or null"
        if not _finite(x):
            yield ("points", index, "x"), "Expected a finite number or a text"
            continue
        kind = "text" if isinstance(x, str) else "number"
        if first_kind is None:
            first_kind = kind
        elif kind != first_kind:
            yield (
                ("points", index, "x"),
                f"x is a {kind} while the first x is a {first_kind}: every x is of one kind",
            )
            continue
        if x in seen:
            yield ("points", index, "x"), f"x {_shown(x)} appears twice: no x twice"
        elif previous is not None and x < previous:
            yield (
                ("points", index, "x"),
                f"x {_shown(x)} comes after {_shown(previous)}: the points are in ascending order of x",
            )
        seen.add(x)
        previous = x if previous is None or x > previous else previous


def _categories(answer: dict[str, Any]) -> _Found:
    items: list[dict[str, Any]] = answer["items"]
    yield from _count(items, "items", 1, ITEMS_MAX, "items")
    seen: set[str] = set()
    for index, item in enumerate(items):
        label, value = item["label"], item["value"]
        if not 1 <= len(label) <= LABEL_MAX_CHARS:
            yield ("items", index, "label"), f"A label is 1 to {LABEL_MAX_CHARS} characters"
        elif label in seen:
            yield ("items", index, "label"), f"The label {_shown(label)} appears twice: no label twice"
        seen.add(label)
        if not _finite(value):
            yield ("items", index, "value"), "Expected a finite number"


def _table(answer: dict[str, Any]) -> _Found:
    columns: list[dict[str, Any]] = answer["columns"]
    rows: list[list[Any]] = answer["rows"]
    yield from _count(columns, "columns", 1, COLUMNS_MAX, "columns")
    yield from _count(rows, "rows", 0, ROWS_MAX, "rows")
    seen: set[str] = set()
    for index, column in enumerate(columns):
        name = column["name"]
        if not 1 <= len(name) <= COLUMN_NAME_MAX_CHARS:
            yield ("columns", index, "name"), f"A column name is 1 to {COLUMN_NAME_MAX_CHARS} characters"
        elif name in seen:
            yield ("columns", index, "name"), f"The column {_shown(name)} appears twice: no column name twice"
        seen.add(name)
    types = [column["type"] for column in columns]
    for row_index, row in enumerate(rows):
        if len(row) != len(types):
            yield (
                ("rows", row_index),
                f"Expected {len(types)} cells, one for each column, found {len(row)}",
            )
            continue
        for cell_index, (cell, column_type) in enumerate(zip(row, types, strict=True)):
            problem = _cell_problem(cell, column_type)
            if problem is not None:
                yield ("rows", row_index, cell_index), problem


def _cell_problem(cell: Any, column_type: str) -> str | None:
    """Why ``cell`` is not a value of its column's type (or null), or ``None``."""
    if cell is None:
        return None
    if column_type == "text" and isinstance(cell, str):
        return None
    if column_type == "boolean" and isinstance(cell, bool):
        return None
    if column_type == "number" and isinstance(cell, int | float) and not isinstance(cell, bool):
        return None if _finite(cell) else "Expected a finite number or null"
    if column_type == "date" and isinstance(cell, str):
        return None if _is_date(cell) else f"{_shown(cell)} is not an ISO 8601 date such as 2026-10-01"
    expected = {"text": "a text", "number": "a number", "boolean": "true or false", "date": "a date"}
    return f"Expected {expected[column_type]} or null, as the column's type is {column_type}"


def _is_date(text: str) -> bool:
    """A calendar date written ``YYYY-MM-DD`` (the extended form of ISO 8601) that exists."""
    if _ISO_DATE.fullmatch(text) is None:
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _text(answer: dict[str, Any]) -> _Found:
    text: str = answer["text"]
    if len(text) > TEXT_MAX_CHARS:
        yield ("text",), f"The text is {len(text):,} characters; at most {TEXT_MAX_CHARS:,} are allowed"


def _shown(value: object) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "…")
    return str(value)
