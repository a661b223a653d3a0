"""A workflow document against the DSL's own JSON Schema (``workflow-format.md``, "Document fields": "A
document is also checked against the DSL's own JSON Schema").

The schema of each version, 1.0.0 to 1.0.3, is vendored in ``schema/`` (see its README). It says what a
task may be with ``oneOf`` over every kind of task, and most fields with ``oneOf`` or ``anyOf`` over
their forms, so a validator's first error about a wrong task is "matches none of 12 schemas". To say
something useful instead, the document is checked in pieces:

- the document itself, against the schema with every task taken as any mapping;
- each task, by the checker that walks the task lists, against the one kind of task its fields name
  (:func:`task_problems`), again with the tasks inside it taken as any mapping;
- an error over forms (``oneOf``, ``anyOf``) is followed into the one form the value could be (the forms
  whose type, constant or distinguishing field the value does not have are set aside), and only when no
  form is left does the problem list the types the field takes.

Three changes are made to each schema as it is loaded, each because Parley's page says more than the
DSL: a duration is taken as anything (Parley reads every duration itself, and allows an expression in
every version); an error ``raise`` raises takes Parley's ``kind`` and ``because``, a short type
(``runtime`` for ``https://open-workflow-specification.org/spec/1.0.0/errors/runtime``) and an
expression for every field, its ``status`` too ("Errors, retries and timeouts"); and tasks are any
mapping, as above.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

# jsonschema ships no type hints (types-jsonschema is not a dependency); its classes are Any here.
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from parley.documents.json_schema import json_type_name
from parley.workflow.errors import SHORT_TYPES

SCHEMA_FOLDER: Final = Path(__file__).with_name("schema")
DSL_VERSIONS: Final = ("1.0.0", "1.0.1", "1.0.2", "1.0.3")
LATEST_DSL: Final = DSL_VERSIONS[-1]
#: The kinds of task, each with the key that names it and the schema's definition of it.
TASK_KINDS: Final = {
    "call": "callTask",
    "do": "doTask",
    "emit": "emitTask",
    "for": "forTask",
    "fork": "forkTask",
    "listen": "listenTask",
    "raise": "raiseTask",
    "run": "runTask",
    "set": "setTask",
    "switch": "switchTask",
    "try": "tryTask",
    "wait": "waitTask",
}
#: The title of the form of ``callTask`` that calls a function by name (``call: run_definition``).
_CALL_FUNCTION: Final = "CallFunction"
_TYPE_WORDS: Final = {
    "object": "a mapping",
    "array": "a list",
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
#: Patterns of the DSL named in words, by the title of the schema that holds them.
_PATTERN_WORDS: Final = {
    "WorkflowNamespace": "1 to 63 letters, digits and hyphens, starting and ending with a letter or digit",
    "WorkflowName": "1 to 63 letters, digits and hyphens, starting and ending with a letter or digit",
    "WorkflowVersion": "a semantic version, such as '1.0.0'",
    "WorkflowDSL": "a semantic version, such as '1.0.3'",
    "RuntimeExpression": "an expression written ${ … }",
    "LiteralUriTemplate": "a URI, such as https://example.com/errors/late",
    "LiteralUri": "a URI, such as https://example.com/errors/late",
    "ShortErrorType": "a short type (" + ", ".join(SHORT_TYPES) + ")",
}
_EXPRESSION: Final = {"$ref": "#/$defs/runtimeExpression"}


@dataclass(frozen=True)
class SchemaProblem:
    """One way a value breaks the DSL's schema: where (tokens from the value checked) and what."""

    path: tuple[str | int, ...]
    message: str


# --- the schemas -----------------------------------------------------------------------------------------


@lru_cache(maxsize=len(DSL_VERSIONS))
def dsl_schema(version: str) -> dict[str, Any]:
    """The DSL's schema of ``version`` as vendored, unchanged."""
    with (SCHEMA_FOLDER / f"workflow-{version}.json").open(encoding="utf-8") as file:
        schema: dict[str, Any] = json.load(file)
    return schema


