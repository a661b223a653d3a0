"""A workflow's expressions as the compiled machine evaluates them (``workflow-format.md``,
"Expressions", "Durations"): each DSL expression becomes JSONata text that binds the DSL's variables
(``$data``, ``$input``, ``$task``, ``$context``, ``$error``, ``$output``) around the document's own text,
in a Step Functions field (``"{% … %}"``).

- A :class:`Place` says, as JSONata text, what each variable is where an expression is evaluated (the
  state's input, a variable the machine assigned, …); :func:`bound` wraps a body in a block that binds
  only the variables the body reads: ``($data := $states.input; $data.brief)``.
- :func:`field` makes a Step Functions field of a DSL value: objects stay objects whose ``${ … }``
  strings are ``{% … %}`` templates; any other value is one ``{% … %}`` expression. Plain strings that
  Step Functions (or asl-validator) would read otherwise become JSONata string literals.
- :func:`value_text` makes one JSONata expression of a DSL value (objects and arrays as constructors,
  an array item that gives an array kept as one item, as Step Functions keeps it in a template).
- :func:`condition_text`: a condition holds unless it gives ``false``, ``null`` or nothing; the text
  always gives a boolean (a Choice's ``Condition`` must).
- :func:`duration_ms`: a duration (ISO 8601, a mapping, or an expression) as milliseconds.

Expressions are written on one line (asl-validator reads ``{% … %}`` as one line): a line break in a
string literal becomes its escape, elsewhere a space (:func:`one_line`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Final

from parley.workflow.expressions import condition_body, expression_body

_OPEN: Final = "{% "
_CLOSE: Final = " %}"
_REFERENCE: Final = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_BREAKS: Final = {"\n": "\\n", "\r": "\\r", "\u2028": "\\u2028", "\u2029": "\\u2029"}
#: The order in which a block binds the DSL's variables (any others after, by name).
_ORDER: Final[tuple[str, ...]] = ("input", "data", "output", "task", "context", "workflow", "runtime")
_ISO_DURATION: Final = re.compile(
    r"^P(?:(?P<weeks>\d+(?:\.\d+)?)W)?(?:(?P<days>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)
_UNIT_MS: Final = {
    "weeks": 604_800_000,
    "days": 86_400_000,
    "hours": 3_600_000,
    "minutes": 60_000,
    "seconds": 1_000,
    "milliseconds": 1,
}
#: A duration the machine reads as it runs (an expression's value): ISO 8601 text or a mapping, in ms.
_DURATION_FUNCTION: Final = (
    'function($d){ $type($d) = "string" ? ($m := $match($d, '
    "/^P(?:([0-9.]+)W)?(?:([0-9.]+)D)?(?:T(?:([0-9.]+)H)?(?:([0-9.]+)M)?(?:([0-9.]+)S)?)?$/)[0].groups; "
    "$exists($m) ? $round($sum($map([604800000, 86400000, 3600000, 60000, 1000], "
    "function($unit, $i){ $m[$i] ? $number($m[$i]) * $unit : 0 }))) "
    ': $error("not a duration: " & $d)) : $type($d) = "object" ? '
    "$round(($d.days ? $d.days : 0) * 86400000 + ($d.hours ? $d.hours : 0) * 3600000 "
    "+ ($d.minutes ? $d.minutes : 0) * 60000 + ($d.seconds ? $d.seconds : 0) * 1000 "
    "+ ($d.milliseconds ? $d.milliseconds : 0)) "
    ': $type($d) = "number" ? $d : $error("not a duration") }'
)


@dataclass(frozen=True, slots=True)
class Place:
    """The DSL's variables where an expression is evaluated: each name (without ``$``) and the JSONata
    text that gives its value there. Names not given are not bound (``$workflow`` and ``$runtime`` are
    the machine's own variables)."""

    bindings: Mapping[str, str] = dataclass_field(default_factory=dict)

    def with_(self, **bindings: str) -> Place:
        return Place({**self.bindings, **bindings})

    def without(self, *names: str) -> Place:
        return Place({name: text for name, text in self.bindings.items() if name not in names})


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one (a document's optional sections)."""
    return value if isinstance(value, Mapping) else {}


def referenced(text: str) -> set[str]:
    """The variable names a JSONata text reads (or might: a name in a string literal counts too)."""
    return set(_REFERENCE.findall(text))


def bound(body: str, place: Place) -> str:
    """``body`` (the document's JSONata text) in a block binding the variables of ``place`` it reads."""
    names = referenced(body)
    wanted = [name for name in _ORDER if name in names and name in place.bindings]
    wanted += sorted(name for name in names if name in place.bindings and name not in _ORDER)
    text = one_line(body)
    if not wanted:
        return f"({text})"
    lets = "; ".join(f"${name} := {place.bindings[name]}" for name in wanted)
    return f"({lets}; ({text}))"


def template(text: str) -> str:
    """A Step Functions field holding the JSONata ``text``."""
    return _OPEN + text + _CLOSE


def literal(value: Any) -> str:
    """A JSON value as JSONata text (JSON's own syntax, ASCII only)."""
    return json.dumps(value, ensure_ascii=True, separators=(", ", ": "))


def is_plain_string(value: str) -> bool:
    """Whether a string can stand as itself in a Step Functions JSONata field: not empty, on one line,
    and not read as an expression (``{%`` … ``%}``)."""
    return (
        value != ""
        and not any(mark in value for mark in _BREAKS)
        and not value.startswith("{%")
        and not value.endswith("%}")
    )


def value_text(value: Any, place: Place) -> str:
    """One JSONata expression giving the DSL value ``value``, its ``${ … }`` strings evaluated at
    ``place``."""
    body = expression_body(value)
    if body is not None:
        return bound(body, place)
    if isinstance(value, Mapping):
        if not _has_expression(value):
            return literal(value)
        items = ", ".join(f"{literal(str(key))}: {value_text(item, place)}" for key, item in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        if not _has_expression(value):
            return literal(value)
        return "[" + ", ".join(_item_text(item, place) for item in value) + "]"
    return literal(value)


def _item_text(item: Any, place: Place) -> str:
    # An array constructor splices an item that gives an array (``[$x]`` is ``$x``); Step Functions keeps
    # it as one item. An item written as an array constructor is kept, so an array is wrapped twice.
    if expression_body(item) is None:
        return value_text(item, place)
    return f'($v := {value_text(item, place)}; $type($v) = "array" ? [[$v]] : $v)'


def _has_expression(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(_has_expression(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_expression(item) for item in value)
    return expression_body(value) is not None


def field(value: Any, place: Place) -> Any:
    """A Step Functions field (``Output``, ``Arguments``, an ``Assign`` value) giving the DSL value:
    an object stays an object whose members are fields; an expression, or any value that is not an
    object, is one ``{% … %}`` template."""
    if isinstance(value, Mapping):
        return {str(key): member(item, place) for key, item in value.items()}
    return template(value_text(value, place))


def member(value: Any, place: Place) -> Any:
    """A member of a Step Functions template object giving the DSL value (an object stays an object,
    a plain literal stays itself, anything else is a ``{% … %}`` template)."""
    if isinstance(value, Mapping):
        return {str(key): member(item, place) for key, item in value.items()}
    if isinstance(value, list):
        if not _has_expression(value) and _plain(value):
            return value
        return template(value_text(value, place))
    if isinstance(value, str):
        if expression_body(value) is not None:
            return template(value_text(value, place))
        return value if is_plain_string(value) else template(literal(value))
    return value


def _plain(value: Any) -> bool:
    """Whether a literal can be written as itself in a template (its strings all plain)."""
    if isinstance(value, Mapping):
        return all(_plain(item) for item in value.values())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    if isinstance(value, str):
        return is_plain_string(value)
    return True


def expression_text(value: str, place: Place) -> str:
    """The JSONata text of a place that is always an expression (``input.from``, ``output.as``,
    ``export.as`` as strings: with or without ``${ }``)."""
    return bound(condition_body(value), place)


def shaping_text(value: Any, place: Place) -> str:
    """``input.from``, ``output.as`` or ``export.as``: a string is an expression, an object or any other
    value is a value whose ``${ … }`` strings are expressions."""
    if isinstance(value, str):
        return expression_text(value, place)
    return value_text(value, place)


def condition_text(value: Any, place: Place) -> str:
    """A condition (``if``, ``when``, ``exceptWhen``) as JSONata text that gives ``true`` unless the
    expression gives ``false``, ``null`` or nothing."""
    if isinstance(value, bool):
        return "true" if value else "false"
    held = bound(condition_body(str(value)), place)
    return (
        f'($held := {held}; $type($held) = "boolean" ? $held : ($exists($held) and $type($held) != "null"))'
    )


def one_line(text: str) -> str:
    """JSONata text on one line, meaning the same: a line break inside a string literal becomes its
    escape (``\\n``), elsewhere (between tokens, in a comment) a space."""
    if not any(mark in text for mark in _BREAKS):
        return text
    out: list[str] = []
    quote: str | None = None
    comment = False
    index = 0
    while index < len(text):
        char = text[index]
        if quote is not None:
            if char == "\\" and index + 1 < len(text):
                out.append(text[index : index + 2])
                index += 2
                continue
            if char == quote:
                quote = None
            out.append(_BREAKS.get(char, char))
        elif comment:
            if text.startswith("*/", index):
                comment = False
                out.append("*/")
                index += 2
                continue
            out.append(" " if char in _BREAKS else char)
        elif char in ("'", '"'):
            quote = char
            out.append(char)
        elif text.startswith("/*", index):
            comment = True
            out.append("/*")
            index += 2
            continue
        else:
            out.append(" " if char in _BREAKS else char)
        index += 1
    return "".join(out)


def literal_duration_ms(value: Any) -> int | None:
    """A written duration (ISO 8601 ``PT30M``, or a mapping of ``days``, ``hours``, ``minutes``,
    ``seconds``, ``milliseconds``) in milliseconds; ``None`` for an expression."""
    if isinstance(value, Mapping):
        return round(sum(float(value.get(unit, 0) or 0) * ms for unit, ms in _UNIT_MS.items()))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return round(value)
    if isinstance(value, str) and expression_body(value) is None:
        match = _ISO_DURATION.match(value.strip())
        if match is None:
            raise ValueError(f"not a duration: {value!r}")
        return round(
            sum(float(amount) * _UNIT_MS[unit] for unit, amount in match.groupdict().items() if amount)
        )
    return None


def seconds_field(value: Any, place: Place, *, least: int = 0) -> int | str:
    """A duration as a Step Functions ``Seconds`` or ``TimeoutSeconds`` field: whole seconds (rounded up,
    at least ``least``), a number for a written one, else a ``{% … %}`` template read as the machine
    runs."""
    written = literal_duration_ms(value)
    if written is not None:
        return max(least, -(-written // 1000))
    return template(f"$max([{least}, $ceil({duration_ms(value, place)} / 1000)])")


def duration_ms(value: Any, place: Place) -> str:
    """A duration as JSONata text giving milliseconds: a number for a written one, else the expression's
    value (ISO 8601 text or a mapping) read as the machine runs."""
    written = literal_duration_ms(value)
    if written is not None:
        return str(written)
    return f"({_DURATION_FUNCTION})({value_text(value, place)})"
