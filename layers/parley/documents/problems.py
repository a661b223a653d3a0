"""Problems found in a document, each with its line and, where there is one, its pointer.

The format pages say how a rejected document lists them ("How a document is checked"):
``Line 4, /config/temperature: Expected number``; a problem found twice is reported once; at most
20 in line order, then one line that counts the rest, such as ``Line 23: 5881 more issues are not
shown``. Every problem is reported under the request pointer ``/source``. A workflow, whose whole source
is YAML, names the column too: ``Line 14, column 22, /do/1/approval/with/input/owner: …``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import total_ordering
from typing import Final

from parley.errors import ErrorEntry, Problem

MAX_SHOWN: Final = 20


@total_ordering
@dataclass(frozen=True)
class DocumentProblem:
    """One problem: 1-based line of the source, JSON Pointer into the front matter ('' for none).

    ``column`` is the 1-based column for the document types that show one (a workflow's YAML:
    ``Line 14, column 22, /do/1/…: …``); ``0`` shows none. Problems sort by line, then column.
    """

    line: int
    pointer: str
    message: str
    column: int = 0

    def __str__(self) -> str:
        return _located(self.line, self.pointer, self.message, self.column)

    def _order(self) -> tuple[int, int, str, str]:
        return (self.line, self.column, self.pointer, self.message)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, DocumentProblem):
            return NotImplemented
        return self._order() < other._order()


@dataclass(frozen=True, order=True)
class DocumentWarning:
    """One warning of a document that is saved all the same (the definition's ``warnings``), written as a
    problem is: ``Line 9, /input/schema/requried: …``, or ``Line 12: …`` where there is no pointer."""

    line: int
    pointer: str
    message: str

    def __str__(self) -> str:
        return _located(self.line, self.pointer, self.message)


@dataclass
class DocumentProblems:
    """Collects the problems of one document while it is checked."""

    items: list[DocumentProblem] = field(default_factory=list)

    def add(self, line: int, pointer: str, message: str, column: int = 0) -> None:
        self.items.append(DocumentProblem(max(line, 1), pointer, message, max(column, 0)))

    def extend(self, problems: list[DocumentProblem]) -> None:
        self.items.extend(problems)

    def __bool__(self) -> bool:
        return bool(self.items)

    def distinct(self) -> list[DocumentProblem]:
        """The problems in line order, each once: a problem found twice is reported once.

        Where a problem has a pointer, the pointer and the message are the problem, whichever line
        found it (the key's line or the value's); the first line is kept. Without a pointer (a
        template's problems), the line tells two places apart.
        """
        seen: set[tuple[object, ...]] = set()
        found: list[DocumentProblem] = []
        for problem in sorted(set(self.items)):
            key = (
                (problem.pointer, problem.message)
                if problem.pointer
                else (problem.line, problem.column, problem.message)
            )
            if key not in seen:
                seen.add(key)
                found.append(problem)
        return found

    def lines(self) -> list[str]:
        """Distinct problems in line order, at most 20, then one line counting the rest."""
        distinct = self.distinct()
        shown = [str(p) for p in distinct[:MAX_SHOWN]]
        rest = len(distinct) - MAX_SHOWN
        if rest > 0:
            noun = "issue is" if rest == 1 else "issues are"
            shown.append(f"Line {distinct[MAX_SHOWN].line}: {rest} more {noun} not shown")
        return shown

    def to_problem(self, what: str = "The document") -> Problem:
        lines = self.lines()
        count = len(self.distinct())
        noun = "problem" if count == 1 else "problems"
        return Problem(
            "invalid_input",
            f"{what} has {count} {noun}: {lines[0]}" + (" …" if count > 1 else ""),
            errors=[ErrorEntry("/source", line) for line in lines],
        )

    def raise_if_any(self, what: str = "The document") -> None:
        if self.items:
            raise self.to_problem(what)


def _located(line: int, pointer: str, message: str, column: int = 0) -> str:
    """``Line 9, /input/schema/requried: …``, or ``Line 12: …`` where there is no pointer; with a
    column, ``Line 14, column 22, /do/1/approval: …``."""
    where = f"Line {line}, column {column}" if column > 0 else f"Line {line}"
    if pointer:
        return f"{where}, {pointer}: {message}"
    return f"{where}: {message}"
