"""Rendering templates as text, reasoning prompts with their system block, and typed tool arguments.

reasoning-format.md, "The template", "The system block" and "Limits" (the time limit is the CPU time
of the rendering thread); interaction-format.md, "Sending through a tool"
(the typed arguments of ``deliver.with``, ``call.with``, ``replies.with`` and ``tell.with``) and
"How a run ends". Every failure is one exception, :class:`RenderFailure`:

* a missing input field ends the run ``invalid_input`` pointing at ``/input/<field>`` (``pointer``);
* a render limit, or a value a filter refuses (``money`` of a word), ends it ``invalid_input``;
* a structure among text in a tool argument (``structure_among_text``) ends it ``conflict`` as
  ``unworkable``.

A rendered value is text and is never read as a template again: Liquid writes values to the output,
it never parses them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final, TypeAlias

from liquid.exceptions import LiquidError, LiquidInterrupt, LiquidSyntaxError
from liquid.template import BoundTemplate
from liquid.token import Token
from liquid.undefined import Undefined

from parley.errors import RenderFailure as RenderFailure
from parley.templates.environment import (
    OUTPUT_MAX_CHARS,
    LimitedOutput,
    MissingValueError,
    ParleyRenderContext,
    RenderBudget,
    StructureAmongTextError,
    compile_template,
    single_output,
)

JSON: TypeAlias = Any
"""A JSON value: dict, list, str, int, float, bool or None."""


def render_text(
    template: str | BoundTemplate,
    data: Mapping[str, object],
    *,
    first_line: int = 1,
    refuse_structures: bool = False,
    max_chars: int = OUTPUT_MAX_CHARS,
) -> str:
    """Render ``template`` with ``data`` (``input``, ``today``, ``now`` and the place's other names).

    With ``refuse_structures``, an output that is a list or an object fails instead of rendering as
    its items or ``[object Object]``.
    """
    compiled = _compile(template, first_line) if isinstance(template, str) else template
    budget = _budget(data, refuse_structures=refuse_structures)
    return _render(compiled, data, budget, first_line=first_line, max_chars=max_chars)


def render_prompt(
    template: str | BoundTemplate, data: Mapping[str, object], *, first_line: int = 1
) -> tuple[str | None, str]:
    """Render a reasoning template: ``(system instructions or None, message)``.

    reasoning-format.md, "The system block": the text of the one ``{% system %}`` block is the system
    instructions, everything else the message, each at most 200,000 characters. The template must
    render some text outside the block: a message of only whitespace fails at the template's first line.
    """
    compiled = _compile(template, first_line) if isinstance(template, str) else template
    budget = _budget(data, refuse_structures=False)
    budget.system_allowed = True
    message = _render(compiled, data, budget, first_line=first_line, max_chars=OUTPUT_MAX_CHARS)
    if not message.strip():
        raise RenderFailure(first_line, "the template renders no text outside the system block")
    return budget.system_text, message


def render_typed(value: JSON, data: Mapping[str, object], *, first_line: int = 1) -> JSON:
    """Render a tool's arguments as typed as written ("Sending through a tool").

    Numbers, booleans and null are sent as written; lists and objects are rendered item by item; a
    string that is exactly one ``{{ expression }}`` sends the value the expression reads; any other
    string is rendered as text, where a list or an object fails as a structure among text.
    """
    budget = _budget(data, refuse_structures=True)
    return _typed(value, data, budget, first_line)


def _budget(data: Mapping[str, object], *, refuse_structures: bool) -> RenderBudget:
    budget = RenderBudget.start()
    budget.refuse_structures = refuse_structures
    budget.input_value = data.get("input")
    return budget


def _typed(value: JSON, data: Mapping[str, object], budget: RenderBudget, first_line: int) -> JSON:
    if isinstance(value, str):
        template = _compile(value, first_line)
        output = single_output(template, whitespace_around=True)
        if output is None:
            return _render(template, data, budget, first_line=first_line, max_chars=OUTPUT_MAX_CHARS)
        context = ParleyRenderContext(template, globals=data, budget=budget)
        try:
            result = output.expression.evaluate(context)
        except Exception as exc:  # every failure becomes a RenderFailure
            raise render_failure(exc, first_line, output.token) from exc
        return _as_json(result, first_line, output.token)
    if isinstance(value, list):
        return [_typed(item, data, budget, first_line) for item in value]
    if isinstance(value, dict):
        return {key: _typed(item, data, budget, first_line) for key, item in value.items()}
    return value


def _compile(source: str, first_line: int) -> BoundTemplate:
    try:
        return compile_template(source)
    except Exception as exc:
        raise render_failure(exc, first_line, None) from exc


def _render(
    compiled: BoundTemplate,
    data: Mapping[str, object],
    budget: RenderBudget,
    *,
    first_line: int,
    max_chars: int,
) -> str:
    context = ParleyRenderContext(compiled, globals=data, budget=budget)
    buffer = LimitedOutput(budget, max_chars)
    # The nodes are rendered here rather than by `render_with_context`, which would add a `partial`
    # name to the scope that no template may read.
    for node in compiled.nodes:
        try:
            node.render(context, buffer)
        except LiquidInterrupt as exc:
            failure = LiquidSyntaxError(f"'{exc}' is used outside a loop", token=node.token)
            raise render_failure(failure, first_line, node.token) from exc
        except Exception as exc:  # every failure becomes a RenderFailure
            raise render_failure(exc, first_line, node.token) from exc
    return buffer.getvalue()


def _as_json(value: object, first_line: int, token: Token) -> JSON:
    """The value an expression read, as JSON (a tuple is a list, a range its numbers)."""
    try:
        return json.loads(json.dumps(value, default=_json_default, allow_nan=False))
    except Exception as exc:
        raise render_failure(exc, first_line, token) from exc


def _json_default(value: object) -> object:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, range):
        return list(value)
    if isinstance(value, Undefined):
        return str(value)  # raises the undefined's own error
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")


def render_failure(exc: BaseException, first_line: int, fallback: Token | None) -> RenderFailure:
    """One :class:`RenderFailure` for whatever stopped the render, with its line when known.

    The save-time checks word a problem they find before any run with it too, so that a literal
    argument the filter refuses reads the same when saved as when run (``parley.templates.checks``).
    """
    if isinstance(exc, RenderFailure):
        return exc
    if isinstance(exc, LiquidError):
        token = exc.token or fallback
        message = str(exc.message) if exc.message is not None else type(exc).__name__
        if isinstance(exc.__cause__, RecursionError):
            message = "the template nests too deeply"
        message = _plain_comparison(message)
        return RenderFailure(
            _line(token, first_line),
            message,
            exc.pointer if isinstance(exc, MissingValueError) else None,
            structure_among_text=isinstance(exc, StructureAmongTextError),
        )
    if isinstance(exc, RecursionError):
        return RenderFailure(_line(fallback, first_line), "the template or its data nests too deeply")
    if isinstance(exc, MemoryError):
        return RenderFailure(_line(fallback, first_line), "the render needs more memory than it may use")
    if isinstance(exc, TypeError) and "unhashable" in str(exc):
        return RenderFailure(
            _line(fallback, first_line), "a condition looks for a list or an object among keys"
        )
    if isinstance(exc, ValueError) and "JSON" in str(exc):
        return RenderFailure(_line(fallback, first_line), "renders a number JSON cannot hold")
    return RenderFailure(_line(fallback, first_line), f"the template cannot render this value: {exc}")


_COMPARISON: Final = re.compile(
    r"'(?P<op><' and '>|in' and 'contains)' are not supported between '(?P<left>\w+)' and '(?P<right>\w+)'"
)
_KINDS: Final = {
    "int": "a number",
    "float": "a number",
    "Decimal": "a number",
    "str": "text",
    "list": "a list",
    "tuple": "a list",
    "range": "a range",
    "dict": "an object",
    "NoneType": "nil",
    "bool": "true or false",
}


def _plain_comparison(message: str) -> str:
    """python-liquid's comparison errors in the spec's words (a number, text, a list, an object)."""
    match = _COMPARISON.search(message)
    if match is None:
        return message
    left = _KINDS.get(match["left"], match["left"])
    right = _KINDS.get(match["right"], match["right"])
    if match["op"].startswith("<"):
        return f"a condition compares {left} with {right}"
    return f"a condition looks for {right} in {left}"


def _line(token: Token | None, first_line: int) -> int | None:
    if token is None or token.start_index < 0:
        return None
    return first_line + token.source.count("\n", 0, token.start_index)
