"""JSONata as Step Functions evaluates it, for the local interpreter of workflow state machines
(``workflow-format.md``, "Expressions"; Step Functions' JSONata query language).

- :func:`evaluate` runs one expression (the text between ``{%`` and ``%}``) with ``jsonata-python``,
  with the variables it is given (``states`` for ``$states``, the workflow's variables), with the
  functions Step Functions adds to JSONata 2.0 (``$partition``, ``$range``, ``$hash``, ``$random``,
  ``$uuid``, ``$parse``; ``$eval`` is not there), with ``$now()`` and ``$millis()`` reading the clock it
  is given, and for at most :data:`TIME_LIMIT_MS` milliseconds. Its result is plain JSON: whole
  numbers are ``int``, JSONata's sequences are lists. An expression that fails, that gives nothing
  (undefined: JSON has no such value) or gives a function raises :class:`ExpressionFailed`, which the
  interpreter reports as ``States.QueryEvaluationError``.
- :func:`parse_template` reads a field's value in JSONata mode: a string that is exactly ``{% … %}``
  is an :class:`Expression`, any other string is itself, objects and arrays are read item by item;
  :func:`render` evaluates such a template.

The time limit is ``jsonata-python``'s own time box (checked as each node of the expression is
evaluated), set per evaluation: no thread is started.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Final

from parley.errors import ParleyError
from parley.workflow.jsonata_library import Functions, Utils, jsonata

__all__ = [
    "TIME_LIMIT_MS",
    "Expression",
    "ExpressionFailed",
    "check_syntax",
    "evaluate",
    "expression_text",
    "parse_template",
    "render",
]

#: The longest one expression may run (``workflow-format.md``, "Bounds").
TIME_LIMIT_MS: Final = 200
#: Nested evaluation depth: a runaway recursion fails as a stack overflow well before Python's own.
MAX_DEPTH: Final = 2000
#: ``$range`` makes at most this many numbers (as Step Functions' ``States.ArrayRange``).
MAX_RANGE: Final = 1000
#: ``$hash``'s algorithms, by Step Functions' names.
HASH_ALGORITHMS: Final = {
    "MD5": "md5",
    "SHA-1": "sha1",
    "SHA-256": "sha256",
    "SHA-384": "sha384",
    "SHA-512": "sha512",
}
_OPEN: Final = "{%"
_CLOSE: Final = "%}"


class ExpressionFailed(ParleyError):
    """An expression did not give a JSON value: it failed, ran too long, or gave nothing."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Expression:
    """A JSONata expression in a field (``"{% text %}"``)."""

    text: str


def expression_text(value: object) -> str | None:
    """The expression of a string field that is one (``{%`` first, ``%}`` last); ``None`` otherwise."""
    if isinstance(value, str) and value.startswith(_OPEN) and value.endswith(_CLOSE) and len(value) >= 4:
        return value[len(_OPEN) : -len(_CLOSE)]
    return None


def parse_template(value: Any) -> Any:
    """A field's value with each ``{% … %}`` string an :class:`Expression` (objects and arrays walked)."""
    if isinstance(value, Mapping):
        return {key: parse_template(item) for key, item in value.items()}
    if isinstance(value, list):
        return [parse_template(item) for item in value]
    text = expression_text(value)
    return value if text is None else Expression(text)


def render(template: Any, bindings: Mapping[str, Any], *, now: Callable[[], datetime] | None = None) -> Any:
    """The template's value: each :class:`Expression` evaluated with ``bindings`` (fields as written,
    in order). Raw strings are read as :func:`parse_template` reads them."""
    if isinstance(template, Expression):
        return evaluate(template.text, bindings, now=now)
    if isinstance(template, Mapping):
        return {key: render(item, bindings, now=now) for key, item in template.items()}
    if isinstance(template, list):
        return [render(item, bindings, now=now) for item in template]
    text = expression_text(template)
    return template if text is None else evaluate(text, bindings, now=now)


def evaluate(text: str, bindings: Mapping[str, Any], *, now: Callable[[], datetime] | None = None) -> Any:
    """The JSON value of the JSONata expression ``text``, its variables ``bindings`` (``{"states":
    {...}, "x": 1}`` for ``$states`` and ``$x``), ``$now()``/``$millis()`` reading ``now`` (the real
    clock without it). Raises :class:`ExpressionFailed`."""
    expression = _parsed(text)
    frame = jsonata.Jsonata.Frame(None)
    frame.set_runtime_bounds(TIME_LIMIT_MS, MAX_DEPTH)
    instant = (now or _utc_now)()
    millis = round(instant.timestamp() * 1000)
    for name, function in _functions(millis).items():
        frame.bind(name, function)
    for name, value in bindings.items():
        frame.bind(name, _to_jsonata(value))
    try:
        result = expression.evaluate(None, frame)
    except ExpressionFailed:
        raise
    except jsonata.JException as exc:
        raise ExpressionFailed(_message(exc)) from None
    except RecursionError:
        raise ExpressionFailed("Stack overflow: a recursive function did not end") from None
    except Exception as exc:  # jsonata-python's own failures (a TypeError on a bad operand, ...)
        raise ExpressionFailed(f"{type(exc).__name__}: {exc}") from None
    if result is None:
        raise ExpressionFailed(f"The JSONata expression '{text}' returned nothing (undefined).")
    return _to_json(result, text)


def check_syntax(text: str) -> None:
    """Parse ``text`` (kept for later evaluations); raises :class:`ExpressionFailed` if it does not parse."""
    _parsed(text)


# -- parsing ---------------------------------------------------------------------------------------------


_PARSING: Final = threading.Lock()