@lru_cache(maxsize=len(DSL_VERSIONS))
def _checked_schema(version: str) -> dict[str, Any]:
    """The schema as the checks read it: tasks are any mapping, durations anything, errors take
    ``kind`` and ``because`` (see the module's docstring)."""
    schema = copy.deepcopy(dsl_schema(version))
    definitions = schema["$defs"]
    definitions["task"] = {"type": "object"}
    definitions["duration"] = {}
    error_properties = definitions["error"].setdefault("properties", {})
    for name in ("kind", "because"):
        error_properties[name] = {"type": "string"}
    short = {"title": "ShortErrorType", "type": "string", "enum": list(SHORT_TYPES)}
    error_properties["type"] = {"anyOf": [error_properties["type"], short]}
    error_properties["status"] = {"anyOf": [{"type": "integer"}, _EXPRESSION]}
    return schema


def _call_function_pointer(version: str) -> str:
    forms = dsl_schema(version)["$defs"]["callTask"]["oneOf"]
    index = next(i for i, form in enumerate(forms) if form.get("title") == _CALL_FUNCTION)
    return f"#/$defs/callTask/oneOf/{index}"


@lru_cache(maxsize=64)
def _validator(version: str, target: str) -> Any:
    """A validator of ``target`` (``""`` for the document, else a ``$ref`` into the schema)."""
    schema = _checked_schema(version)
    if target:
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": target}
    return Draft202012Validator(schema)


# --- checking --------------------------------------------------------------------------------------------


def document_problems(document: dict[str, Any], version: str) -> list[SchemaProblem]:
    """The document's problems under the schema of ``version``, its tasks aside."""
    return _problems(_validator(version, ""), document, _checked_schema(version))


def task_problems(task: dict[str, Any], kind: str, version: str) -> list[SchemaProblem]:
    """One task's problems under the schema of its kind (a key of :data:`TASK_KINDS`), the tasks inside
    it aside. A ``call`` is read as the DSL's call of a function by name (``call: run_definition``)."""
    target = _call_function_pointer(version) if kind == "call" else f"#/$defs/{TASK_KINDS[kind]}"
    return _problems(_validator(version, target), task, _checked_schema(version))


def _problems(validator: Any, instance: Any, root: dict[str, Any]) -> list[SchemaProblem]:
    found: list[SchemaProblem] = []
    seen: set[SchemaProblem] = set()
    try:
        errors = list(validator.iter_errors(instance))
    except RecursionError:  # pragma: no cover - the loader bounds nesting well below this
        return [SchemaProblem((), "Nests too deeply to be checked against the DSL's schema")]
    for error in errors:
        for problem in _explain(error, root):
            if problem not in seen:
                seen.add(problem)
                found.append(problem)
    return found


def _explain(error: ValidationError, root: dict[str, Any]) -> Iterator[SchemaProblem]:
    """The problems one error stands for: an error over forms is followed into the form the value could
    be; a refused field or a missing one is named at its own place."""
    path = tuple(error.absolute_path)
    keyword, expected, value = error.validator, error.validator_value, error.instance
    if keyword in ("oneOf", "anyOf"):
        if not error.context:
            yield SchemaProblem(path, _more_than_one(error, root))
            return
        chosen = _narrow(error)
        if chosen is None:
            yield SchemaProblem(path, _none_of(error, root))
            return
        for inner in chosen:
            yield from _explain(inner, root)
        return
    if keyword in ("unevaluatedProperties", "additionalProperties") and isinstance(value, dict):
        if keyword == "additionalProperties" and expected is not False:
            return  # a schema for the other fields reports its own errors
        allowed = _allowed_fields(error.schema, root)
        for name in value:
            if name not in allowed:
                shown = ", ".join(sorted(allowed))
                yield SchemaProblem((*path, name), f"{name!r} is not a field here; expected {shown}")
        return
    if keyword == "required" and isinstance(value, dict) and isinstance(expected, list):
        for name in expected:
            if isinstance(name, str) and name not in value:
                yield SchemaProblem((*path, name), f"{name!r} is required here")
        return
    yield SchemaProblem(path, _message(error))


