"""Save-time checks of a template, each problem with its line in the whole document.

reasoning-format.md, "The template", "Tags", "Filters" and "Limits"; interaction-format.md,
"Templates and pointers" and "Sending through a tool". A template is refused when it does not
compile, holds ``${``, uses a tag or filter that is not available, passes a limit, reads a name its
place does not read, reads an ``input`` field the input schema does not allow, or renders a
structure inside a longer text.

A filter given arguments it does not take is refused too, and so is one whose arguments are all written
as literals the filter refuses (``| clip: -1``, issue 30): that template would fail at every run. The
filter itself is asked, through the run's own code (``Filter.evaluate`` in a render context of the
runtime), with a few values of each kind on its left; the arguments are refused when no value is taken
and the filter named its arguments as the reason, in the words the run would use (``render_failure``).
No rule is written twice, so the check cannot drift from the filter.

python-liquid reports an unknown filter only when it renders, so filters are checked here by name
from ``template.analyze()``, which also gives each variable with its span. Its ``globals`` are the
variables whose root is not in scope where they are read; a name the template creates anywhere
(``assign``, ``increment``, ``decrement``, and the loop variables in their own block) is its own.

A read the page allows may still be a mistake: :func:`input_warnings` names each ``input.<field>`` that
the input schema does not list, though it allows it (no ``additionalProperties: false``), with the
listed field it probably meant, for the definition's warnings.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from liquid.builtin.expressions import FilteredExpression, KeywordArgument, Nil, Path, PositionalArgument
from liquid.builtin.expressions import Literal as LiteralExpression
from liquid.builtin.expressions.filtered import Filter
from liquid.builtin.expressions.primitive import Blank, Empty, RangeLiteral
from liquid.builtin.output import OutputNode
from liquid.builtin.tags.for_tag import ForNode
from liquid.builtin.tags.tablerow_tag import TablerowNode
from liquid.exceptions import BlockNestingError, FilterArgumentError, LiquidError
from liquid.expression import Expression
from liquid.static_analysis import Variable
from liquid.template import BoundTemplate
from liquid.token import TOKEN_DOC, TOKEN_EXPRESSION, TOKEN_TAG, Token

from parley.templates.environment import (
    AVAILABLE_TAGS,
    INNER_TAGS,
    NAMES_MAX,
    NESTING_MAX,
    SYSTEM_TAG,
    TEMPLATE_MAX_CHARS,
    ParleyRenderContext,
    RenderBudget,
    SystemNode,
    compile_template,
    iter_expressions,
    iter_nodes,
    liquid_environment,
    single_output,
)
from parley.templates.render import render_failure

#: How deeply one expression may nest brackets and ranges (``a[b[c[...]]]``, ``((1..2)..3)``).
EXPRESSION_NESTING_MAX: Final = 32
#: How alike a name must be to a listed one (``difflib`` ratio) to be named as what it probably meant.
CLOSE_ENOUGH: Final = 0.7

_STRING_LITERAL: Final = re.compile(r"\"[^\"]*\"|'[^']*'")
_NAME: Final = re.compile(r"[^\W\d][\w-]*")


@dataclass(frozen=True)
class PlaceNames:
    """The names a template place may read (interaction-format.md, "Templates and pointers").

    ``roots`` maps each name to the second segments it may be read with: ``None`` for any sub-path
    (``input``), an empty set for the name itself only (``today``), or the allowed ones
    (``sent``: ``conversation`` and ``id``). ``label`` names the place in messages ("the message").
    ``structures`` are roots whose value is a list or an object (``answer_schema``).
    """

    roots: Mapping[str, frozenset[str] | None]
    label: str = "the template"
    structures: frozenset[str] = field(default_factory=frozenset)

    def readable(self) -> str:
        """``input, today, now`` / ``to, sent.conversation, sent.id``: the names, for messages."""
        names: list[str] = []
        for root, allowed in self.roots.items():
            if allowed:
                names.extend(f"{root}.{name}" for name in sorted(allowed))
            else:
                names.append(root)
        return ", ".join(names)


_SENT: Final = frozenset({"conversation", "id"})
_RUN: Final[dict[str, frozenset[str] | None]] = {"input": None, "today": frozenset(), "now": frozenset()}


def place_names(place: str) -> PlaceNames:
    """The names each place of "Templates and pointers" reads, by the place's name in the document.

    ``to``, ``from``, ``message``, ``call.with`` and ``template`` (a reasoning template) read
    ``input``, ``today`` and ``now``; ``deliver.with``, ``replies.conversation``, ``replies.with``
    and ``tell.with`` read what the table gives them.
    """
    if place in ("to", "from"):
        return PlaceNames(dict(_RUN), label=f"`{place}`")
    if place in ("message", "template", "call.with"):
        label = {"message": "the message", "template": "the template", "call.with": "`call.with`"}[place]
        return PlaceNames(dict(_RUN), label=label)
    if place == "deliver.with":
        request = ("to", "message", "run_id", "function", "expires_at")
        roots: dict[str, frozenset[str] | None] = {**_RUN, **{name: frozenset() for name in request}}
        roots["answer_schema"] = None
        return PlaceNames(roots, label="`deliver.with`", structures=frozenset({"answer_schema"}))
    if place == "replies.conversation":
        return PlaceNames({"to": frozenset(), "sent": _SENT}, label="`replies.conversation`")
    if place == "replies.with":
        roots = {"to": frozenset(), "sent": _SENT, "conversation": frozenset(), "since": frozenset()}
        return PlaceNames(roots, label="`replies.with`")
    if place == "tell.with":
        return PlaceNames({"to": frozenset(), "sent": _SENT, "message": frozenset()}, label="`tell.with`")
    raise ValueError(f"no template place is called {place!r}")


def check_template(
    source: str,
    *,
    place: PlaceNames,
    input_schema: Mapping[str, Any] | None,
    first_line: int,
    whole_value: bool = False,
    refuse_structures: bool = True,
    system_block: bool = False,
) -> list[tuple[int, str]]:
    """Every problem of ``source`` as ``(document line, message)``, in line order.

    ``first_line`` is the document line the template text starts on. ``whole_value`` is for a typed
    argument, where a template that is exactly one ``{{ expression }}`` (whitespace around allowed)
    sends the value itself. A reasoning template passes ``refuse_structures=False`` (it may render
    a list or an object as text, as "The template" describes) and ``system_block=True`` (it may hold
    one ``{% system %}`` block at the top level, "The system block").
    """
    checker = _Checker(source, place, input_schema, first_line, system_block=system_block)
    checker.run(whole_value=whole_value, refuse_structures=refuse_structures)
    return sorted(set(checker.problems))


def input_warnings(
    source: str,
    *,
    place: PlaceNames,
    input_schema: Mapping[str, Any] | None,
    first_line: int,
    defaults: Collection[str] = (),
) -> list[tuple[int, str]]:
    """Each ``input.<field>`` the template (one that passed :func:`check_template`) reads where the input
    schema lists its ``properties`` without that field, as ``(document line, message)`` in line order.

    The page allows such a read (the schema allows properties it does not list unless it sets
    ``additionalProperties: false``), so this is a warning, not a problem: it is most often a misspelt
    field, which a run answers ``invalid_input`` as if the caller's input lacked it. A level that says
    more about its properties (``additionalProperties``, ``patternProperties``, ``$ref``, ``allOf``,
    ``anyOf``, ``oneOf``) is left alone, and so is a top-level field ``defaults`` names (a reasoning
    function's ``input.default``), which every run has.
    """
    if input_schema is None or len(source) > TEMPLATE_MAX_CHARS:
        return []
    try:
        analysis = compile_template(source).analyze(include_partials=False)
    except (LiquidError, RecursionError):
        return []
    if "input" in analysis.locals:
        return []
    found: set[tuple[int, str]] = set()
    for variable in analysis.globals.get("input", ()):
        segments = variable.segments
        unlisted = _walk(input_schema, segments[1:])[2]
        if unlisted is None:
            continue
        position, listed = unlisted
        if position == 0 and segments[1] in defaults:
            continue
        shown = _shown(segments[: position + 2])
        message = f"{place.label} reads '{shown}', which the input schema does not list"
        closest = _closest(str(segments[position + 1]), listed)
        if closest is not None:
            meant = _shown([*segments[: position + 1], closest])
            message += f"; did you mean '{meant}'?"
        else:
            message += "; add it to the schema's properties if the input may hold it"
        line = first_line + source.count("\n", 0, max(variable.span.index, 0))
        found.add((line, message))
    return sorted(found)


def _closest(name: str, candidates: Collection[str]) -> str | None:
    """The candidate ``name`` most likely misspells (case aside), or ``None`` when none is close."""
    lowered = {candidate.lower(): candidate for candidate in candidates}
    matches = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=CLOSE_ENOUGH)
    return lowered[matches[0]] if matches else None


def template_roots(source: str) -> frozenset[str]:
    """The names a template reads from its data: the roots it does not create itself.

    Empty for a template that does not compile (``check_template`` reports that one).
    """
    if len(source) > TEMPLATE_MAX_CHARS:
        return frozenset()
    try:
        analysis = compile_template(source).analyze(include_partials=False)
    except (LiquidError, RecursionError):
        return frozenset()
    return frozenset(root for root in analysis.globals if root not in analysis.locals)


class _Checker:
    def __init__(
        self,
        source: str,
        place: PlaceNames,
        schema: Mapping[str, Any] | None,
        first_line: int,
        *,
        system_block: bool,
    ) -> None:
        self.system_block = system_block
        self.source = source
        self.place = place
        self.schema = schema
        self.first_line = first_line
        self.problems: list[tuple[int, str]] = []

    def line(self, index: int) -> int:
        return self.first_line + self.source.count("\n", 0, max(index, 0))

    def add(self, index: int, message: str) -> None:
        self.problems.append((self.line(index), message))

    def run(self, *, whole_value: bool, refuse_structures: bool) -> None:
        if len(self.source) > TEMPLATE_MAX_CHARS:
            self.add(
                0, f"the template is {len(self.source):,} characters long; at most {TEMPLATE_MAX_CHARS:,}"
            )
            return
        for match in re.finditer(r"\$\{", self.source):
            self.add(
                match.start(), "a template holds no '${': a document is never filled from the environment"
            )
        if not self.check_tokens():
            return
        template = self.compile()
        if template is None or not self.check_nesting(template):
            return
        try:
            analysis = template.analyze(include_partials=False)
        except RecursionError:
            self.add(0, "the template nests too deeply")
            return
        filters = liquid_environment().filters
        for name, spans in analysis.filters.items():
            if name not in filters:
                for span in spans:
                    self.add(span.index, f"the filter '{name}' is not available")
        self.check_filter_arguments(template)
        self.check_names(analysis.globals, set(analysis.locals))
        if refuse_structures:
            self.check_structures(template, set(analysis.locals), whole_value=whole_value)

    def check_tokens(self) -> bool:
        """Tags that are not available, and the count of names; False when it cannot be lexed."""
        try:
            tokens = list(liquid_environment().tokenizer()(self.source))
        except LiquidError as exc:
            self.add_compile_error(exc)
            return False
        names = 0
        unavailable = False
        previous: Token | None = None
        for token in tokens:
            if token.kind == TOKEN_TAG:
                names += 1
                if token.value == SYSTEM_TAG and self.system_block:
                    pass
                elif (
                    token.value not in AVAILABLE_TAGS
                    and token.value not in INNER_TAGS
                    and not token.value.startswith("end")  # reported with its opening tag
                ):
                    self.add(token.start_index, f"the tag '{token.value}' is not available")
                    unavailable = True
            elif token.kind == TOKEN_DOC:
                self.add(token.start_index, "the tag 'doc' is not available")
                unavailable = True
            elif token.kind == TOKEN_EXPRESSION and not (previous and previous.value == "#"):
                names += len(_NAME.findall(_STRING_LITERAL.sub(" ", token.value)))
            if names > NAMES_MAX:
                self.add(
                    token.start_index,
                    f"the template uses more than {NAMES_MAX:,} names in its tags and outputs",
                )
                return False
            previous = token
        return not unavailable

    def compile(self) -> BoundTemplate | None:
        try:
            return compile_template(self.source)
        except LiquidError as exc:
            self.add_compile_error(exc)
        except RecursionError:
            self.add(0, "the template nests too deeply")
        return None

    def add_compile_error(self, exc: LiquidError) -> None:
        index = exc.token.start_index if exc.token is not None else 0
        message = str(exc.message)
        unexpected = re.fullmatch(r"unexpected tag '([^']*)'", message)
        if isinstance(exc.__cause__, RecursionError):
            self.add(index, "the template nests too deeply")
        elif isinstance(exc, BlockNestingError):
            self.add(index, f"tags nest more than {NESTING_MAX} levels deep")
        elif unexpected and unexpected.group(1) not in AVAILABLE_TAGS | INNER_TAGS:
            self.add(index, f"the tag '{unexpected.group(1)}' is not available")
        else:
            self.add(index, f"the template does not compile: {message}")

    def check_nesting(self, template: BoundTemplate) -> bool:
        """Expressions nested too deeply, and ``break``/``continue`` outside a loop."""
        fine = True
        system_blocks = 0
        for node, _depth, ancestors in iter_nodes(template):
            token = node.token
            if isinstance(node, SystemNode):
                system_blocks += 1
                if not self.system_block:
                    self.add(token.start_index, f"the tag '{SYSTEM_TAG}' is not available")
                elif ancestors:
                    self.add(
                        token.start_index,
                        "the system block must sit at the top level, outside every other tag",
                    )
                elif system_blocks > 1:
                    self.add(token.start_index, "a template has at most one system block")
            if (
                token.kind == TOKEN_TAG
                and token.value in ("break", "continue")
                and not any(isinstance(a, (ForNode, TablerowNode)) for a in ancestors)
            ):
                self.add(token.start_index, f"'{token.value}' is used outside a for loop")
            for expression in node.expressions():
                deepest = max(depth for _, depth in iter_expressions(expression))
                if deepest > EXPRESSION_NESTING_MAX:
                    self.add(expression.token.start_index, "the expression nests too deeply")
                    fine = False
        return fine

    def check_filter_arguments(self, template: BoundTemplate) -> None:
        """Each filter is given arguments it takes (python-liquid finds out only when it renders), and
        none it refuses whatever its value, written as literals."""
        filters = liquid_environment().filters
        for node, _depth, _ancestors in iter_nodes(template):
            for top in node.expressions():
                for expression, _ in iter_expressions(top):
                    for filter_ in getattr(expression, "filters", None) or ():
                        func = filters.get(filter_.name)
                        if func is None:
                            continue
                        problem = _argument_problem(filter_.name, func, filter_.args)
                        if problem is None and filter_.args and all(_literal(a.value) for a in filter_.args):
                            problem = self.refused_literals(template, filter_)
                        if problem:
                            self.add(filter_.token.start_index, problem)

    def refused_literals(self, template: BoundTemplate, filter_: Filter) -> str | None:
        """What the run would say of the filter's literal arguments, when it refuses them for every value."""
        refused: LiquidError | None = None
        for value in _left_values():
            context = ParleyRenderContext(template, globals={}, budget=RenderBudget.start())
            try:
                filter_.evaluate(value, context)
            except FilterArgumentError as exc:
                refused = refused or exc
            except Exception:  # this value is refused, not (only) the arguments
                continue
            else:
                return None
        if refused is None:
            return None
        return render_failure(refused, self.first_line, filter_.token).message

    def check_names(self, globals_: Mapping[str, list[Variable]], locals_: set[str]) -> None:
        for root, variables in globals_.items():
            for variable in variables:
                self.check_name(root, variable, locals_)

    def check_name(self, root: str, variable: Variable, locals_: set[str]) -> None:
        segments = variable.segments
        index = variable.span.index
        place = self.place
        if root not in place.roots:
            if root not in locals_:
                self.add(index, f"{place.label} reads '{root}', which is not one of {place.readable()}")
            return
        allowed = place.roots[root]
        if allowed is not None:
            second = segments[1] if len(segments) > 1 else None
            if (not allowed and second is not None) or (allowed and second not in allowed):
                shown = root if second is None else _shown([root, second])
                self.add(index, f"{place.label} reads '{shown}', which is not one of {place.readable()}")
            return
        if root == "input" and self.schema is not None:
            refused = _walk(self.schema, segments[1:])[0]
            if refused is not None:
                shown = _shown(segments[: refused + 2])
                self.add(index, f"{place.label} reads '{shown}', which the input schema does not allow")

    def check_structures(self, template: BoundTemplate, locals_: set[str], *, whole_value: bool) -> None:
        single = single_output(template, whitespace_around=whole_value)
        for node, _depth, _ancestors in iter_nodes(template):
            if not isinstance(node, OutputNode) or node is single:
                continue
            expression = node.expression
            if not (isinstance(expression, FilteredExpression) and not expression.filters):
                continue
            path = expression.left
            if not isinstance(path, Path):
                continue
            segments = _static_segments(path)
            if segments is None:
                continue
            kind = self.structure_kind(segments, locals_)
            if kind is not None:
                shown = _shown(segments)
                self.add(
                    path.token.start_index,
                    f"{self.place.label} renders '{shown}', {kind}, inside a longer text; "
                    f"use '| json' to write it as JSON",
                )

    def structure_kind(self, segments: Sequence[object], locals_: set[str]) -> str | None:
        root = segments[0]
        if not isinstance(root, str) or root not in self.place.roots or root in locals_:
            return None
        if root in self.place.structures and len(segments) == 1:
            return "an object"
        if root != "input":
            return None
        if len(segments) == 1:
            return "an object"
        if self.schema is None:
            return None
        refused, node, _ = _walk(self.schema, segments[1:])
        if refused is not None or node is None:
            return None
        return _schema_kind(node)


_INJECTED: Final = frozenset({"context", "environment"})


def _left_values() -> tuple[object, ...]:
    """The values a filter with literal arguments is tried on: one or two of each kind, made anew each
    time (no filter should change its value, but none can change these for the next)."""
    return ("text", "12", 12, 0, 1.5, True, None, [], ["text", 1], {"key": "text"})


#: The expressions that read no data: a literal, ``nil``, ``empty``, ``blank``, a range of literals.
_LITERAL_KINDS: Final = (LiteralExpression, Nil, Empty, Blank, RangeLiteral)


def _literal(expression: Expression) -> bool:
    """Whether ``expression`` has the same value at every run."""
    return all(isinstance(part, _LITERAL_KINDS) for part, _ in iter_expressions(expression))


def _argument_problem(name: str, func: Callable[..., object], args: Sequence[object]) -> str | None:
    """Why ``args`` do not fit the filter's parameters, or ``None`` when they do."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    parameters = list(signature.parameters.values())[1:]  # the first is the value on the left
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in _INJECTED
    ]
    keywords = {p.name for p in parameters if p.kind != p.POSITIONAL_ONLY and p.name not in _INJECTED}
    given = sum(1 for a in args if isinstance(a, PositionalArgument))
    named = [a.name for a in args if isinstance(a, KeywordArgument)]
    for keyword in named:
        if keyword not in keywords:
            return f"the filter '{name}' has no argument '{keyword}'"
    required = sum(1 for p in positional if p.default is p.empty and p.name not in named)
    most = len(positional)
    if required <= given <= most:
        return None
    if most == 0:
        return f"the filter '{name}' takes no arguments"
    noun = "argument" if most == 1 else "arguments"
    if required == most:
        span = str(most)
    elif required == 0:
        span = f"at most {most}"
    else:
        span = f"{required} to {most}"
    return f"the filter '{name}' takes {span} {noun}, not {given}"


def _static_segments(path: Path) -> list[object] | None:
    segments: list[object] = []
    for segment in path.path:
        if isinstance(segment, Path):
            return None
        segments.append(segment)
    return segments


def _shown(segments: Sequence[object]) -> str:
    text = ""
    for segment in segments:
        if isinstance(segment, int) and not isinstance(segment, bool):
            text += f"[{segment}]"
        elif isinstance(segment, list):
            text += "[…]"
        else:
            text += ("." if text else "") + str(segment)
    return text


# --- walking the input schema ----------------------------------------------------------------------

_REF_HOPS: Final = 32


def _resolve(root: Mapping[str, Any], node: object) -> object:
    """Follow local ``$ref`` (``#/$defs/...``, ``#/definitions/...``) from ``node``."""
    for _ in range(_REF_HOPS):
        if not isinstance(node, Mapping) or "properties" in node:
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            return node
        node = _pointer(root, ref[1:])
    return None


def _pointer(root: Mapping[str, Any], pointer: str) -> object:
    if pointer == "":
        return root
    if not pointer.startswith("/"):
        return None
    node: object = root
    for raw in pointer[1:].split("/"):
        name = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and name in node:
            node = node[name]
        elif isinstance(node, list) and name.isdigit() and int(name) < len(node):
            node = node[int(name)]
        else:
            return None
    return node


def _types(node: Mapping[str, Any]) -> set[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _item_schema(node: Mapping[str, Any], index: int) -> object:
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and 0 <= index < len(prefix):
        return prefix[index]
    items = node.get("items")
    if isinstance(items, list):  # draft-07 tuple form
        return items[index] if 0 <= index < len(items) else node.get("additionalItems")
    return items


#: Keywords beside ``properties`` that may allow a property it does not list.
_MAY_ALLOW: Final = frozenset(
    {"additionalProperties", "patternProperties", "$ref", "$dynamicRef", "allOf", "anyOf", "oneOf"}
)

Unlisted = tuple[int, tuple[str, ...]]


def _walk(
    schema: Mapping[str, Any], segments: Sequence[object]
) -> tuple[int | None, object, Unlisted | None]:
    """Walk ``segments`` (after ``input``) through the schema.

    Returns the index of the first segment the schema refuses (a property missing from an object
    schema that lists ``properties`` and sets ``additionalProperties: false``), the schema at the
    end of the path, or ``None`` where the schema says nothing more, and the first segment the schema
    allows without listing it, with the names listed there (an object schema that lists ``properties``
    and says nothing else that could allow more: see :data:`_MAY_ALLOW`), or ``None``.
    """
    node: object = schema
    for position, segment in enumerate(segments):
        node = _resolve(schema, node)
        if not isinstance(node, Mapping) or isinstance(segment, list):
            return None, None, None
        if isinstance(segment, int) and not isinstance(segment, bool):
            node = _item_schema(node, segment)
            continue
        name = str(segment)
        if name == "size":
            return None, None, None
        properties = node.get("properties")
        if isinstance(properties, Mapping) and name in properties:
            node = properties[name]
            continue
        if name in ("first", "last") and ("array" in _types(node) or "items" in node):
            node = _item_schema(node, 0 if name == "first" else -1)
            continue
        matched = _pattern_schema(node, name)
        if matched is not None:
            node = matched
            continue
        additional = node.get("additionalProperties")
        if isinstance(properties, Mapping) and additional is False:
            return position, None, None
        if isinstance(properties, Mapping) and not _MAY_ALLOW & node.keys():
            return None, None, (position, tuple(str(listed) for listed in properties))
        node = additional if isinstance(additional, Mapping) else None
    return None, _resolve(schema, node), None


def _pattern_schema(node: Mapping[str, Any], name: str) -> object:
    patterns = node.get("patternProperties")
    if not isinstance(patterns, Mapping):
        return None
    for pattern, sub in patterns.items():
        try:
            if re.search(str(pattern), name):
                return sub
        except re.error:
            continue
    return None


def _schema_kind(node: object) -> str | None:
    if not isinstance(node, Mapping):
        return None
    types = _types(node) - {"null"}
    if not types:
        return "an object" if "properties" in node else None
    if types <= {"object"}:
        return "an object"
    if types <= {"array"}:
        return "a list"
    if types <= {"object", "array"}:
        return "a list or an object"
    return None
