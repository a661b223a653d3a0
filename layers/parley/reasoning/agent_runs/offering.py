"""What a tool's offer to the model holds, and the warnings its input schema brings
(``reasoning-format.md``, "What the model sees").

"The tool's description is cut to 4 KiB. Its input schema is sent unchanged." :func:`tool_spec` cuts
the description to 4,096 UTF-8 bytes at a character boundary, and adds nothing to it.

"Parts of a tool's input schema that the provider may refuse or not enforce are added to the run's
``warnings``, such as ``graph__search inputSchema#/properties/query/maxLength``. Tools are not sent as
strict structured outputs, so the rules for JSON output schemas do not apply to them."
:func:`schema_warnings_for` reuses what :mod:`parley.reasoning.schema_warnings` knows of each family
of providers, keeping only what holds for a tool that is not strict:

- a keyword the family receives but does not enforce (``NOT_ENFORCED``: Anthropic models and Gemini
  models; bounds such as ``maxLength``): the model may write arguments outside it, and the tool
  server is left to refuse them;
- ``oneOf``, which Anthropic and Gemini models read as ``anyOf``;
- for Gemini models, a schema that nests more than 10 levels or takes more than 16 KiB as JSON, which
  they may refuse.

OpenAI and Azure are left out: what their strict structured outputs reject, they accept in a tool that
is not strict. Gateways are left out, as for answer schemas. Each warning reads
``<name> inputSchema#<pointer>: <what>``, the pointer from the schema's root.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from parley.documents.json_schema import json_size
from parley.documents.pointers import join_pointer
from parley.models import ToolSpec
from parley.reasoning.agent_runs.results import utf8_prefix
from parley.reasoning.schema_warnings import (
    ANTHROPIC,
    GEMINI,
    GEMINI_LARGE_BYTES,
    NESTING_MAX,
    NOT_ENFORCED,
    Family,
)

if TYPE_CHECKING:
    from parley.ports.tools import ListedTool

#: "The tool's description is cut to 4 KiB."
DESCRIPTION_MAX_BYTES: Final = 4 * 1024
#: The families a tool's schema warnings are about (see the module's docstring).
TOOL_FAMILIES: Final = (ANTHROPIC, GEMINI)

_ONE: Final = frozenset({"additionalProperties", "propertyNames", "items", "not", "contains"})
_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP: Final = frozenset({"properties", "$defs", "definitions", "patternProperties"})
#: Keywords whose schemas describe a value one level further in.
_NESTING: Final = frozenset(
    {"properties", "additionalProperties", "items", "prefixItems", "patternProperties"}
)


def tool_spec(name: str, listed: ListedTool) -> ToolSpec:
    """The tool as the model is offered it: its model-facing ``name`` (from
    :func:`parley.reasoning.agent_runs.naming.model_names`), its description cut to 4 KiB, its input schema
    unchanged."""
    return ToolSpec(name, cut_description(listed.description), listed.input_schema)


def cut_description(description: str) -> str:
    """At most 4,096 UTF-8 bytes of ``description``, cut at a character boundary."""
    return utf8_prefix(description, DESCRIPTION_MAX_BYTES)


def schema_warnings_for(name: str, input_schema: Any, provider_kind: str) -> list[str]:
    """The run's warnings about the input schema of the tool the model calls ``name``, for a provider
    of ``provider_kind`` (``ProviderKind``: ``anthropic``, ``google``, …), in document order, each once.
    Empty for a provider of no family concerned (OpenAI, Azure, a gateway)."""
    family = next((each for each in TOOL_FAMILIES if provider_kind in each.providers), None)
    if family is None:
        return []
    found = dict.fromkeys(f"{name} inputSchema#{at}: {what}" for at, what in _findings(input_schema, family))
    return list(found)


def _findings(schema: Any, family: Family) -> Iterator[tuple[str, str]]:
    too_deep = False
    for node, here, level in _walk(schema):
        if family is GEMINI and level > NESTING_MAX and not too_deep and _is_container(node):
            too_deep = True
            yield (
                here,
                f"the schema nests more than {NESTING_MAX} levels of objects and lists here; Gemini "
                f"models may refuse it ({_providers(family)})",
            )
        if not isinstance(node, Mapping):
            continue
        for keyword, value in node.items():
            at = join_pointer(here, keyword)
            if keyword == "oneOf":
                yield at, f"oneOf reaches {family.name} models as anyOf ({_providers(family)})"
            many = isinstance(value, int) and not isinstance(value, bool) and value > 1
            if family in NOT_ENFORCED.get(keyword, ()) or (
                keyword == "minItems" and family is ANTHROPIC and many
            ):
                yield (
                    at,
                    f"{keyword} is not enforced while {family.name} models write the call's arguments; "
                    f"the tool server may refuse arguments outside it ({_providers(family)})",
                )
    if family is GEMINI and json_size(schema) > GEMINI_LARGE_BYTES:
        yield (
            "",
            f"the schema takes more than {GEMINI_LARGE_BYTES:,} bytes as JSON; Gemini models may refuse a "
            f"very large schema ({_providers(family)})",
        )


def _providers(family: Family) -> str:
    return ", ".join(sorted(family.providers))


def _is_container(node: Any) -> bool:
    if not isinstance(node, Mapping):
        return False
    declared = node.get("type")
    types = declared if isinstance(declared, list) else [declared]
    return (
        "object" in types
        or "array" in types
        or any(keyword in node for keyword in ("properties", "items", "prefixItems"))
    )


def _walk(schema: Any) -> Iterator[tuple[Any, str, int]]:
    """Each schema position with its pointer and how many objects and lists deep it describes a value,
    in document order, without recursion. A definition counts from 1 again."""
    stack: list[tuple[Any, str, int]] = [(schema, "", 1)]
    while stack:
        node, here, level = stack.pop()
        yield node, here, level
        if not isinstance(node, Mapping):
            continue
        found: list[tuple[Any, str, int]] = []
        for keyword, value in node.items():
            at = join_pointer(here, keyword)
            inner = 1 if keyword in ("$defs", "definitions") else level + 1 if keyword in _NESTING else level
            if keyword in _ONE and isinstance(value, Mapping):
                found.append((value, at, inner))
            elif (keyword in _LIST or keyword == "items") and isinstance(value, list):
                found.extend(
                    (item, join_pointer(at, index), inner)
                    for index, item in enumerate(value)
                    if isinstance(item, Mapping)
                )
            elif keyword in _MAP and isinstance(value, Mapping):
                found.extend(
                    (item, join_pointer(at, key), inner)
                    for key, item in value.items()
                    if isinstance(item, Mapping)
                )
        stack.extend(reversed(found))
