"""A JSON Schema in words: each field with its type, its bounds and its default, as the overviews
list what a function needs and what it produces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from parley.documents.json_schema import json_type_name
from parley.documents.words import (
    MAX_LISTED,
    as_mapping,
    bold,
    capped_series,
    code,
    counted,
    number_in_words,
    sentence,
    series,
    value_in_words,
)

_MAX_DEPTH: Final = 8  # how deep a schema is followed before it is summarized


_TYPE_WORDS: Final[Mapping[str, tuple[str, str]]] = {
    "string": ("text", "text"),
    "integer": ("whole number", "whole numbers"),
    "number": ("number", "numbers"),
    "boolean": ("true or false", "true-or-false values"),
    "null": ("null", "nulls"),
    "array": ("list", "lists"),
    "object": ("object", "objects"),
}
_FORMATS: Final[Mapping[str, str]] = {
    "date": "a date such as 2026-10-17",
    "date-time": "a date and time in ISO 8601",
    "time": "a time of day",
    "duration": "an ISO 8601 duration",
    "email": "an email address",
    "uri": "a URI",
    "url": "a URL",
    "uuid": "a UUID",
    "hostname": "a host name",
    "ipv4": "an IPv4 address",
    "ipv6": "an IPv6 address",
}


@dataclass(frozen=True)
class _Resolved:
    """A subschema with its ``$ref`` followed: the keywords that apply and the name of its type."""

    schema: Mapping[str, Any] | bool
    name: str | None = None


class Schemas:
    """Reads the fields of one schema document, following ``$ref`` into its own ``$defs``."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def resolve(self, schema: Any, depth: int = 0) -> _Resolved:
        if isinstance(schema, bool):
            return _Resolved(schema)
        if not isinstance(schema, Mapping):
            return _Resolved(True)
        reference = schema.get("$ref")
        if not isinstance(reference, str):
            return _Resolved(schema)
        name = _reference_name(reference)
        target = self._target(reference) if depth < _MAX_DEPTH else None
        if target is None:
            return _Resolved(schema, name)
        inner = self.resolve(target, depth + 1)
        own = {key: value for key, value in schema.items() if key != "$ref"}
        if isinstance(inner.schema, Mapping):
            return _Resolved({**inner.schema, **own}, name)
        return _Resolved(own if own else inner.schema, name)

    def _target(self, reference: str) -> Any:
        if reference == "#":
            return self.root
        if not reference.startswith("#/"):
            return None
        node: Any = self.root
        for token in reference[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def types(self, schema: Mapping[str, Any]) -> list[str]:
        """The types a schema allows, written or inferred from its keywords; empty for any value."""
        written = schema.get("type")
        if isinstance(written, str):
            return [written]
        if isinstance(written, list):
            return list(dict.fromkeys(item for item in written if isinstance(item, str)))
        for keywords, inferred in (
            (("properties", "required", "additionalProperties", "minProperties", "maxProperties"), "object"),
            (("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"), "array"),
            (("minLength", "maxLength", "pattern", "format"), "string"),
            (("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), "number"),
        ):
            if any(keyword in schema for keyword in keywords):
                return [inferred]
        values = schema.get("enum") if isinstance(schema.get("enum"), list) else None
        if values is None and "const" in schema:
            values = [schema["const"]]
        if values:
            return list(dict.fromkeys(json_type_name(value) for value in values))
        return []

    def type_words(self, schema: Any, depth: int = 0, plural: bool = False) -> str:
        """``text``, ``whole number``, ``list of text``, ``Address, an object``, ``text or null``…"""
        resolved = self.resolve(schema, depth)
        body = resolved.schema
        if body is True or body == {}:
            words = "values" if plural else "any value"
        elif body is False:
            words = "no value at all"
        else:
            assert isinstance(body, Mapping)
            words = self._kinds(body, depth, plural)
        if resolved.name:
            return f"{resolved.name} ({words})"
        return words

    def _kinds(self, schema: Mapping[str, Any], depth: int, plural: bool) -> str:
        types = self.types(schema)
        if not types:
            for combinator, joiner in (("anyOf", "or"), ("oneOf", "or"), ("allOf", "and")):
                options = schema.get(combinator)
                if isinstance(options, list) and options and depth < _MAX_DEPTH:
                    said = [self.type_words(option, depth + 1, plural) for option in options[:MAX_LISTED]]
                    return series(list(dict.fromkeys(said)), joiner)
            return "values" if plural else "any value"
        words: list[str] = []
        for kind in types:
            singular, many = _TYPE_WORDS.get(kind, (kind, kind))
            if kind == "array":
                items = schema.get("items")
                if isinstance(items, Mapping | bool) and depth < _MAX_DEPTH and items is not True:
                    inner = self.type_words(items, depth + 1, plural=True)
                    words.append(f"{many if plural else singular} of {inner}")
                    continue
            words.append(many if plural else singular)
        return series(words, "or")

    def bounds(self, schema: Any) -> list[str]:
        """The bounds of a value in words: length, range, items, values and format."""
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping):
            return []
        said: list[str] = []
        said.extend(_range(body.get("minLength"), body.get("maxLength"), "character", "characters"))
        if isinstance(body.get("format"), str):
            said.append(_FORMATS.get(body["format"], f"in the format {code(body['format'])}"))
        if isinstance(body.get("pattern"), str):
            said.append(f"matching {code(body['pattern'])}")
        said.extend(_numbers(body))
        said.extend(_range(body.get("minItems"), body.get("maxItems"), "item", "items"))
        if body.get("uniqueItems") is True:
            said.append("no item twice")
        said.extend(_range(body.get("minProperties"), body.get("maxProperties"), "field", "fields"))
        if isinstance(body.get("enum"), list):
            values = [value_in_words(value) for value in body["enum"]]
            if len(values) == 1:
                said.append(f"always {values[0]}")
            elif values:
                said.append(f"one of {capped_series(values, 'or')}")
        if "const" in body:
            said.append(f"always {value_in_words(body['const'])}")
        if "default" in body:
            said.append(f"{value_in_words(body['default'])} when left out")
        return said

    def description(self, schema: Any) -> str:
        body = self.resolve(schema).schema
        if isinstance(body, Mapping):
            text = body.get("description")
            if isinstance(text, str) and text.strip():
                return sentence(text)
            title = body.get("title")
            if isinstance(title, str) and title.strip():
                return sentence(title)
        return ""

    def fields(self, schema: Any) -> list[tuple[str, Any, bool]]:
        """The listed fields of an object schema: each name, its schema and whether it is required."""
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping):
            return []
        properties = as_mapping(body.get("properties"))
        written = body.get("required")
        required = [name for name in written if isinstance(name, str)] if isinstance(written, list) else []
        listed: list[tuple[str, Any, bool]] = [
            (str(name), subschema, name in required) for name, subschema in properties.items()
        ]
        listed.extend((name, True, True) for name in dict.fromkeys(required) if name not in properties)
        return listed

    def is_object(self, schema: Any) -> bool:
        body = self.resolve(schema).schema
        return isinstance(body, Mapping) and "object" in self.types(body)

    def items(self, schema: Any) -> Any:
        """The item schema of a list schema whose items are objects, else ``None``."""
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping) or "array" not in self.types(body):
            return None
        items = body.get("items")
        return items if isinstance(items, Mapping) and self.is_object(items) else None

    def others(self, schema: Any) -> Any:
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping):
            return None
        extra = body.get("additionalProperties")
        return extra if isinstance(extra, Mapping) else None