def _narrow(error: ValidationError) -> list[ValidationError] | None:
    """The errors of the one form (of ``oneOf`` or ``anyOf``) the value could be, or ``None``."""
    by_form: dict[int, list[ValidationError]] = {}
    for inner in error.context:
        by_form.setdefault(int(inner.relative_schema_path[0]), []).append(inner)
    fitting = [errors for _, errors in sorted(by_form.items()) if not _misfit(errors, error.instance)]
    if len(fitting) == 1:
        return fitting[0]
    if len(fitting) > 1:
        # the form the value went furthest into, when one did
        depths = [max(len(inner.relative_path) for inner in errors) for errors in fitting]
        deepest = max(depths)
        if depths.count(deepest) == 1 and deepest > 0:
            return fitting[depths.index(deepest)]
    return None


def _misfit(errors: list[ValidationError], value: Any) -> bool:
    """Whether a form is not the one the value was meant as: it fails at the value itself on its type, a
    constant, an enumeration or a pattern, or it requires fields none of which the value has."""
    for inner in errors:
        if inner.relative_path:
            continue
        if inner.validator in ("type", "const", "enum", "pattern", "not"):
            return True
        if inner.validator in ("oneOf", "anyOf") and inner.context and _every_form_misfits(inner):
            return True
        if inner.validator == "required" and isinstance(value, dict):
            names = inner.validator_value if isinstance(inner.validator_value, list) else []
            if not any(name in value for name in names):
                return True
    return False


def _every_form_misfits(error: ValidationError) -> bool:
    by_form: dict[int, list[ValidationError]] = {}
    for inner in error.context:
        by_form.setdefault(int(inner.relative_schema_path[0]), []).append(inner)
    return all(_misfit(errors, error.instance) for errors in by_form.values())


def _none_of(error: ValidationError, root: dict[str, Any]) -> str:
    """The problem of a value that fits none of the forms: the types they take, when its own is not
    among them; else the fields that tell the forms apart, or the forms' own words."""
    forms = error.validator_value if isinstance(error.validator_value, list) else []
    types: list[str] = []
    for form in forms:
        for name in _types(form, root):
            if name not in types:
                types.append(name)
    value = error.instance
    found = json_type_name(value)
    if types and found not in types and not (found == "integer" and "number" in types):
        return f"Expected {_either(types)}, found {_TYPE_WORDS.get(found, found)}"
    if isinstance(value, dict):
        names = _distinguishing_fields(forms, root)
        if names:
            return f"Expected one of the fields {_either(names, words=False)}"
    described: list[str] = []
    for form in forms:
        for words in _form_words(form, root) or [_TYPE_WORDS.get(t, t) for t in _types(form, root)]:
            if words not in described:
                described.append(words)
    if described:
        return "Expected " + _either(described, words=False)
    return "Matches none of the forms this field takes"


def _more_than_one(error: ValidationError, root: dict[str, Any]) -> str:
    """The problem of a value that fits more than one form of a ``oneOf``: the fields that tell them
    apart, when it has several."""
    value = error.instance
    if isinstance(value, dict):
        forms = error.validator_value if isinstance(error.validator_value, list) else []
        present = [name for name in _distinguishing_fields(forms, root) if name in value]
        if len(present) > 1:
            return f"Write one of {_either(present, words=False)}, not more"
    return "Matches more than one of the forms this field takes"


def _distinguishing_fields(forms: list[Any], root: dict[str, Any]) -> list[str]:
    """The fields each form requires (one each, such as ``all``, ``any`` and ``one``)."""
    names: list[str] = []
    for form in forms:
        target = _resolve(form.get("$ref"), root) if isinstance(form, dict) else None
        required = (
            (target if isinstance(target, dict) else form).get("required") if isinstance(form, dict) else None
        )
        if isinstance(required, list):
            names.extend(str(name) for name in required if str(name) not in names)
    return names


