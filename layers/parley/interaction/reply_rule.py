"""Reply rules: how the words of a reply become an answer ("Answering by reply").

A rule maps top-level string properties of ``output.schema`` to a *part* of the reply: ``word``
(the first word, one of the property's ``enum`` values or a word ``words`` lists for one), ``rest``
(what follows the first word) or ``text`` (the whole reply).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

Part = Literal["word", "rest", "text"]
PARTS: tuple[Part, ...] = ("word", "rest", "text")


@dataclass(frozen=True)
class RulePart:
    """Where one property's value comes from; ``words`` maps an ``enum`` value to its other words."""

    part: Part
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplyRule:
    """The reply rule of a function: written in ``reply``, or derived from the answer schema."""

    properties: Mapping[str, RulePart]
    derived: bool = False


MAX_VALUES: Final = 16
MAX_WORDS_A_VALUE: Final = 16
MAX_WORD_BYTES: Final = 64


def normalize_word(word: str) -> str:
    """Words are compared without case and without the punctuation around them."""
    start, end = 0, len(word)
    while start < end and _is_punctuation(word[start]):
        start += 1
    while end > start and _is_punctuation(word[end - 1]):
        end -= 1
    return word[start:end].casefold()


def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith(("P", "S"))


def _property_schemas(output_schema: Any) -> Mapping[str, Any]:
    if not isinstance(output_schema, dict):
        return {}
    properties = output_schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {name: _resolve(output_schema, schema) for name, schema in properties.items()}


def _resolve(root: Mapping[str, Any], schema: Any) -> Any:
    """Follow local ``$ref``s (the schema rules allow only ``#/$defs/…`` and ``#/definitions/…``)."""
    seen: set[str] = set()
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"] not in seen:
        ref = schema["$ref"]
        seen.add(ref)
        parts = ref.split("/")
        if len(parts) != 3 or parts[0] != "#" or parts[1] not in ("$defs", "definitions"):
            return schema
        defs = root.get(parts[1])
        name = parts[2].replace("~1", "/").replace("~0", "~")
        if not isinstance(defs, dict) or name not in defs:
            return schema
        schema = defs[name]
    return schema


def _is_string(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "string":
        return True
    if isinstance(kind, list) and "string" in kind and set(kind) <= {"string", "null"}:
        return True
    if kind is None:
        values = schema.get("enum", [schema["const"]] if "const" in schema else None)
        return isinstance(values, list) and bool(values) and all(isinstance(v, str) for v in values)
    return False


def _enum(schema: Any) -> list[str] | None:
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("enum"), list):
        return [v for v in schema["enum"] if isinstance(v, str)]
    if isinstance(schema.get("const"), str):
        return [schema["const"]]
    return None


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def reply_rule_problems(written: Any, output_schema: Any) -> list[tuple[str, str]]:
    """Problems of a written ``reply`` against the answer schema, as ``(pointer, message)``."""
    problems: list[tuple[str, str]] = []
    if not isinstance(written, dict):
        return [("/reply", "Expected a mapping of answer properties to word, rest or text")]
    if not written:
        return [("/reply", "A reply rule maps at least one property of the answer")]
    properties = _property_schemas(output_schema)
    for name, spec in written.items():
        at = f"/reply/{_escape(str(name))}"
        schema = properties.get(name)
        if schema is None:
            problems.append((at, f"{name!r} is not a top-level property of output.schema"))
        elif not _is_string(schema):
            problems.append((at, f"{name!r} is not a string property: a reply gives only text"))
        if isinstance(spec, str):
            if spec not in PARTS:
                problems.append((at, f"Expected word, rest or text, found {spec!r}"))
            continue
        if not isinstance(spec, dict):
            problems.append((at, "Expected word, rest or text, or a mapping with 'from' and 'words'"))
            continue
        for key in spec:
            if key not in ("from", "words"):
                problems.append(
                    (f"{at}/{_escape(str(key))}", f"{key!r} is not a key here; expected from, words")
                )
        part = spec.get("from")
        if part not in PARTS:
            problems.append((f"{at}/from" if "from" in spec else at, "'from' is one of word, rest, text"))
        if "words" in spec:
            if part != "word":
                problems.append((f"{at}/words", "Only word takes 'words'"))
            problems.extend(_words_problems(f"{at}/words", spec["words"], _enum(schema)))
    required = output_schema.get("required") if isinstance(output_schema, dict) else None
    for name in required if isinstance(required, list) else []:
        if isinstance(name, str) and name not in written:
            problems.append(("/reply", f"The rule reads no value for the required property {name!r}"))
    return problems


def _words_problems(at: str, words: Any, enum: list[str] | None) -> list[tuple[str, str]]:
    if not isinstance(words, dict):
        return [(at, "Expected a mapping of values to lists of words")]
    problems: list[tuple[str, str]] = []
    if enum is None:
        problems.append((at, "'words' names words for enum values, and the property has no enum"))
    if len(words) > MAX_VALUES:
        problems.append((at, f"A reply rule lists words for at most {MAX_VALUES} values"))
    meaning: dict[str, str] = {normalize_word(value): value for value in enum or []}
    for value, listed in words.items():
        value_at = f"{at}/{_escape(str(value))}"
        if enum is not None and value not in enum:
            problems.append((value_at, f"{value!r} is not one of the property's enum values"))
        if not isinstance(listed, list):
            problems.append((value_at, "Expected a list of words"))
            continue
        if len(listed) > MAX_WORDS_A_VALUE:
            problems.append((value_at, f"At most {MAX_WORDS_A_VALUE} words a value"))
        for index, word in enumerate(listed):
            word_at = f"{value_at}/{index}"
            if not isinstance(word, str):
                problems.append((word_at, "Expected a word"))
                continue
            if len(word.encode("utf-8", "surrogatepass")) > MAX_WORD_BYTES:
                problems.append((word_at, f"A word is at most {MAX_WORD_BYTES} bytes"))
            key = normalize_word(word)
            if not key or any(c.isspace() for c in word.strip()):
                problems.append((word_at, f"{word!r} is not one word"))
                continue
            other = meaning.setdefault(key, str(value))
            if other != value:
                problems.append((word_at, f"{word!r} already means {other!r}: a word means one value only"))
    return problems


def resolve_reply_rule(written: Any, output_schema: Any) -> ReplyRule | None:
    """The rule written in ``reply`` (assumed checked), else the one made from the schema, else ``None``.

    The rule made from the schema: the answer has one required property that is a string; it comes from
    the first word when it has an ``enum``, and from the whole reply when it has none.
    """
    if isinstance(written, dict) and written:
        rule: dict[str, RulePart] = {}
        for name, spec in written.items():
            if isinstance(spec, str) and spec in PARTS:
                rule[str(name)] = RulePart(spec)
            elif isinstance(spec, dict) and spec.get("from") in PARTS:
                words = spec.get("words") if isinstance(spec.get("words"), dict) else {}
                rule[str(name)] = RulePart(
                    spec["from"],
                    {
                        str(v): tuple(w for w in ws if isinstance(w, str))
                        for v, ws in (words or {}).items()
                        if isinstance(ws, list)
                    },
                )
        return ReplyRule(rule) if rule else None
    if not isinstance(output_schema, dict):
        return None
    required = output_schema.get("required")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(required[0], str):
        return None
    name = required[0]
    schema = _property_schemas(output_schema).get(name)
    if not _is_string(schema):
        return None
    return ReplyRule({name: RulePart("word" if _enum(schema) is not None else "text")}, derived=True)