def _reference_name(reference: str) -> str:
    if reference == "#":
        return "the whole shape again"
    tail = reference.rstrip("/").rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    return tail or reference


def _is_count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _range(low: Any, high: Any, one: str, many: str) -> list[str]:
    low = low if _is_count(low) else None
    high = high if _is_count(high) else None
    if low is not None and high is not None:
        if low == high:
            return [f"exactly {number_in_words(low)} {one if low == 1 else many}"]
        return [f"{number_in_words(low)} to {number_in_words(high)} {many}"]
    if low is not None:
        return [f"at least {number_in_words(low)} {one if low == 1 else many}"] if low else []
    if high is not None:
        return [f"at most {number_in_words(high)} {one if high == 1 else many}"]
    return []


def _numbers(schema: Mapping[str, Any]) -> list[str]:
    low, high = schema.get("minimum"), schema.get("maximum")
    low = low if _is_count(low) else None
    high = high if _is_count(high) else None
    above, below = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    said: list[str] = []
    if above is True and low is not None:  # draft-04 style: the minimum itself is excluded
        said.append(f"more than {number_in_words(low)}")
        low = None
    elif _is_count(above):
        said.append(f"more than {number_in_words(above)}")
    if below is True and high is not None:
        said.append(f"less than {number_in_words(high)}")
        high = None
    elif _is_count(below):
        said.append(f"less than {number_in_words(below)}")
    if low is not None and high is not None:
        said.insert(0, f"from {number_in_words(low)} to {number_in_words(high)}")
    elif low is not None:
        said.insert(0, f"at least {number_in_words(low)}")
    elif high is not None:
        said.insert(0, f"at most {number_in_words(high)}")
    if _is_count(schema.get("multipleOf")):
        said.append(f"a multiple of {number_in_words(schema['multipleOf'])}")
    return said


