"""Warnings about an answer schema (``reasoning-format.md``, "Answers that are JSON").

Some providers reject or do not enforce parts of a schema. Such a schema is still saved, and the
definition carries warnings that name the line and the providers concerned, such as::

    Line 8, /output/schema/properties/total/minimum: minimum is not enforced while Anthropic models
    write the answer; an answer outside it fails as output_invalid (anthropic, bedrock,
    bedrock-anthropic, vertex-anthropic)

The warnings also name what is sent to the provider but not checked by the runtime: ``format``, the
``content*`` keywords, and keywords the runtime does not know. A definition shows at most 100.

What each family of providers does with a keyword, and why (the providers' structured-output
documentation; ``reasoning-format.md`` gives the advice these follow):

=============================  ==============================================================================
Family (providers)             Behaviour
=============================  ==============================================================================
Anthropic models (anthropic,   The schema reaches the model without numeric, length and count bounds
bedrock, bedrock-anthropic,    (``minimum``, ``maximum``, ``exclusive*``, ``multipleOf``, ``minLength``,
vertex-anthropic)              ``maxLength``, ``minItems`` above 1, ``maxItems``, ``uniqueItems``,
                               ``min/maxProperties``), nor ``not`` or ``propertyNames``: not enforced.
                               ``oneOf`` is sent as ``anyOf``. Formats other than date-time, time, date,
                               duration, email, hostname, uri, ipv4, ipv6 and uuid, and recursive schemas,
                               may be rejected. JSON that comes back through a tool call needs an object root.
OpenAI and Azure strict        Rejected: a root that is not an object, an object without
structured outputs (openai,    ``additionalProperties: false``, a property missing from ``required``,
azure)                         ``minLength``, ``maxLength``, ``uniqueItems``, ``min/maxProperties``,
                               ``propertyNames``, ``prefixItems``, ``allOf``, ``not``, ``oneOf``, formats
                               other than date-time, time, date, duration, email, hostname, ipv4, ipv6 and
                               uuid, and more than 10 levels of nested objects.
Gemini models (google,         Not enforced: ``exclusive*``, ``multipleOf``, ``minLength``, ``maxLength``,
vertex)                        ``uniqueItems``, ``min/maxProperties``, ``propertyNames``, ``allOf``,
                               ``not``; ``oneOf`` is read as ``anyOf``. Very large or deeply nested schemas
                               may be rejected (past 16 KiB as JSON or 10 levels: this runtime's measure).
=============================  ==============================================================================

Gateways are left out: what an OpenAI-compatible endpoint does with a schema is its operator's to say.
The runtime itself validates the answer against the schema as written, whatever the provider enforced.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote

from parley.documents.front_matter import LineIndex
from parley.documents.json_schema import REFUSED_KEYWORDS, SCHEMA_KEYWORDS, json_size
from parley.documents.pointers import join_pointer, unescape_token

MAX_WARNINGS: Final = 100
#: OpenAI's limit on nested objects; past it Gemini may refuse a schema too.
NESTING_MAX: Final = 10
#: Past this size, Gemini may refuse a schema as very large (this runtime's measure: Google gives none).
GEMINI_LARGE_BYTES: Final = 16_384


@dataclass(frozen=True)
class Family:
    """Providers that treat a schema the same way, and how a warning names them."""

    name: str  # "Anthropic", as in "Anthropic models"
    providers: tuple[str, ...]


ANTHROPIC: Final = Family("Anthropic", ("anthropic", "bedrock", "bedrock-anthropic", "vertex-anthropic"))
OPENAI: Final = Family("OpenAI and Azure", ("azure", "openai"))
GEMINI: Final = Family("Gemini", ("google", "vertex"))

ANTHROPIC_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
OPENAI_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

_BOUNDS: Final = ("minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties")
#: Keyword -> the families that receive it but do not enforce it (the runtime still checks it).
NOT_ENFORCED: Final[Mapping[str, tuple[Family, ...]]] = {
    "minimum": (ANTHROPIC,),
    "maximum": (ANTHROPIC,),
    "exclusiveMinimum": (ANTHROPIC, GEMINI),
    "exclusiveMaximum": (ANTHROPIC, GEMINI),
    "multipleOf": (ANTHROPIC, GEMINI),
    "maxItems": (ANTHROPIC,),
    **dict.fromkeys(_BOUNDS, (ANTHROPIC, GEMINI)),
    "propertyNames": (ANTHROPIC, GEMINI),
    "not": (ANTHROPIC, GEMINI),
    "allOf": (GEMINI,),
}
#: Keyword -> the families whose strict structured outputs reject it.
REJECTED: Final[Mapping[str, tuple[Family, ...]]] = {
    **dict.fromkeys(_BOUNDS, (OPENAI,)),
    "propertyNames": (OPENAI,),
    "prefixItems": (OPENAI,),
    "allOf": (OPENAI,),
    "not": (OPENAI,),
    "oneOf": (OPENAI,),
}
#: Sent to the provider but only annotations to the runtime's validator.
UNCHECKED_KEYWORDS: Final = frozenset({"format", "contentEncoding", "contentMediaType", "contentSchema"})
#: Keywords the runtime knows: it validates them, or they annotate (title, description, …): every
#: keyword of the drafts (``parley.documents.json_schema.SCHEMA_KEYWORDS``) but those a saved schema may
#: not use and those only sent to the provider.
KNOWN_KEYWORDS: Final = SCHEMA_KEYWORDS - frozenset(REFUSED_KEYWORDS) - UNCHECKED_KEYWORDS

_ONE: Final = frozenset({"additionalProperties", "propertyNames", "items", "not", "contentSchema"})
_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP: Final = frozenset({"properties", "$defs", "definitions"})
#: Keywords whose schemas describe a value one level further in: a property's or an item's.
_NESTING: Final = frozenset({"properties", "additionalProperties", "items", "prefixItems"})


@dataclass(frozen=True, order=True)
class SchemaWarning:
    """One warning: the document line, the JSON Pointer into the front matter, and what it says."""

    line: int
    pointer: str
    message: str

    def __str__(self) -> str:
        return f"Line {self.line}, {self.pointer}: {self.message}"


def schema_warnings(schema: Any, pointer: str, lines: LineIndex) -> list[SchemaWarning]:
    """Every warning about ``schema`` (at ``pointer`` in the front matter, such as ``/output/schema``),
    in line order, each once. The schema has passed the save-time rules."""
    found: list[SchemaWarning] = []
    seen: set[tuple[str, str]] = set()
    for relative, message in _findings(schema):
        at = pointer + relative
        if (at, message) not in seen:
            seen.add((at, message))
            found.append(SchemaWarning(lines.line_of(at), at, message))
    return sorted(found, key=lambda warning: warning.line)


def capped_warnings(warnings: list[SchemaWarning]) -> list[str]:
    """At most 100 warnings as text: past that, the 100th counts the rest."""
    shown = [str(warning) for warning in warnings]
    if len(shown) <= MAX_WARNINGS:
        return shown
    rest = len(shown) - MAX_WARNINGS + 1
    return [
        *shown[: MAX_WARNINGS - 1],
        f"Line {warnings[MAX_WARNINGS - 1].line}: {rest} more warnings are not shown",
    ]


# --- the findings ----------------------------------------------------------------------------------------


def _providers(families: tuple[Family, ...]) -> str:
    return ", ".join(sorted(provider for family in families for provider in family.providers))


def _models(families: tuple[Family, ...]) -> str:
    return " and ".join(family.name for family in families) + " models"


def _not_enforced(keyword: str, families: tuple[Family, ...]) -> str:
    return (
        f"{keyword} is not enforced while {_models(families)} write the answer; "
        f"an answer outside it fails as output_invalid ({_providers(families)})"
    )


def _rejected(what: str, families: tuple[Family, ...], advice: str = "") -> str:
    who = " and ".join(family.name for family in families)
    return (
        f"{what} is rejected by {who} strict structured outputs; a run there ends as conflict, "
        f"kind unworkable{advice} ({_providers(families)})"
    )


def _findings(schema: Any) -> Iterator[tuple[str, str]]:
    """(pointer from the schema's root, message) for each warning, in document order."""
    yield from _root(schema)
    deepest = 0
    for node, here, level in _walk(schema):
        if level > NESTING_MAX and deepest <= NESTING_MAX and _is_container(node):
            yield (
                here,
                f"The schema nests more than {NESTING_MAX} levels of objects and lists here; OpenAI and "
                "Azure strict structured outputs reject it, and Gemini models may "
                f"({_providers((OPENAI, GEMINI))})",
            )
        if _is_container(node):
            deepest = max(deepest, level)
        if isinstance(node, dict):
            yield from _keywords(node, here)
            yield from _object(node, here)
    yield from _recursion(schema)
    if json_size(schema) > GEMINI_LARGE_BYTES:
        yield (
            "",
            f"The schema takes more than {GEMINI_LARGE_BYTES:,} bytes as JSON; Gemini models may reject a "
            f"very large schema: keep it small ({_providers((GEMINI,))})",
        )


def _root(schema: Any) -> Iterator[tuple[str, str]]:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return
    at = "/type" if isinstance(schema, dict) and "type" in schema else ""
    families = (ANTHROPIC, OPENAI)
    yield (
        at,
        'The root is not "type": "object"; OpenAI and Azure strict structured outputs, and providers that '
        f"return JSON through a tool call, accept only an object ({_providers(families)})",
    )


def _keywords(node: dict[str, Any], here: str) -> Iterator[tuple[str, str]]:
    for keyword, value in node.items():
        at = join_pointer(here, keyword)
        if keyword == "format":
            yield from _format(value, at)
        elif keyword in UNCHECKED_KEYWORDS:
            yield at, f"{keyword} is sent to the provider but not checked by the runtime"
        elif keyword not in KNOWN_KEYWORDS:
            yield (
                at,
                f"{keyword} is not a keyword the runtime knows: it is sent to the provider but not checked",
            )
        if keyword == "oneOf":
            yield (
                at,
                "oneOf reaches Anthropic and Gemini models as anyOf; an answer that matches more than one "
                f"fails as output_invalid ({_providers((ANTHROPIC, GEMINI))})",
            )
        if keyword == "minItems" and isinstance(value, int) and value > 1:
            yield at, _not_enforced(keyword, (ANTHROPIC,))
        elif keyword in NOT_ENFORCED:
            yield at, _not_enforced(keyword, NOT_ENFORCED[keyword])
        if keyword in REJECTED:
            yield at, _rejected(keyword, REJECTED[keyword])


def _format(value: Any, at: str) -> Iterator[tuple[str, str]]:
    yield at, "format is sent to the provider but not checked by the runtime: an answer that breaks it passes"
    if not isinstance(value, str):
        return
    if value not in ANTHROPIC_FORMATS:
        yield (
            at,
            f"format {value} is not one Anthropic models accept ({', '.join(sorted(ANTHROPIC_FORMATS))}); "
            f"they may reject the schema ({_providers((ANTHROPIC,))})",
        )
    if value not in OPENAI_FORMATS:
        yield at, _rejected(f"format {value}", (OPENAI,))


def _is_object(node: dict[str, Any]) -> bool:
    declared = node.get("type")
    types = declared if isinstance(declared, list) else [declared]
    return "object" in types or "properties" in node


def _is_container(node: Any) -> bool:
    """A schema of an object or a list, the values that count as a level of nesting."""
    if not isinstance(node, dict):
        return False
    declared = node.get("type")
    types = declared if isinstance(declared, list) else [declared]
    return _is_object(node) or "array" in types or "items" in node or "prefixItems" in node


def _object(node: dict[str, Any], here: str) -> Iterator[tuple[str, str]]:
    """OpenAI and Azure strict structured outputs: every object closed, every property required."""
    if not _is_object(node):
        return
    if node.get("additionalProperties") is not False:
        at = join_pointer(here, "additionalProperties") if "additionalProperties" in node else here
        yield at, _rejected("An object without additionalProperties: false", (OPENAI,), "; set it to false")
    properties = node.get("properties")
    required = node.get("required")
    listed = set(required) if isinstance(required, list) else set()
    if isinstance(properties, dict):
        for name in properties:
            if name not in listed:
                yield (
                    join_pointer(here, "properties", name),
                    _rejected(
                        f"The property {name}, missing from required,",
                        (OPENAI,),
                        '; list it in required and make it nullable, such as "type": ["string", "null"]',
                    ),
                )


def _walk(schema: Any) -> Iterator[tuple[Any, str, int]]:
    """Every schema position with its pointer and how many objects and lists deep it describes a value,
    in document order, without recursion. A definition counts from 1 again: its uses are not followed."""
    stack: list[tuple[Any, str, int]] = [(schema, "", 1)]
    while stack:
        node, here, level = stack.pop()
        yield node, here, level
        if not isinstance(node, dict):
            continue
        found: list[tuple[Any, str, int]] = []
        for keyword, value in node.items():
            at = join_pointer(here, keyword)
            inner = level + 1 if keyword in _NESTING else level
            if keyword in ("$defs", "definitions"):
                inner = 1
            if keyword in _ONE and isinstance(value, dict | bool):
                found.append((value, at, inner))
            elif (keyword in _LIST or keyword == "items") and isinstance(value, list):
                found.extend(
                    (item, join_pointer(at, index), inner)
                    for index, item in enumerate(value)
                    if isinstance(item, dict | bool)
                )
            elif keyword in _MAP and isinstance(value, dict):
                found.extend(
                    (item, join_pointer(at, name), inner)
                    for name, item in value.items()
                    if isinstance(item, dict | bool)
                )
        stack.extend(reversed(found))


def _recursion(schema: Any) -> Iterator[tuple[str, str]]:
    """Each ``$ref`` that leads back to a definition it sits in: Anthropic models reject recursion."""
    if not isinstance(schema, dict):
        return
    refs: list[tuple[str, str | None, str]] = []  # (pointer of the $ref, definition it is in, target)
    for node, here, _level in _walk(schema):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            refs.append((join_pointer(here, "$ref"), _definition_of(here), _target(node["$ref"])))
    edges: dict[str, set[str]] = {}
    for _at, inside, target in refs:
        if inside is not None and target:
            edges.setdefault(inside, set()).add(target)
    for at, inside, target in refs:
        if inside is not None and target and inside in _reachable(target, edges):
            yield (
                at,
                "This $ref makes the schema recursive; Anthropic models reject a recursive schema "
                f"({_providers((ANTHROPIC,))})",
            )


def _definition_of(pointer: str) -> str | None:
    """``/$defs/node`` for a pointer inside that definition, else ``None``."""
    parts = pointer.split("/")
    if len(parts) >= 3 and parts[1] in ("$defs", "definitions"):
        return "/".join(parts[:3])
    return None


def _target(ref: str) -> str:
    """The definition a ``$ref`` names (the save-time rules allow only ``#/$defs/<name>`` and
    ``#/definitions/<name>``), as a pointer from the schema's root; empty for any other."""
    parts = ref.split("/", 2)
    if len(parts) != 3 or parts[0] != "#" or parts[1] not in ("$defs", "definitions"):
        return ""
    return join_pointer("", parts[1], unescape_token(unquote(parts[2])))


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for target in edges.get(stack.pop(), ()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen
