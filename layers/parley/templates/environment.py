"""The one Liquid environment of the runtime, and the render context that enforces its limits.

reasoning-format.md, "The template", "Tags", "Filters" and "Limits"; interaction-format.md,
"Templates and pointers". python-liquid 2 is the engine; this module narrows it:

* only the tags "Tags" lists (plus python-liquid's internal ``content``, ``output`` and ``illegal``
  pseudo-tags, without which nothing parses, and the ``system`` block of "The system block", which
  the save-time checks allow in reasoning templates only) and only the filters "Filters" lists;
* a missing value stops the render, except in a condition of ``if``/``elsif``/``unless`` and on the
  left of ``default`` (``FalsyStrictUndefined`` semantics, made exact: the paths in those two places
  are marked when the template is compiled, and every other path raises where it is read, with the
  JSON Pointer of the missing input field);
* only a value's own keys are readable (``input.constructor`` is a missing field), plus ``size`` and,
  on lists, ``first`` and ``last``; the engine's built-in ``now``/``today`` (the server's clock) are
  gone, so those names come from the run's data only;
* the render limits python-liquid lacks: a wall-clock deadline (checked at every node, every filter
  and every write), a budget of characters-or-items that filter results and ranges charge, a cap on
  the rendered text and on the size of numbers that filters compute.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from io import StringIO
from typing import Any, Final, TextIO

from liquid import Environment, Mode, RenderContext
from liquid.ast import BlockNode, ConditionalBlockNode, Node
from liquid.builtin.content import ContentNode, Literal
from liquid.builtin.expressions import FilteredExpression, Path, tokenize
from liquid.builtin.expressions.primitive import RangeLiteral
from liquid.builtin.illegal import Illegal
from liquid.builtin.output import Output, OutputNode
from liquid.builtin.tags.assign_tag import AssignTag
from liquid.builtin.tags.case_tag import CaseTag
from liquid.builtin.tags.comment_tag import CommentTag
from liquid.builtin.tags.cycle_tag import CycleTag
from liquid.builtin.tags.decrement_tag import DecrementTag
from liquid.builtin.tags.echo_tag import EchoNode, EchoTag
from liquid.builtin.tags.for_tag import BreakTag, ContinueTag, ForTag
from liquid.builtin.tags.if_tag import IfNode, IfTag
from liquid.builtin.tags.increment_tag import IncrementTag
from liquid.builtin.tags.inline_comment_tag import InlineCommentTag
from liquid.builtin.tags.liquid_tag import LiquidTag
from liquid.builtin.tags.tablerow_tag import TablerowTag
from liquid.builtin.tags.unless_tag import UnlessNode, UnlessTag
from liquid.exceptions import (
    FilterValueError,
    LiquidError,
    LiquidSyntaxError,
    LiquidTypeError,
    UndefinedError,
)
from liquid.expression import Expression
from liquid.parser import get_parser
from liquid.stream import TokenStream
from liquid.tag import Tag
from liquid.template import BoundTemplate
from liquid.token import TOKEN_DOT, TOKEN_EOF, TOKEN_EXPRESSION, TOKEN_OUTPUT, TOKEN_TAG, TOKEN_WORD, Token
from liquid.undefined import UNDEFINED, FalsyStrictUndefined
from liquid.utils import ReadOnlyChainMap

from parley.templates.filters import available_filters, is_structure, to_text

# reasoning-format.md, "Limits".
TEMPLATE_MAX_CHARS: Final = 65_536
NAMES_MAX: Final = 1_000
RENDER_SECONDS: Final = 0.2
CHARGE_BUDGET: Final = 5_000_000
OUTPUT_MAX_CHARS: Final = 200_000
#: How deeply tags may nest. The spec refuses "a template that nests tags or parentheses more deeply
#: than the engine can parse"; python-liquid renders by recursion (several frames per level), so the
#: engine's limit is set where rendering stays well inside Python's recursion limit.
NESTING_MAX: Final = 64
#: Numbers a filter computes may have at most this many bits, so ``times`` in a loop cannot build an
#: integer with millions of digits between two checks of the deadline.
NUMBER_MAX_BITS: Final = 4096

#: The tags "Tags" lists, by the names templates use them with (``raw`` is handled by the lexer).
AVAILABLE_TAGS: Final = frozenset(
    {
        "assign",
        "if",
        "unless",
        "case",
        "for",
        "break",
        "continue",
        "cycle",
        "increment",
        "decrement",
        "echo",
        "liquid",
        "raw",
        "comment",
        "#",
        "tablerow",
    }
)
#: Tags that only exist inside or at the end of an available block tag.
INNER_TAGS: Final = frozenset(
    {
        "elsif",
        "else",
        "when",
        "endif",
        "endunless",
        "endcase",
        "endfor",
        "endtablerow",
        "endcomment",
        "endraw",
        "endsystem",
    }
)


class RenderLimitReached(LiquidError):
    """A render limit of "Limits" was reached: the run ends ``invalid_input``."""


class MissingValueError(UndefinedError):
    """A path names a value the data does not have; ``pointer`` is ``/input/...`` for an input field."""

    def __init__(self, message: str, *, token: Token | None, pointer: str | None) -> None:
        super().__init__(message, token=token)
        self.pointer = pointer


class StructureAmongTextError(LiquidError):
    """An output rendered a list or an object inside text where only text may be sent."""


@dataclass
class RenderBudget:
    """The limits of one render: a deadline, the characters-or-items left to charge, and policy."""

    deadline: float
    remaining: int = CHARGE_BUDGET
    refuse_structures: bool = False
    input_value: object = None
    #: Whether a ``{% system %}`` block may render (reasoning templates), and what it rendered.
    system_allowed: bool = False
    system_text: str | None = None
    system_limit: int = OUTPUT_MAX_CHARS

    @classmethod
    def start(cls, *, seconds: float = RENDER_SECONDS, budget: int = CHARGE_BUDGET) -> RenderBudget:
        """A budget whose time runs from now.

        Time is the CPU time of the rendering thread: rendering does no I/O, so that is the time
        the render itself takes, and a busy machine or another thread's work cannot stop a render
        that is not expensive.
        """
        return cls(deadline=time.thread_time() + seconds, remaining=budget)

    def tick(self) -> None:
        """Stop the render once its time is up (python-liquid has no time limit of its own)."""
        if time.thread_time() > self.deadline:
            raise RenderLimitReached(
                f"the template took longer than {int(RENDER_SECONDS * 1000)} ms to render", token=None
            )

    def charge(self, amount: int) -> None:
        """Charge characters or items; past the budget the render stops."""
        self.remaining -= amount
        if self.remaining < 0:
            raise RenderLimitReached(
                f"the render needs more than {CHARGE_BUDGET:,} characters or items", token=None
            )

    def ensure(self, amount: int) -> None:
        """Refuse up front work whose result would exceed what is left of the budget."""
        if amount > self.remaining:
            raise RenderLimitReached(
                f"the render needs more than {CHARGE_BUDGET:,} characters or items", token=None
            )


def _size_of(value: object) -> int:
    if isinstance(value, (str, list, tuple, dict)):
        return max(len(value), 1)
    if isinstance(value, range):
        return max(value.stop - value.start, 1)
    return 1


def _check_number(value: object) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > NUMBER_MAX_BITS:
        raise RenderLimitReached("a filter computed a number too large to render", token=None)


def _precheck(name: str, left: object, args: tuple[object, ...], budget: RenderBudget) -> None:
    """Refuse the two filters whose result can grow far beyond their input before they build it."""
    if name == "replace" and isinstance(left, str) and args:
        old = to_text(args[0])
        new = to_text(args[1]) if len(args) > 1 else ""
        if len(new) > len(old):
            count = left.count(old) if old else len(left) + 1
            budget.ensure(len(left) + count * (len(new) - len(old)))
    elif name == "join" and isinstance(left, (list, tuple, range)) and args:
        budget.ensure(len(to_text(args[0])) * max(_size_of(left) - 1, 0))


class ParleyRenderContext(RenderContext):
    """A render context that reads only the run's data and keeps the render within its limits."""

    __slots__ = ("budget",)

    def __init__(
        self,
        template: BoundTemplate,
        *,
        globals: Mapping[str, object] | None = None,  # python-liquid's keyword
        budget: RenderBudget | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(template, globals=globals, **kwargs)
        self.budget = budget if budget is not None else RenderBudget.start()
        # Without the engine's built-in namespace: its `now` and `today` read the server's clock.
        self.scope = ReadOnlyChainMap(self.locals, self.globals, self.counters)

    # python-liquid reads `disabled_tags` once for every node it renders (`Node.render`), which makes
    # it the one place a deadline can be checked for every node, including each turn of a loop.
    @property
    def disabled_tags(self) -> list[str]:
        self.budget.tick()
        return []

    @disabled_tags.setter
    def disabled_tags(self, _value: list[str]) -> None:
        """No tag is ever disabled: the environment has only the available tags."""

    def get(self, path: list[object], *, token: Token | None, default: object = UNDEFINED) -> object:
        """Resolve ``path``; a missing value raises here unless the path may read one."""
        root = path[0]
        if not isinstance(root, str):
            return self._missing(path[:1], token, default, None)
        try:
            obj = self.scope[root]
        except (KeyError, TypeError, IndexError):
            return self._missing(path[:1], token, default, None)
        root_value = obj
        for index, segment in enumerate(path[1:], start=2):
            try:
                obj = self.get_item(obj, segment)
            except (KeyError, TypeError, IndexError):
                return self._missing(path[:index], token, default, root_value)
        return obj

    def _missing(
        self, path: list[object], token: Token | None, default: object, root_value: object
    ) -> object:
        if default is LENIENT:
            return None
        if default is not UNDEFINED:
            return default
        input_value = self.budget.input_value
        if root_value is not None and root_value is input_value and len(path) > 1:
            pointer = "/input/" + "/".join(_pointer_token(_segment_text(s)) for s in path[1:])
            field_name = _shorten(_path_text(path[1:]))
            raise MissingValueError(f"the input has no field '{field_name}'", token=token, pointer=pointer)
        raise MissingValueError(f"'{_shorten(_path_text(path))}' is not defined", token=token, pointer=None)

    def get_item(self, obj: Any, key: Any) -> Any:
        """Only a value's own keys, its ``size``, and a list's ``first`` and ``last``."""
        if isinstance(obj, dict):
            if key in obj:
                return obj[key]
            if key == "size":
                return len(obj)
            raise KeyError(key)
        if isinstance(obj, (list, tuple)):
            if isinstance(key, int) and not isinstance(key, bool):
                return obj[key]
            if key == "size":
                return len(obj)
            if key == "first":
                return obj[0]
            if key == "last":
                return obj[-1]
            raise KeyError(key)
        if isinstance(obj, str):
            if key == "size":
                return len(obj)
            raise KeyError(key)
        if isinstance(obj, (int, float, bool)) or obj is None:
            raise KeyError(key)
        return super().get_item(obj, key)

    def filter(self, name: str, token: Token | None) -> Callable[..., object]:
        """The filter, wrapped so that it checks the deadline and charges its result."""
        func = super().filter(name, token)
        budget = self.budget

        def charged(left: object, *args: object, **kwargs: object) -> object:
            budget.tick()
            _precheck(name, left, args, budget)
            try:
                result = func(left, *args, **kwargs)
            except LiquidError as exc:
                if exc.token is None:
                    exc.token = token
                message = str(exc.message)
                if not message.startswith(name):
                    exc.args = (f"{name}: {message}", *exc.args[1:])
                raise
            except TypeError as exc:
                raise LiquidTypeError(f"{name}: {exc}", token=token) from exc
            except RecursionError as exc:
                raise RenderLimitReached(f"{name}: the value nests too deeply", token=token) from exc
            except (ArithmeticError, ValueError, LookupError, AttributeError) as exc:
                raise FilterValueError(f"{name}: {exc}", token=token) from exc
            try:
                _check_number(result)
                budget.charge(_size_of(result))
            except RenderLimitReached as exc:
                exc.token = token
                raise
            return result

        return charged

    def raise_for_loop_limit(self, length: int = 1) -> None:
        """Each loop checks the deadline as it starts (ranges were charged when evaluated)."""
        self.budget.tick()


def _segment_text(segment: object) -> str:
    """A path segment as a key: a computed list or object key reads as its text, as in JavaScript."""
    return segment if isinstance(segment, str) else to_text(segment)


def _path_text(path: Iterable[object]) -> str:
    parts: list[str] = []
    for segment in path:
        if isinstance(segment, int) and not isinstance(segment, bool):
            parts.append(f"[{segment}]")
        else:
            parts.append(("." if parts else "") + _segment_text(segment))
    return "".join(parts)


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pointer_token(text: str) -> str:
    return text.replace("~", "~0").replace("/", "~1")


LENIENT: Final = object()
"""The ``default`` a lenient path passes to ``get``: a missing value reads as nil."""


class LenientPath(Path):
    """A path in a condition of ``if``/``elsif``/``unless`` or on the left of ``default``."""

    __slots__ = ()

    def evaluate(self, context: RenderContext) -> object:
        return context.get(
            [p.evaluate(context) if isinstance(p, Path) else p for p in self.path],
            token=self.token,
            default=LENIENT,
        )


class ChargedRangeLiteral(RangeLiteral):
    """A range charges its length to the budget before anything iterates it."""

    __slots__ = ()

    def evaluate(self, context: RenderContext) -> range:
        value = super().evaluate(context)
        if isinstance(context, ParleyRenderContext):
            try:
                context.budget.charge(max(value.stop - value.start, 0))
            except RenderLimitReached as exc:
                exc.token = self.token
                raise
        return value


def _output_text(value: object, context: RenderContext, token: Token) -> str:
    if isinstance(context, ParleyRenderContext) and context.budget.refuse_structures and is_structure(value):
        raise StructureAmongTextError("renders a structure among text", token=token)
    return to_text(value)


#: python-liquid's expression keywords. Its tokenizer makes them keywords even after a dot, so
#: ``input.limit`` (the spec's own example) would not parse; after a dot they are names.
EXPRESSION_KEYWORDS: Final = frozenset(
    {
        "true",
        "false",
        "nil",
        "null",
        "empty",
        "blank",
        "and",
        "or",
        "contains",
        "not",
        "in",
        "offset",
        "limit",
        "reversed",
        "cols",
        "continue",
        "with",
        "for",
        "as",
        "if",
        "else",
        "required",
    }
)


def tokenize_expression(source: str, parent_token: Token) -> Iterator[Token]:
    """python-liquid's expression tokenizer, reading a keyword after a dot as a property name."""
    previous = ""
    for token in tokenize(source, parent_token):
        if previous == TOKEN_DOT and token.kind == token.value and token.value in EXPRESSION_KEYWORDS:
            token = token._replace(kind=TOKEN_WORD)
        previous = token.kind
        yield token


class ParleyTokenStream(TokenStream):
    """A token stream whose tags read their expressions with :func:`tokenize_expression`."""

    def into_inner(self, *, tag: Token | None = None, eat: bool = True) -> TokenStream:
        token = self.current
        if token.kind != TOKEN_EXPRESSION:
            return super().into_inner(tag=tag, eat=eat)  # raises python-liquid's own syntax error
        if eat:
            next(self)
        return TokenStream(tokenize_expression(token.value, parent_token=token))


class ParleyOutputNode(OutputNode):
    """``{{ expression }}``: a list renders as its items, an object as ``[object Object]``."""

    __slots__ = ()

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        return buffer.write(_output_text(self.expression.evaluate(context), context, self.token))


class ParleyOutput(Output):
    node_class = ParleyOutputNode

    def parse(self, stream: TokenStream) -> OutputNode:
        token = stream.eat(TOKEN_OUTPUT)
        expr_token = stream.expect(TOKEN_EXPRESSION)
        expression = FilteredExpression.parse(
            self.env, TokenStream(tokenize_expression(expr_token.value, expr_token))
        )
        return self.node_class(token, expression)


class ParleyEchoNode(EchoNode):
    """``{% echo expression %}``, rendered as an output is."""

    __slots__ = ()

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        return buffer.write(_output_text(self.expression.evaluate(context), context, self.token))


class ParleyEcho(EchoTag):
    node_class = ParleyEchoNode


class ParleyLiquidTag(LiquidTag):
    """``{% liquid %}``, whose lines are read with the same token stream as the template's tags."""

    def parse(self, stream: TokenStream) -> Node:
        token = stream.eat(TOKEN_TAG)
        if stream.current.kind == TOKEN_EOF:
            return self.node_class(token, None, block=BlockNode(token, []))
        if stream.current.kind == TOKEN_TAG:
            return self.node_class(token, None, block=get_parser(self.env).parse_block(stream, end=()))
        expression = stream.expect(TOKEN_EXPRESSION)
        lines = ParleyTokenStream(
            self._tokenize(expression.value, token=expression), block_depth_carry=stream.block_depth
        )
        return self.node_class(token, expression, block=get_parser(self.env).parse_block(lines, end=()))


SYSTEM_TAG: Final = "system"


class SystemNode(Node):
    """``{% system %}…{% endsystem %}``: the system instructions of a reasoning template.

    reasoning-format.md, "The system block": the text between the tags is the system instructions,
    everything outside it the message. It renders in document order (an ``assign`` inside it is
    seen after it) into its own text, which the budget keeps. Save-time checks allow it only in a
    reasoning template, once, at the top level.
    """

    __slots__ = ("block",)

    def __init__(self, token: Token, block: BlockNode) -> None:
        super().__init__(token)
        self.block = block
        self.blank = False

    def __str__(self) -> str:
        return f"{{% system %}}{self.block}{{% endsystem %}}"

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        if not isinstance(context, ParleyRenderContext) or not context.budget.system_allowed:
            raise LiquidSyntaxError("a system block belongs only in a reasoning template", token=self.token)
        budget = context.budget
        if budget.system_text is not None:
            raise LiquidSyntaxError("a template has at most one system block", token=self.token)
        instructions = LimitedOutput(budget, budget.system_limit)
        self.block.render(context, instructions)
        budget.system_text = instructions.getvalue()
        return 0

    def children(self, static_context: RenderContext, *, include_partials: bool = True) -> Iterable[Node]:
        yield self.block


class SystemTag(Tag):
    """The ``system`` block tag; its tags take no arguments."""

    name = SYSTEM_TAG
    end = "endsystem"
    block = True

    def parse(self, stream: TokenStream) -> Node:
        token = stream.eat(TOKEN_TAG)
        if stream.current.kind == TOKEN_EXPRESSION:
            raise LiquidSyntaxError("the system tag takes no arguments", token=stream.current)
        block = get_parser(self.env).parse_block(stream, (self.end,))
        stream.expect(TOKEN_TAG, value=self.end)
        if stream.peek.kind == TOKEN_EXPRESSION:
            raise LiquidSyntaxError("the endsystem tag takes no arguments", token=stream.peek)
        return SystemNode(token, block)


TAG_CLASSES: Final[tuple[type[Tag], ...]] = (
    # python-liquid's internal pseudo-tags: template text, `{{ }}`, and the node for unknown tags.
    Literal,
    ParleyOutput,
    Illegal,
    # "Tags": available.
    AssignTag,
    IfTag,
    UnlessTag,
    CaseTag,
    ForTag,
    BreakTag,
    ContinueTag,
    CycleTag,
    IncrementTag,
    DecrementTag,
    ParleyEcho,
    ParleyLiquidTag,
    CommentTag,
    InlineCommentTag,
    TablerowTag,
    # "The system block": only reasoning templates may use it (checked when saved).
    SystemTag,
)


class LimitedOutput(StringIO):
    """The rendered text, at most ``limit`` characters; each write also checks the deadline."""

    def __init__(self, budget: RenderBudget, limit: int = OUTPUT_MAX_CHARS) -> None:
        super().__init__()
        self.budget = budget
        self.limit = limit
        self.size = 0

    def write(self, text: str) -> int:
        self.size += len(text)
        if self.size > self.limit:
            raise RenderLimitReached(
                f"the rendered text is longer than {self.limit:,} characters", token=None
            )
        self.budget.tick()
        return super().write(text)


class ParleyEnvironment(Environment):
    """The runtime's Liquid: the available tags and filters, strict about missing values."""

    block_nesting_limit = NESTING_MAX
    context_depth_limit = NESTING_MAX + 8

    def __init__(self) -> None:
        super().__init__(
            tolerance=Mode.STRICT,
            undefined=FalsyStrictUndefined,
            strict_filters=True,
            autoescape=False,
        )

    def setup_tags_and_filters(self, *, extra: bool = False) -> None:
        """Only the tags and filters the format pages list; ``extra`` is ignored."""
        for tag in TAG_CLASSES:
            self.add_tag(tag)
        for name, func in available_filters().items():
            self.add_filter(name, func)

    def _parse(self, source: str) -> list[Node]:
        return get_parser(self).parse(ParleyTokenStream(self.tokenizer()(source)))

    def from_string(
        self,
        source: str,
        name: str = "",
        path: Any = None,
        globals: Mapping[str, object] | None = None,
        matter: Mapping[str, object] | None = None,
    ) -> BoundTemplate:
        template = super().from_string(source, name=name, path=path, globals=globals, matter=matter)
        _mark(template)
        return template


def iter_nodes(template: BoundTemplate) -> Iterator[tuple[Node, int, tuple[Node, ...]]]:
    """Every node of the template with its depth and its ancestors, without recursion."""
    static_context = RenderContext(template)
    stack: list[tuple[Node, int, tuple[Node, ...]]] = [(n, 1, ()) for n in reversed(template.nodes)]
    while stack:
        node, depth, ancestors = stack.pop()
        yield node, depth, ancestors
        children = list(node.children(static_context, include_partials=False))
        lineage = (*ancestors, node)
        stack.extend((child, depth + 1, lineage) for child in reversed(children))


def iter_expressions(expression: Expression) -> Iterator[tuple[Expression, int]]:
    """The expression and every expression inside it, with its depth, without recursion."""
    stack: list[tuple[Expression, int]] = [(expression, 1)]
    while stack:
        expr, depth = stack.pop()
        yield expr, depth
        stack.extend((child, depth + 1) for child in expr.children())


def _mark(template: BoundTemplate) -> None:
    """Mark the paths that may read a missing value, and make every range charge its length.

    The marks change the class of parsed expression objects (same slots, one overridden method), so
    rendering needs no lookup at all to know whether a path is lenient.
    """
    for node, _depth, ancestors in iter_nodes(template):
        conditions: list[Expression] = []
        if isinstance(node, (IfNode, UnlessNode)) or (
            isinstance(node, ConditionalBlockNode)
            and ancestors
            and isinstance(ancestors[-1], (IfNode, UnlessNode))
        ):
            conditions.extend(node.expressions())
        for condition in conditions:
            for expr, _ in iter_expressions(condition):
                if type(expr) is Path:
                    expr.__class__ = LenientPath
        for top in node.expressions():
            for expr, _ in iter_expressions(top):
                if type(expr) is RangeLiteral:
                    expr.__class__ = ChargedRangeLiteral
                elif (
                    isinstance(expr, FilteredExpression)
                    and expr.filters
                    and expr.filters[0].name == "default"
                    and type(expr.left) is Path
                ):
                    expr.left.__class__ = LenientPath


@functools.cache
def liquid_environment() -> ParleyEnvironment:
    """The runtime's one Liquid environment, built on first use."""
    return ParleyEnvironment()


@functools.lru_cache(maxsize=512)
def compile_template(source: str) -> BoundTemplate:
    """Parse ``source`` with the runtime's environment (cached: a template never changes once parsed).

    Raises python-liquid's ``LiquidError`` (or ``RecursionError`` wrapped in one) when it does not
    compile; :func:`parley.templates.checks.check_template` turns that into a problem with its line.
    """
    return liquid_environment().from_string(source)


def single_output(template: BoundTemplate, *, whitespace_around: bool) -> OutputNode | None:
    """The template's one ``{{ expression }}`` when it is nothing else, else ``None``.

    With ``whitespace_around``, text of only whitespace before and after it is allowed too (a typed
    argument such as ``' {{ input.limit }} '`` still sends the value itself).
    """
    found: OutputNode | None = None
    for node in template.nodes:
        if isinstance(node, ContentNode) and whitespace_around and (not node.text or node.text.isspace()):
            continue
        if found is None and isinstance(node, OutputNode) and node.token.kind == TOKEN_OUTPUT:
            found = node
            continue
        return None
    return found
