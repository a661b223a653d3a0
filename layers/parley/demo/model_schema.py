"""A deterministic value that matches a JSON Schema, for the demo model's JSON answers.

Not a general generator: it covers what the schemas of reasoning functions use (``reasoning-format.md``,
"Answers that are JSON", which refuses ``pattern``, ``if``/``then``, ``contains`` and the like at save
time): ``type`` (one, or a list such as ``["string", "null"]``, preferring the non-null one), ``const``,
``enum`` (the first value), ``properties`` (every property; only the required ones past
:data:`SHALLOW_DEPTH`, so a tree ends), ``required``, ``additionalProperties``, ``min``/``maxProperties``,
``items``, ``prefixItems``, ``min``/``maxItems``, ``uniqueItems``, ``minimum``/``maximum`` and their
exclusive forms, ``multipleOf``, ``min``/``maxLength``, the formats Anthropic models accept, ``allOf``
(merged), ``anyOf``/``oneOf`` (the first branch that is not ``null``) and ``$ref`` to ``#/$defs/…`` or
``#/definitions/…``.

The same schema always gives the same value. Items of one array differ from each other where the schema
lets them (``variant``), so ``uniqueItems`` holds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from parley.errors import ParleyError

#: Past this depth an object has only its required properties and an array only its ``minItems``.
SHALLOW_DEPTH: Final = 6
#: Deeper than this, the schema has no finite value (a required property that loops).
MAX_DEPTH: Final = 64

_FORMATS: Final[Mapping[str, str]] = {
    "date-time": "2026-01-0{day}T09:00:00Z",
    "date": "2026-01-0{day}",
    "time": "09:0{day}:00Z",
    "duration": "P{day}D",
    "email": "demo{n}@example.com",
    "idn-email": "demo{n}@example.com",
    "hostname": "host{n}.example.com",
    "idn-hostname": "host{n}.example.com",
    "uri": "https://example.com/demo/{n}",
    "iri": "https://example.com/demo/{n}",
    "uri-reference": "/demo/{n}",
    "ipv4": "192.0.2.{day}",
    "ipv6": "2001:db8::{day}",
    "uuid": "00000000-0000-4000-8000-00000000000{day}",
}
_INFERRED: Final = (
    (("properties", "required", "additionalProperties", "minProperties", "maxProperties"), "object"),
    (("items", "prefixItems", "minItems", "maxItems", "uniqueItems"), "array"),
    (("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), "number"),
)


class UnsatisfiableSchema(ParleyError, ValueError):
    """The schema admits no value this generator can find (``false``, a loop of required properties)."""


def example_value(schema: Any) -> Any:
    """A value that matches ``schema`` (a JSON Schema as parsed JSON)."""
    return _Generator(schema).value(schema, None, 0, 0)


class _Generator:
    def __init__(self, root: Any) -> None:
        self.root = root

    def value(self, schema: Any, label: str | None, variant: int, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise UnsatisfiableSchema("the schema nests deeper than 64 levels before it can end")
        if schema is True:
            schema = {}
        if schema is False:
            raise UnsatisfiableSchema("the schema false admits no value")
        if not isinstance(schema, Mapping):
            raise UnsatisfiableSchema(f"not a schema: {schema!r}")
        schema = self._flatten(schema, depth)
        if "const" in schema:
            return schema["const"]
        enum = schema.get("enum")
        if isinstance(enum, Sequence) and not isinstance(enum, str) and enum:
            return enum[variant % len(enum)]
        kind = _type_of(schema)
        if kind == "null":
            return None
        if kind == "boolean":
            return variant % 2 == 0
        if kind == "integer":
            return _integer(schema, variant)
        if kind == "number":
            return _number(schema, variant)
        if kind == "object":
            return self._object(schema, variant, depth)
        if kind == "array":
            return self._array(schema, label, variant, depth)
        return _string(schema, label, variant)

    def _flatten(self, schema: Mapping[str, Any], depth: int) -> Mapping[str, Any]:
        """``schema`` with its ``$ref``, ``allOf`` and first ``anyOf``/``oneOf`` branch merged in."""
        for _ in range(MAX_DEPTH):
            rest = dict(schema)
            if "$ref" in rest:
                target = self._resolve(str(rest.pop("$ref")))
                schema = {**target, **rest}
            elif "allOf" in rest:
                parts = rest.pop("allOf")
                for part in parts:
                    rest = _merge(rest, part if isinstance(part, Mapping) else {})
                schema = rest
            elif "anyOf" in rest or "oneOf" in rest:
                branches = rest.pop("anyOf", None) or rest.pop("oneOf", None) or [{}]
                rest.pop("oneOf", None)
                chosen = next((b for b in branches if not _only_null(b)), branches[0])
                schema = {**rest, **(chosen if isinstance(chosen, Mapping) else {})}
            else:
                return schema
        raise UnsatisfiableSchema("the schema's $ref, allOf, anyOf or oneOf loop without end")

    def _resolve(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#"):
            raise UnsatisfiableSchema(f"only local $ref are followed, not {ref!r}")
        node: Any = self.root
        for part in filter(None, ref[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise UnsatisfiableSchema(f"$ref {ref!r} points nowhere")
        if node is True:
            return {}
        if not isinstance(node, Mapping):
            raise UnsatisfiableSchema(f"$ref {ref!r} is not a schema")
        return node

    def _object(self, schema: Mapping[str, Any], variant: int, depth: int) -> dict[str, Any]:
        properties = schema.get("properties") or {}
        required = [str(name) for name in schema.get("required") or ()]
        shallow = depth >= SHALLOW_DEPTH
        names = [name for name in properties if not shallow or name in required]
        names += [name for name in required if name not in names]
        limit = schema.get("maxProperties")
        if isinstance(limit, int) and len(names) > limit:
            optional = [name for name in names if name not in required]
            names = [name for name in names if name in required] + optional[: max(0, limit - len(required))]
        extra = schema.get("additionalProperties", True)
        result = {name: self.value(properties.get(name, extra), name, variant, depth + 1) for name in names}
        minimum = schema.get("minProperties")
        index = 1
        while isinstance(minimum, int) and len(result) < minimum and extra is not False:
            result.setdefault(f"extra_{index}", self.value(extra, f"extra {index}", variant, depth + 1))
            index += 1
        return result

    def _array(self, schema: Mapping[str, Any], label: str | None, variant: int, depth: int) -> list[Any]:
        prefix = schema.get("prefixItems") or []
        items = schema.get("items", True)
        if isinstance(items, list):  # draft-07: a list of items is 2020-12's prefixItems
            prefix, items = items, schema.get("additionalItems", True)
        minimum = int(schema.get("minItems", 0))
        count = max(minimum, len(prefix), 0 if depth >= SHALLOW_DEPTH else 1)
        maximum = schema.get("maxItems")
        if isinstance(maximum, int):
            count = min(count, maximum)
        if items is False:
            count = min(count, len(prefix))
        return [
            self.value(prefix[i] if i < len(prefix) else items, label, variant + i, depth + 1)
            for i in range(count)
        ]


def _type_of(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [str(k) for k in kind]
        return next((k for k in kinds if k != "null"), "null")
    if isinstance(kind, str):
        return kind
    for keys, inferred in _INFERRED:
        if any(key in schema for key in keys):
            return inferred
    return "string"


def _only_null(branch: Any) -> bool:
    return isinstance(branch, Mapping) and (branch.get("type") == "null" or branch.get("const", 0) is None)


def _merge(base: dict[str, Any], part: Mapping[str, Any]) -> dict[str, Any]:
    """``allOf``: properties and ``required`` add up; other keywords of a later part win."""
    merged = {**base, **part}
    if "properties" in base and "properties" in part:
        merged["properties"] = {**base["properties"], **part["properties"]}
    if "required" in base and "required" in part:
        merged["required"] = list(dict.fromkeys([*base["required"], *part["required"]]))
    for key in ("minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"):
        if key in base and key in part:
            merged[key] = max(base[key], part[key])
    for key in ("maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"):
        if key in base and key in part:
            merged[key] = min(base[key], part[key])
    return merged


def _string(schema: Mapping[str, Any], label: str | None, variant: int) -> str:
    form = _FORMATS.get(str(schema.get("format", "")))
    if form is not None:
        return form.format(day=1 + variant % 9, n=variant + 1)
    text = f"example {label}" if label else "example"
    if variant:
        text += f" {variant + 1}"
    shortest = schema.get("minLength")
    if isinstance(shortest, int) and len(text) < shortest:
        text += "." * (shortest - len(text))
    longest = schema.get("maxLength")
    if isinstance(longest, int) and len(text) > longest:
        text = text[:longest] if variant == 0 or longest < 2 else (text[: longest - 1] + str(variant % 10))
    return text


def _bounds(schema: Mapping[str, Any]) -> tuple[float | None, bool, float | None, bool]:
    """``(low, low_exclusive, high, high_exclusive)``, reading draft-04's boolean exclusives too."""
    low, high = schema.get("minimum"), schema.get("maximum")
    low_exclusive = high_exclusive = False
    exclusive_min, exclusive_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if exclusive_min is True:
        low_exclusive = True
    elif _is_number(exclusive_min) and (low is None or exclusive_min >= low):
        low, low_exclusive = exclusive_min, True
    if exclusive_max is True:
        high_exclusive = True
    elif _is_number(exclusive_max) and (high is None or exclusive_max <= high):
        high, high_exclusive = exclusive_max, True
    return low, low_exclusive, high, high_exclusive


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(schema: Mapping[str, Any], variant: int) -> int:
    low, low_exclusive, high, high_exclusive = _bounds(schema)
    smallest = None if low is None else (math.floor(low) + 1 if low_exclusive else math.ceil(low))
    largest = None if high is None else (math.ceil(high) - 1 if high_exclusive else math.floor(high))
    step: Any = schema.get("multipleOf")
    unit = int(step) if _is_number(step) and float(step).is_integer() and step > 0 else 1
    if smallest is None and largest is not None:
        value = math.floor(min(1, largest) / unit) * unit - variant * unit  # only an upper bound: count down
    else:
        value = math.ceil((1 if smallest is None else smallest) / unit) * unit + variant * unit
        if largest is not None and value > largest:
            value = max(math.floor(largest / unit) * unit, smallest or 0)
    return int(value)


def _number(schema: Mapping[str, Any], variant: int) -> float | int:
    low, low_exclusive, high, high_exclusive = _bounds(schema)
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step > 0:
        return _multiple(step, low, low_exclusive, high, high_exclusive, variant)
    if low is not None and high is not None:
        if not low_exclusive and variant == 0:
            return low
        return low + (high - low) * (variant + 1) / (variant + 2)
    if low is not None:
        return low + (1 if low_exclusive else 0) + variant
    if high is not None:
        return high - (1 if high_exclusive else 0) - variant
    return 1.5 + variant


def _multiple(
    step: float,
    low: float | None,
    low_exclusive: bool,
    high: float | None,
    high_exclusive: bool,
    variant: int,
) -> float | int:
    """The smallest multiple of ``step`` in range (a whole number of steps, checked the way validators
    divide), ``variant`` steps on; zero when none is found quickly."""
    first = 0 if low is None else math.ceil(low / step)
    for k in range(first + variant, first + variant + 1000):
        value = k * step
        value = int(value) if float(value).is_integer() else value
        if low is not None and (value < low or (low_exclusive and value == low)):
            continue
        if high is not None and (value > high or (high_exclusive and value == high)):
            break
        if float(value / step).is_integer():
            return value
    return 0
