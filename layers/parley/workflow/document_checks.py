"""The checks a workflow document's fields share, wherever they are written (``workflow-format.md``,
"Expressions", "Durations", "Errors, retries and timeouts" and "Document fields"): where each problem is
(line, column and pointer), expressions and the variables their place reads, values that hold
expressions, durations, inline schemas, timeouts, retry policies and errors. ``document_tasks`` walks
the task lists with them, and ``document`` the document's own fields.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from parley.documents.front_matter import LineIndex
from parley.documents.json_schema import check_schema
from parley.documents.pointers import join_pointer
from parley.documents.problems import DocumentProblem
from parley.workflow.document_durations import ReadDuration, read_duration
from parley.workflow.expressions import (
    CAUGHT_ERROR,
    EVERY_PLACE,
    LOOP_INDEX,
    LOOP_ITEM,
    OUTPUT,
    ExpressionSyntaxError,
    condition_body,
    expression_body,
    parse_expression,
    reading_problems,
)

#: A name a ``for`` or a ``catch`` gives a variable (``for.each``, ``for.at``, ``catch.as``).
VARIABLE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: The names every place reads, which a ``for`` or a ``catch`` may not take for its own.
RESERVED_NAMES: Final = frozenset({*EVERY_PLACE, OUTPUT})
#: The fields ``errors.with`` matches, and that ``raise.error`` and ``use.errors`` may set.
ERROR_FIELDS: Final = ("type", "status", "instance", "title", "detail", "kind", "because")
_OPENING: Final = re.compile(r"\A\s*\$\{\s*")


@dataclass(frozen=True)
class Scope:
    """The variables a place reads, and where the others are read (for the problem that names one)."""

    variables: frozenset[str] = frozenset(EVERY_PLACE)
    elsewhere: Mapping[str, str] = field(default_factory=dict)

    def with_loop(self, item: str, index: str) -> Scope:
        """Inside a ``for``'s ``while`` and ``do``."""
        elsewhere = dict(self.elsewhere)
        if item != LOOP_ITEM:
            elsewhere[LOOP_ITEM] = f"this for names its item ${item} (for.each)"
        if index != LOOP_INDEX:
            elsewhere[LOOP_INDEX] = f"this for names its position ${index} (for.at)"
        for name in (item, index):
            elsewhere.pop(name, None)
        return Scope(self.variables | {item, index}, elsewhere)

    def with_error(self, name: str) -> Scope:
        """In a ``catch``'s ``when``, ``exceptWhen``, ``retry`` and ``do``."""
        elsewhere = dict(self.elsewhere)
        if name != CAUGHT_ERROR:
            elsewhere[CAUGHT_ERROR] = f"this catch names the error ${name} (catch.as)"
        elsewhere.pop(name, None)
        return Scope(self.variables | {name}, elsewhere)

    def with_output(self) -> Scope:
        """In ``export.as``."""
        return Scope(self.variables | {OUTPUT}, self.elsewhere)