@lru_cache(maxsize=1024)
def _parsed_cached(text: str) -> jsonata.Jsonata:
    with _PARSING:
        expression = jsonata.Jsonata(text)
    expression.set_output_convert_nulls(False)  # null stays null; None is undefined
    return expression


def _parsed(text: str) -> jsonata.Jsonata:
    try:
        return _parsed_cached(text)
    except jsonata.JException as exc:
        raise ExpressionFailed(f"The JSONata expression does not parse: {_message(exc)}") from None
    except Exception as exc:
        raise ExpressionFailed(f"The JSONata expression does not parse: {exc}") from None


def _message(exc: jsonata.JException) -> str:
    message = str(exc) or exc.error
    return f"{exc.error}: {message}" if exc.error and not message.startswith(exc.error) else message


# -- values between JSON and jsonata-python --------------------------------------------------------------


def _to_jsonata(value: Any) -> Any:
    """A JSON value as ``jsonata-python`` takes it: null as its null (``None`` would be undefined),
    whole floats as ints (JSON has one number type: ``1.0`` is ``1``)."""
    if value is None:
        return Utils.NULL_VALUE
    if isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {str(key): _to_jsonata(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_to_jsonata(item) for item in value]
    return value


def _to_json(value: Any, text: str) -> Any:
    """``jsonata-python``'s result as plain JSON (its sequences, range lists and null as JSON's)."""
    if value is Utils.NULL_VALUE or value is None:
        return None
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExpressionFailed(f"The JSONata expression '{text}' returned a number JSON cannot hold.")
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if isinstance(value, Mapping):
        return {str(key): _to_json(item, text) for key, item in value.items()}
    if isinstance(value, Utils.RangeList):
        return [_to_json(value[index], text) for index in range(len(value))]
    if isinstance(value, list | tuple):
        return [_to_json(item, text) for item in value]
    raise ExpressionFailed(f"The JSONata expression '{text}' returned an unsupported result type.")


def _arguments(args: Sequence[Any] | None) -> list[Any]:
    return [None if arg is None else _to_json(arg, "") for arg in (args or [])]


# -- Step Functions' functions ---------------------------------------------------------------------------


class _Native:
    """A function of ours as ``jsonata-python`` calls one (``call(input, args)``)."""

    def __init__(self, implementation: Callable[..., Any]) -> None:
        self.implementation = implementation

    def call(self, input: Any, args: Sequence[Any] | None) -> Any:
        return self.implementation(*_arguments(args))


def _function(implementation: Callable[..., Any], signature: str | None = None) -> Any:
    return jsonata.Jsonata.JFunction(_Native(implementation), signature)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _partition(array: Any = None, size: Any = None, *extra: Any) -> list[list[Any]]:
    if extra or not isinstance(array, list):
        raise ExpressionFailed("$partition takes an array and a chunk size")
    if not _is_integer(size) or size < 1:
        raise ExpressionFailed("$partition's chunk size is a positive integer")
    return [array[start : start + size] for start in range(0, len(array), size)]


def _range(start: Any = None, end: Any = None, step: Any = None, *extra: Any) -> list[int]:
    if extra or not (_is_integer(start) and _is_integer(end) and _is_integer(step)):
        raise ExpressionFailed("$range takes three integers: start, end and step")
    if step == 0:
        raise ExpressionFailed("$range's step is not 0")
    count = max(0, (end - start) // step + 1)
    if count > MAX_RANGE:
        raise ExpressionFailed(f"$range makes at most {MAX_RANGE} items, not {count}")
    return list(range(start, end + (1 if step > 0 else -1), step))


def _hash(data: Any = None, algorithm: Any = None, *extra: Any) -> str:
    if extra or not isinstance(data, str):
        raise ExpressionFailed("$hash takes a string and an algorithm")
    name = HASH_ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else None
    if name is None:
        raise ExpressionFailed(f"$hash's algorithm is one of {', '.join(HASH_ALGORITHMS)}, not {algorithm!r}")
    return hashlib.new(name, data.encode("utf-8")).hexdigest()


def _random(*args: Any) -> float:
    if not args:
        return random.random()
    if len(args) > 1 or not _is_integer(args[0]):
        raise ExpressionFailed("$random takes an integer seed, or nothing")
    return random.Random(args[0]).random()


def _uuid(*args: Any) -> str:
    if args:
        raise ExpressionFailed("$uuid takes no arguments")
    return str(uuid.uuid4())


def _parse(text: Any = None, *extra: Any) -> Any:
    if extra or not isinstance(text, str):
        raise ExpressionFailed("$parse takes a string of JSON")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ExpressionFailed(f"$parse: not JSON ({exc})") from None
    return _to_jsonata(value)


def _unavailable(name: str) -> Callable[..., Any]:
    def refuse(*args: Any) -> Any:
        raise ExpressionFailed(f"${name} is not available in Step Functions (use $parse)")

    return refuse


def _functions(millis: int) -> dict[str, Any]:
    """The functions bound for one evaluation: Step Functions' own, and the clock's."""

    def now(picture: Any = None, timezone: Any = None) -> Any:
        return Functions.datetime_from_millis(millis, picture, timezone)

    return {
        "partition": _function(_partition),
        "range": _function(_range),
        "hash": _function(_hash),
        "random": _function(_random),
        "uuid": _function(_uuid),
        "parse": _function(_parse),
        "eval": _function(_unavailable("eval")),
        "now": _function(now, "<s?s?:s>"),
        "millis": _function(lambda: millis, "<:n>"),
    }


def _utc_now() -> datetime:
    return datetime.now(UTC)