def _form_words(form: Any, root: dict[str, Any], depth: int = 0) -> list[str]:
    """A form's pattern in words (a URI, an expression), through ``$ref`` and nested forms."""
    if not isinstance(form, dict) or depth > 8:
        return []
    words = _PATTERN_WORDS.get(str(form.get("title")))
    if words is not None and ("pattern" in form or "enum" in form):
        return [words]
    found: list[str] = []
    target = _resolve(form.get("$ref"), root)
    if target is not None:
        found.extend(_form_words(target, root, depth + 1))
    for keyword in ("oneOf", "anyOf"):
        for inner in form.get(keyword) or ():
            found.extend(item for item in _form_words(inner, root, depth + 1) if item not in found)
    return found


def _types(schema: Any, root: dict[str, Any], depth: int = 0) -> list[str]:
    if not isinstance(schema, dict) or depth > 8:
        return []
    named = schema.get("type")
    if isinstance(named, str):
        return [named]
    if isinstance(named, list):
        return [str(name) for name in named]
    found: list[str] = []
    target = _resolve(schema.get("$ref"), root)
    if target is not None:
        found.extend(_types(target, root, depth + 1))
    for keyword in ("oneOf", "anyOf", "allOf"):
        for form in schema.get(keyword) or ():
            found.extend(name for name in _types(form, root, depth + 1) if name not in found)
    return found


def _either(items: list[str], *, words: bool = True) -> str:
    """``a, b or c``; type names (``object``) in words (``a mapping``) unless ``words`` is false."""
    shown = [_TYPE_WORDS.get(item, item) for item in items] if words else list(items)
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _resolve(ref: Any, root: dict[str, Any]) -> Any:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    node: Any = root
    for token in ref[2:].split("/"):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _allowed_fields(schema: Any, root: dict[str, Any]) -> set[str]:
    """Every field a schema names, through ``$ref``, ``allOf``, ``oneOf`` and ``anyOf``: what
    ``unevaluatedProperties: false`` lets through when the value is right."""
    names: set[str] = set()
    stack: list[Any] = [schema]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        properties = node.get("properties")
        if isinstance(properties, dict):
            names.update(properties)
        target = _resolve(node.get("$ref"), root)
        if target is not None:
            stack.append(target)
        for keyword in ("allOf", "oneOf", "anyOf"):
            stack.extend(node.get(keyword) or ())
    return names


def _message(error: ValidationError) -> str:
    """A short message that never repeats a large value."""
    keyword, expected, value = error.validator, error.validator_value, error.instance
    if keyword == "type":
        names = expected if isinstance(expected, list) else [expected]
        found = json_type_name(value)
        return f"Expected {_either([str(n) for n in names])}, found {_TYPE_WORDS.get(found, found)}"
    if keyword == "enum" and isinstance(expected, list):
        return "Expected one of " + ", ".join(_shown(item) for item in expected[:20])
    if keyword == "const":
        return f"Expected {_shown(expected)}"
    if keyword == "pattern":
        title = error.schema.get("title") if isinstance(error.schema, dict) else None
        words = _PATTERN_WORDS.get(str(title))
        if words is not None:
            return f"{_shown(value)} is not {words}"
        return f"{_shown(value)} is not of the form {expected}"
    bounds = {
        "minLength": "at least {} characters",
        "maxLength": "at most {} characters",
        "minimum": "at least {}",
        "maximum": "at most {}",
        "minItems": "at least {} items",
        "maxItems": "at most {} items",
        "minProperties": "at least {} fields",
        "maxProperties": "at most {} fields",
    }
    if keyword in bounds:
        text = bounds[keyword].format(expected)
        return "Expected " + (text[:-1] if expected == 1 and text.endswith("s") else text)
    if keyword == "not":
        return "Not allowed here"
    text = str(error.message)
    return text if len(text) <= 200 else text[:199] + "…"


def _shown(value: Any, width: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"