@dataclass
class Checks:
    """One document's check: its YAML text (``\\n`` line ends), where each pointer is, the names
    ``use`` gives, and the problems found (Parley's own, and the DSL schema's apart, since Parley's win
    at the same place)."""

    text: str
    lines: LineIndex
    found: list[DocumentProblem] = field(default_factory=list)
    schema_found: list[DocumentProblem] = field(default_factory=list)
    errors: frozenset[str] = frozenset()
    retries: frozenset[str] = frozenset()
    timeouts: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._breaks = [index for index, char in enumerate(self.text) if char == "\n"]

    # -- where ------------------------------------------------------------------------------------------

    def key_place(self, pointer: str) -> tuple[int, int]:
        """A field's key, a list's item, or the nearest such ancestor of a place that is not written."""
        return self.lines.line_of(pointer), self.lines.column_of(pointer)

    def value_place(self, pointer: str) -> tuple[int, int]:
        """Where a value starts (its key's place when it is not written); for a block scalar (``|`` or
        ``>``), where its text starts, on the line after the indicator."""
        line = self.lines.value_line_of(pointer)
        span = self.lines.spans.get(pointer)
        if (
            span is not None
            and self.text[span[0] : span[0] + 1] in ("|", ">")
            and line - 1 < len(self._breaks)
        ):
            start = self._breaks[line - 2] + 1 if line >= 2 else 0
            text_line = self.text[start : self._breaks[line - 1]]
            return line, len(text_line) - len(text_line.lstrip(" ")) + 1
        return line, self.lines.value_column_of(pointer)

    def place_in_value(self, pointer: str, value: str, offset: int) -> tuple[int, int]:
        """Where character ``offset`` of the text ``value`` (at ``pointer``) is in the source: exact when
        the value is written on one line as it reads (plain, or quoted without escapes), else where the
        value starts."""
        span = self.lines.spans.get(pointer)
        if span is not None:
            start, end = span
            raw = self.text[start:end]
            if "\n" not in raw:
                if raw == value:
                    return self._index_place(start + offset)
                if len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0] and raw[1:-1] == value:
                    return self._index_place(start + 1 + offset)
        return self.value_place(pointer)

    def _index_place(self, index: int) -> tuple[int, int]:
        before = bisect_left(self._breaks, index)
        column = index + 1 if before == 0 else index - self._breaks[before - 1]
        return before + 1, column

    # -- problems ---------------------------------------------------------------------------------------

    def problem(self, pointer: str, message: str) -> None:
        """A problem about a field (at its key) or a list's item."""
        line, column = self.key_place(pointer)
        self.found.append(DocumentProblem(line, pointer, message, column))

    def value_problem(self, pointer: str, message: str) -> None:
        """A problem about what a field holds (at its value)."""
        line, column = self.value_place(pointer)
        self.found.append(DocumentProblem(line, pointer, message, column))

    def problem_at(self, place: tuple[int, int], pointer: str, message: str) -> None:
        self.found.append(DocumentProblem(place[0], pointer, message, place[1]))

    def schema_problem(self, pointer: str, message: str) -> None:
        line, column = self.key_place(pointer)
        self.schema_found.append(DocumentProblem(line, pointer, message, column))

    def all_problems(self) -> list[DocumentProblem]:
        """Parley's problems, and the schema's where Parley found none at the same place or above it."""
        mine = {problem.pointer for problem in self.found if problem.pointer}
        kept = [problem for problem in self.schema_found if not _under(problem.pointer, mine)]
        return [*self.found, *kept]

    # -- expressions ------------------------------------------------------------------------------------

    def condition(self, pointer: str, value: Any, scope: Scope) -> None:
        """A place that is always an expression (``if``, ``when``, ``for.in``, the text of ``output.as``
        …), written with or without ``${ }``."""
        if not isinstance(value, str):
            return  # the DSL's schema says what the place takes
        body = condition_body(value)
        wrapped = _OPENING.match(value) if expression_body(value) is not None else None
        offset = wrapped.end() if wrapped is not None else len(value) - len(value.lstrip())
        self.expression(pointer, value, body, offset, scope)

    def values(self, pointer: str, value: Any, scope: Scope) -> None:
        """A value that may hold expressions (``set``, ``with``, ``raise.error``, ``emit``, the mapping
        forms of ``input.from``, ``output.as`` and ``export.as``): each text written ``${ … }``, however
        deep, is one."""
        stack: list[tuple[str, Any]] = [(pointer, value)]
        while stack:
            here, item = stack.pop()
            if isinstance(item, str):
                match = _OPENING.match(item)
                body = expression_body(item)
                if body is not None and match is not None:
                    self.expression(here, item, body, match.end(), scope)
            elif isinstance(item, dict):
                stack.extend((join_pointer(here, key), inner) for key, inner in reversed(item.items()))
            elif isinstance(item, list):
                stack.extend((join_pointer(here, i), inner) for i, inner in reversed(list(enumerate(item))))

    def expression(self, pointer: str, value: str, body: str, offset: int, scope: Scope) -> None:
        """Parse ``body`` (at ``offset`` in the text ``value``, at ``pointer``) and check what it reads."""
        try:
            parsed = parse_expression(body)
        except ExpressionSyntaxError as exc:
            place = self.place_in_value(pointer, value, offset + exc.location)
            self.problem_at(place, pointer, f"The expression does not parse: {exc.message}")
            return
        for at, message in reading_problems(parsed, scope.variables, elsewhere=scope.elsewhere):
            self.problem_at(self.place_in_value(pointer, value, offset + at), pointer, message)

    # -- durations, schemas, timeouts, retries, errors --------------------------------------------------

    def duration(self, pointer: str, value: Any, scope: Scope) -> ReadDuration | None:
        """A duration (``wait``, ``timeout.after``, a retry's delays and limits, ``schedule.every``)."""
        read = read_duration(value)
        if isinstance(read, list):
            for problem in read:
                where = join_pointer(pointer, *problem.path)
                if problem.about_value:
                    self.value_problem(where, problem.message)
                else:
                    self.problem(where, problem.message)
            return None
        if read.expression is not None:
            self.condition(pointer, value, scope)
        return read

    def inline_schema(self, pointer: str, value: Any, *, object_root: bool = False) -> dict[str, Any] | None:
        """``input.schema``, ``output.schema`` or ``export.schema``: written inline, JSON Schema, kept to the
        reasoning format's schema rules. Returns the schema document when it passes."""
        if not isinstance(value, dict):
            return None
        if "resource" in value:
            self.problem(
                join_pointer(pointer, "resource"),
                "A schema is written inline, under document: a workflow reads no schema from elsewhere",
            )
        if "format" in value and value["format"] != "json":
            where = join_pointer(pointer, "format")
            self.value_problem(where, "A schema is JSON Schema: write format: json, or leave it out")
        if "document" not in value:
            return None
        document = value["document"]
        where = join_pointer(pointer, "document")
        issues = check_schema(document, where, self.lines)
        for issue in issues:
            line, column = self.key_place(issue.pointer)
            self.found.append(DocumentProblem(line, issue.pointer, issue.message, column))
        not_an_object = not isinstance(document, dict) or document.get("type") != "object"
        if object_root and isinstance(document, dict | bool) and not_an_object:
            self.problem(where, 'The input schema\'s root is "type": "object"')
            return None
        return document if isinstance(document, dict) and not issues else None

    def timeout(self, pointer: str, value: Any, scope: Scope) -> None:
        """A ``timeout``: ``after`` with a duration, or the name of one in ``use.timeouts``."""
        if isinstance(value, str):
            if value not in self.timeouts:
                self.value_problem(pointer, f"There is no timeout {_shown(value)} in use.timeouts")
        elif isinstance(value, dict) and "after" in value:
            self.duration(join_pointer(pointer, "after"), value["after"], scope)

    def retry_policy(self, pointer: str, value: Any, scope: Scope) -> None:
        """A retry policy, inline in a ``catch`` or named in ``use.retries``."""
        if not isinstance(value, dict):
            return
        for name in ("when", "exceptWhen"):
            if name in value:
                self.condition(join_pointer(pointer, name), value[name], scope)
        if "delay" in value:
            self.duration(join_pointer(pointer, "delay"), value["delay"], scope)
        jitter = value.get("jitter")
        if isinstance(jitter, dict):
            for name in ("from", "to"):
                if name in jitter:
                    self.duration(join_pointer(pointer, "jitter", name), jitter[name], scope)
        limit = value.get("limit")
        if isinstance(limit, dict):
            if "duration" in limit:
                self.duration(join_pointer(pointer, "limit", "duration"), limit["duration"], scope)
            attempt = limit.get("attempt")
            if isinstance(attempt, dict):
                if "duration" in attempt:
                    where = join_pointer(pointer, "limit", "attempt", "duration")
                    self.duration(where, attempt["duration"], scope)
                count = attempt.get("count")
                if isinstance(count, int) and not isinstance(count, bool) and count < 0:
                    where = join_pointer(pointer, "limit", "attempt", "count")
                    self.value_problem(where, "Expected a count of retries of at least 0")

    def error(self, pointer: str, value: Any, scope: Scope) -> None:
        """An error ``raise`` raises: its fields, which may be expressions (``use.errors`` or inline)."""
        if not isinstance(value, dict):
            return
        self.values(pointer, value, scope)

    def variable_name(self, pointer: str, value: Any, what: str) -> str | None:
        """A name a ``for`` or a ``catch`` gives a variable, such as ``for.each: user``."""
        if not isinstance(value, str):
            return None
        name = value
        if name.startswith("$"):
            self.value_problem(pointer, f"{what} names a variable without its $, such as {name[1:41] or 'x'}")
            return None
        if VARIABLE_NAME.fullmatch(name) is None:
            self.value_problem(
                pointer, f"{what} names a variable: letters, digits and _, starting with a letter or _"
            )
            return None
        if name in RESERVED_NAMES:
            self.value_problem(pointer, f"{what} may not take the name ${name}, which every place reads")
            return None
        return name


def _under(pointer: str, pointers: set[str]) -> bool:
    """Whether ``pointer`` is one of ``pointers`` or below one of them."""
    while pointer:
        if pointer in pointers:
            return True
        pointer = pointer[: pointer.rfind("/")]
    return False


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")
