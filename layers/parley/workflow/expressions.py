"""Expressions in a workflow document (``workflow-format.md``, "Expressions"): JSONata, written as
``${ … }`` where a value may be one, or bare where the place is always an expression.

:func:`parse_expression` reads one with ``jsonata-python`` and names the variables it reads and the
functions it calls; :func:`reading_problems` says which of them its place does not have
(:data:`VARIABLES_OF_PLACE`), and which functions are neither JSONata's nor Step Functions'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from parley.errors import ParleyError
from parley.workflow.jsonata_library import JException, jsonata

_WRAPPED: Final = re.compile(r"\A\s*\$\{(?P<body>.*)\}\s*\Z", re.DOTALL)


def expression_body(value: object) -> str | None:
    """The JSONata text of a ``${ … }`` value; ``None`` for any other value (a plain value)."""
    if not isinstance(value, str):
        return None
    match = _WRAPPED.match(value)
    return match.group("body").strip() if match else None


def condition_body(value: str) -> str:
    """The JSONata text of a place that is always an expression (``if``, ``when``, ``for.in``, …):
    with or without ``${ }``."""
    body = expression_body(value)
    return value.strip() if body is None else body


# --- Parsing, and what an expression reads (checked when a document is saved) ---------------------------

#: JSONata 2.0's functions, as Step Functions runs them (JSONata 2.0.6): every one but ``$eval``.
JSONATA_FUNCTIONS: Final = frozenset(
    {
        # aggregation
        "sum",
        "count",
        "max",
        "min",
        "average",
        # string
        "string",
        "substring",
        "substringBefore",
        "substringAfter",
        "lowercase",
        "uppercase",
        "length",
        "trim",
        "pad",
        "match",
        "contains",
        "replace",
        "split",
        "join",
        "base64encode",
        "base64decode",
        "encodeUrlComponent",
        "encodeUrl",
        "decodeUrlComponent",
        "decodeUrl",
        # numeric
        "number",
        "abs",
        "floor",
        "ceil",
        "round",
        "power",
        "sqrt",
        "random",
        "formatNumber",
        "formatBase",
        "formatInteger",
        "parseInteger",
        # boolean
        "boolean",
        "not",
        "exists",
        # array
        "append",
        "reverse",
        "shuffle",
        "distinct",
        "sort",
        "zip",
        # object
        "keys",
        "lookup",
        "spread",
        "merge",
        "sift",
        "each",
        "error",
        "assert",
        "type",
        # higher order
        "map",
        "filter",
        "single",
        "reduce",
        # date and time
        "now",
        "millis",
        "fromMillis",
        "toMillis",
        # other
        "clone",
    }
)
#: The functions Step Functions adds to JSONata.
STEP_FUNCTIONS_FUNCTIONS: Final = frozenset({"partition", "range", "hash", "random", "uuid", "parse"})
#: Every function an expression may call.
FUNCTIONS: Final = JSONATA_FUNCTIONS | STEP_FUNCTIONS_FUNCTIONS
#: Functions of JSONata that Step Functions does not run, and what to write instead.
NOT_RUN: Final = {"eval": "Step Functions does not run $eval; read JSON text with $parse"}

#: The variables every place may read (``workflow-format.md``, "Expressions").
EVERY_PLACE: Final = ("data", "input", "context", "task", "workflow", "runtime")
#: ``export.as`` reads the task's output too.
OUTPUT: Final = "output"
#: The names a ``for`` gives its item and position unless ``for.each`` and ``for.at`` name them.
LOOP_ITEM: Final = "item"
LOOP_INDEX: Final = "index"
#: The name a ``catch`` gives the error unless ``catch.as`` names it.
CAUGHT_ERROR: Final = "error"
#: The variables of each kind of place: what the places that add to :data:`EVERY_PLACE` add. A ``for``'s
#: and a ``catch``'s names are the defaults here; the document may rename them.
VARIABLES_OF_PLACE: Final[dict[str, tuple[str, ...]]] = {
    "value": EVERY_PLACE,
    "export.as": (*EVERY_PLACE, OUTPUT),
    "for": (*EVERY_PLACE, LOOP_ITEM, LOOP_INDEX),
    "catch": (*EVERY_PLACE, CAUGHT_ERROR),
}
#: Where the variables that not every place has are read, for the problem that names one read elsewhere.
WHERE_READ: Final = {
    OUTPUT: "only export.as reads $output",
    LOOP_ITEM: "$item is read only inside a for's while and do",
    LOOP_INDEX: "$index is read only inside a for's while and do",
    CAUGHT_ERROR: "$error is read only in a catch's when, exceptWhen and do",
}
#: The most characters of an expression a problem shows.
_SHOWN: Final = 40


class ExpressionSyntaxError(ParleyError, ValueError):
    """An expression that does not parse: JSONata's message, its code and the 0-based character of the
    text where JSONata stopped (at most the text's length)."""

    def __init__(self, message: str, location: int, code: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.code = code


@dataclass(frozen=True)
class Reference:
    """A ``$name`` in an expression: the name without ``$``, and the 0-based character it starts at."""

    name: str
    offset: int


@dataclass(frozen=True)
class ParsedExpression:
    """An expression that parsed: the variables it reads and the functions it calls, each where it is
    written, leaving out the names it binds itself (``$x := …``, a function's parameters, ``@$x`` and
    ``#$i``), which are its own. ``$`` and ``$$`` (the context and the root) are not variables here.

    A binding counts for the whole expression, wherever it is written: the check is that a name is known,
    not that it is bound before it is read.
    """

    text: str
    reads: tuple[Reference, ...]
    calls: tuple[Reference, ...]
    bound: frozenset[str]

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(reference.name for reference in self.reads)

    @property
    def functions(self) -> frozenset[str]:
        return frozenset(reference.name for reference in self.calls)


# Attributes of jsonata-python's AST nodes that point back up the tree or hold no expression.
_NOT_CHILDREN: Final = frozenset(
    {
        "_outer_instance",
        "environment",
        "slot",
        "ancestor",
        "seeking_parent",
        "tuple",
        "input",
        "signature",
        "error",
        "errors",
        "token",
        "focus",
        "index",
        "label",
        "value",
        "id",
        "type",
    }
)


def parse_expression(text: str) -> ParsedExpression:
    """Parse JSONata ``text`` (the body of ``${ … }``, or of a place that is always an expression).

    Raises :class:`ExpressionSyntaxError` for text that does not parse.
    """
    try:
        ast = jsonata.Jsonata(text).ast
    except JException as exc:
        location = exc.location if isinstance(exc.location, int) else 0
        raise ExpressionSyntaxError(str(exc), min(max(location, 0), len(text)), str(exc.error or "")) from exc
    except RecursionError as exc:
        raise ExpressionSyntaxError("The expression nests too deeply to be read", 0) from exc
    except re.error as exc:
        raise ExpressionSyntaxError(f"A regular expression in it does not parse: {exc.msg}", 0) from exc
    except IndexError as exc:  # jsonata-python's tokenizer reading past the end of the text
        raise ExpressionSyntaxError("Unexpected end of expression", len(text)) from exc
    except Exception as exc:  # jsonata-python fails on some text with errors of its own
        raise ExpressionSyntaxError("The text is not a JSONata expression", 0) from exc
    reads: list[Reference] = []
    calls: list[Reference] = []
    bound: set[str] = set()
    seen: set[int] = set()
    stack: list[Any] = [ast]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or not hasattr(node, "type"):
            continue
        seen.add(id(node))
        kind = node.type
        skip: tuple[str, ...] = ()
        if kind == "variable":
            name = node.value
            if isinstance(name, str) and name not in ("", "$"):
                reads.append(Reference(name, _start(node, name)))
        elif kind == "bind" and _is_variable(node.lhs):
            bound.add(node.lhs.value)
            skip = ("lhs",)
        elif kind == "lambda":
            bound.update(arg.value for arg in node.arguments or () if _is_variable(arg))
            skip = ("arguments",)
        elif kind in ("function", "partial") and _is_variable(node.procedure):
            calls.append(Reference(node.procedure.value, _start(node.procedure, node.procedure.value)))
            skip = ("procedure",)
        for name in ("focus", "index"):  # ``@$x`` and ``#$i`` on a step bind the name
            value = getattr(node, name, None)
            if isinstance(value, str) and value:
                bound.add(value)
        stack.extend(reversed(list(_children(node, skip))))
    return ParsedExpression(
        text=text,
        reads=tuple(sorted((r for r in reads if r.name not in bound), key=_offset)),
        calls=tuple(sorted((c for c in calls if c.name not in bound), key=_offset)),
        bound=frozenset(bound),
    )


def _offset(reference: Reference) -> int:
    return reference.offset


def _is_variable(node: Any) -> bool:
    return getattr(node, "type", None) == "variable" and isinstance(getattr(node, "value", None), str)


def _start(node: Any, name: str) -> int:
    """Where ``$name`` starts: jsonata-python keeps the position just past a token."""
    position = getattr(node, "position", 0)
    return max(position - len(name) - 1, 0) if isinstance(position, int) else 0


def _children(node: Any, skip: tuple[str, ...]) -> Iterator[Any]:
    for name, value in vars(node).items():
        if name in _NOT_CHILDREN or name in skip or value is None:
            continue
        if hasattr(value, "type"):
            yield value
        elif isinstance(value, list | tuple):
            for item in value:
                if hasattr(item, "type"):
                    yield item
                elif isinstance(item, list | tuple):  # an object constructor's (key, value) pairs
                    yield from (part for part in item if hasattr(part, "type"))


def reading_problems(
    parsed: ParsedExpression, readable: Iterable[str], *, elsewhere: Mapping[str, str] | None = None
) -> list[tuple[int, str]]:
    """What ``parsed`` may not do in a place whose variables are ``readable``: each a (0-based character,
    message), in the order written.

    A variable is read from its place, or names a function (``$map($data, $string)``). A function called
    is JSONata's, Step Functions', or one the expression binds. ``elsewhere`` maps the names other places
    of the document have (a ``for``'s item, a ``catch``'s error) to where they are read, for the message;
    :data:`WHERE_READ` gives it for ``$output``, ``$item``, ``$index`` and ``$error``.
    """
    places = frozenset(readable)
    where_read = {**WHERE_READ, **(elsewhere or {})}
    found: list[tuple[int, str]] = []
    for reference in parsed.reads:
        name = reference.name
        if name in places:
            continue
        if name in where_read:
            message = f"The expression reads ${name}, which this place does not have: {where_read[name]}"
        elif name in NOT_RUN:
            message = NOT_RUN[name]
        elif name in FUNCTIONS:
            continue
        else:
            message = (
                f"The expression reads ${_cut(name)}, which is not a variable here; this place reads "
                + ", ".join("$" + known for known in sorted(places, key=_variable_order))
            )
        found.append((reference.offset, message))
    for reference in parsed.calls:
        name = reference.name
        if name in FUNCTIONS:
            continue
        message = NOT_RUN.get(name) or (
            f"${_cut(name)}() is not a function: the functions are JSONata's and Step Functions' "
            "($partition, $range, $hash, $random, $uuid, $parse)"
        )
        found.append((reference.offset, message))
    found.sort(key=lambda item: item[0])
    return found


def _variable_order(name: str) -> tuple[int, str]:
    known = (*EVERY_PLACE, OUTPUT, LOOP_ITEM, LOOP_INDEX, CAUGHT_ERROR)
    return (known.index(name), name) if name in known else (len(known), name)


def _cut(name: str) -> str:
    return name if len(name) <= _SHOWN else name[: _SHOWN - 1] + "…"