def _field_lines(schemas: Schemas, schema: Any, indent: str = "", nested: bool = True) -> list[str]:
    """A bullet for each field of an object schema; one level of nesting listed, deeper summarized."""
    lines: list[str] = []
    listed = schemas.fields(schema)
    for name, subschema, required in listed[:MAX_LISTED]:
        said = [schemas.type_words(subschema), "required" if required else "optional"]
        said.extend(schemas.bounds(subschema))
        inner_fields: Any = None
        if schemas.is_object(subschema):
            inner_fields = subschema
        elif schemas.items(subschema) is not None:
            inner_fields = schemas.items(subschema)
        inner = schemas.fields(inner_fields) if inner_fields is not None else []
        if inner and not nested:
            names = [bold(inner_name) for inner_name, _, _ in inner]
            said.append(f"with the {counted(len(names), 'field', 'fields')} {capped_series(names)}")
        line = f"{indent}- {bold(name)}: {', '.join(said)}"
        description = schemas.description(subschema)
        if inner and nested:
            lead = "each with" if schemas.items(subschema) is not None else "with"
            lines.append(f"{line}, {lead}:" + (f" {description}" if description else ""))
            lines.extend(_field_lines(schemas, inner_fields, indent + "  ", nested=False))
        else:
            lines.append(f"{line}." + (f" {description}" if description else ""))
    if len(listed) > MAX_LISTED:
        lines.append(f"{indent}- and {counted(len(listed) - MAX_LISTED, 'field', 'fields')} more.")
    others = schemas.others(schema)
    if others is not None and (listed or nested):
        lines.append(f"{indent}- any other field: {schemas.type_words(others)}.")
    return lines


def schema_in_words(schema: Any, empty: str) -> list[str]:
    """Paragraphs describing a whole input or answer schema: its fields, or its type and bounds."""
    schemas = Schemas(schema)
    lines: list[str] = []
    description = schemas.description(schema)
    if description:
        lines += [description, ""]
    if schemas.is_object(schema) or schemas.fields(schema):
        fields = _field_lines(schemas, schema)
        if fields:
            return [*lines, *fields]
        return [*lines, empty]
    items = schemas.items(schema)
    bounds = schemas.bounds(schema)
    if items is not None and schemas.fields(items):
        head = f"A list of objects{', ' + ', '.join(bounds) if bounds else ''}, each with:"
        return [*lines, head, "", *_field_lines(schemas, items)]
    words = schemas.type_words(schema)
    return [*lines, sentence(f"It is {', '.join([words, *bounds])}")]
