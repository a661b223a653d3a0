"""A function document's front matter: split from its body, then read as YAML 1.2 with the core schema.

"How a document is checked" (``reasoning-format.md``) sets the rules: ``yes`` and ``2026-10-01`` stay
strings; anchors, aliases and tags are rejected; a key appears once in a mapping; numbers are finite;
nesting stops at 72 levels. PyYAML resolves scalars by YAML 1.1 and builds values recursively, so only its
event stream is used here: values are built without recursion, and every node's mark gives the line that a
problem names (:class:`LineIndex`), and its column for the documents that show one (a workflow, whose whole
source is this YAML: ``load_front_matter(..., columns=True)``).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import yaml

from parley.documents.pointers import escape_token
from parley.documents.problems import DocumentProblem, DocumentProblems

MAX_NESTING: Final = 72

_FENCE: Final = re.compile(r"---[ \t]*")
_NULL: Final = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE: Final = frozenset({"true", "True", "TRUE"})
_FALSE: Final = frozenset({"false", "False", "FALSE"})
# The core schema's regular expressions (YAML 1.2.2, 10.3.2 "Tag Resolution")
_INT_DECIMAL: Final = re.compile(r"[-+]?[0-9]+")
_INT_OCTAL: Final = re.compile(r"0o[0-7]+")
_INT_HEX: Final = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT: Final = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_NOT_FINITE: Final = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_STANDARD_TAG: Final = "tag:yaml.org,2002:"


class SplitDocument(NamedTuple):
    """A document cut at its front matter's fences; lines are the source's, 1-based."""

    front_matter: str
    front_matter_first_line: int
    body: str
    body_first_line: int


def split_document(source: str) -> SplitDocument | list[DocumentProblem]:
    """Cut ``source`` into its front matter (between the ``---`` lines) and its body.

    A byte order mark is dropped and line ends are read as ``\\n`` (``\\r\\n`` and a lone ``\\r`` alike),
    so the body is returned with ``\\n`` line ends and lines count the same way YAML marks do.
    """
    text = source.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if _FENCE.fullmatch(lines[0]) is None:
        return [
            DocumentProblem(
                1, "", "The document starts with a line '---' that opens the front matter, then the message"
            )
        ]
    for index in range(1, len(lines)):
        if _FENCE.fullmatch(lines[index]) is not None:
            front_matter = "".join(line + "\n" for line in lines[1:index])
            return SplitDocument(front_matter, 2, "\n".join(lines[index + 1 :]), index + 2)
    return [DocumentProblem(1, "", "The front matter opened on line 1 is not closed by a line '---'")]


@dataclass
class LineIndex:
    """Where each part of the front matter is: JSON Pointer -> 1-based document line.

    ``line_of`` gives the line of a mapping entry's key or of a sequence item; for a pointer that names no
    node (such as a missing required field) it gives the nearest ancestor's, and the root is the line of
    the opening ``---``. ``value_line_of`` gives the line a value's text starts on, which differs for a
    block scalar (``|`` or ``>``): templates count their own lines from there.

    ``column_of`` and ``value_column_of`` give the 1-based columns of the same places (the root's is 1),
    and ``spans`` the characters a scalar value takes in the YAML text (start and end index, its quotes
    included), so a place inside a value can be found in the source.
    """

    root_line: int = 1
    keys: dict[str, int] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)
    columns: dict[str, int] = field(default_factory=dict)
    value_columns: dict[str, int] = field(default_factory=dict)
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)

    def get(self, pointer: str) -> int | None:
        return self.keys.get(pointer)

    def __contains__(self, pointer: object) -> bool:
        return pointer in self.keys

    def line_of(self, pointer: str) -> int:
        while pointer:
            line = self.keys.get(pointer)
            if line is not None:
                return line
            pointer = pointer[: pointer.rfind("/")] if "/" in pointer else ""
        return self.root_line

    def value_line_of(self, pointer: str) -> int:
        line = self.values.get(pointer)
        return line if line is not None else self.line_of(pointer)

    def column_of(self, pointer: str) -> int:
        while pointer:
            column = self.columns.get(pointer)
            if column is not None:
                return column
            pointer = pointer[: pointer.rfind("/")] if "/" in pointer else ""
        return 1

    def value_column_of(self, pointer: str) -> int:
        """The column a value starts at; where its line is not known, the column ``line_of`` goes with."""
        if pointer in self.values:
            return self.value_columns.get(pointer, 1)
        return self.column_of(pointer)


class LoadedFrontMatter(NamedTuple):
    data: dict[str, Any]
    lines: LineIndex


class _Stop(Exception):
    """Ends reading at a problem after which nothing further can be trusted (too deep, two documents)."""


_KEY_PENDING: Final = object()  # a mapping waits for its next key
_KEY_REFUSED: Final = object()  # the key was refused: its value is read but not kept


@dataclass
class _Frame:
    """A collection being built: ``pointer`` is ``None`` inside a key or under a refused key."""

    value: dict[str, Any] | list[Any]
    pointer: str | None
    near: str  # nearest pointer that names a node, for problems
    depth: int
    key: object = _KEY_PENDING
    key_line: int = 0
    key_column: int = 0


def _events(yaml_text: str) -> Iterator[yaml.Event]:
    """PyYAML's events, from libyaml when it is there (much faster), else from the Python parser."""
    loader: Any = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    return yaml.parse(yaml_text, Loader=loader)


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(_STANDARD_TAG) :] if tag.startswith(_STANDARD_TAG) else tag


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


class _Reader:
    """Builds the front matter's value from the event stream, collecting problems as it goes."""

    def __init__(
        self, yaml_text: str, first_line: int, *, columns: bool, subject: str, max_nesting: int
    ) -> None:
        self.first_line = first_line
        self.breaks = [i for i, char in enumerate(yaml_text) if char == "\n"]
        self.lines = LineIndex(root_line=max(first_line - 1, 1))
        self.problems: list[DocumentProblem] = []
        self.with_columns = columns
        self.subject = subject
        self.max_nesting = max_nesting
        self.stack: list[_Frame] = []
        self.root: Any = None
        self.has_root = False
        self.documents = 0

    def line_at(self, index: int) -> int:
        """The document line of a character index (marks count characters; lines count ``\\n`` only)."""
        return self.first_line + bisect_left(self.breaks, index)

    def line_of_mark(self, mark: Any) -> int:
        return self.line_at(mark.index) if mark is not None else self.lines.root_line

    def column_at(self, index: int) -> int:
        """The 1-based column of a character index, counted in characters from the line's start."""
        before = bisect_left(self.breaks, index)
        return index + 1 if before == 0 else index - self.breaks[before - 1]

    def column_of_mark(self, mark: Any) -> int:
        return self.column_at(mark.index) if mark is not None else 1

    def problem(self, line: int, pointer: str, message: str, column: int = 0) -> None:
        shown = max(column, 1) if self.with_columns else 0
        self.problems.append(DocumentProblem(max(line, 1), pointer, message, shown))

    def read(self, events: Iterator[yaml.Event]) -> None:
        for event in events:
            if isinstance(event, yaml.DocumentStartEvent):
                self.documents += 1
                if self.documents > 1:
                    self.problem(
                        self.line_of_mark(event.start_mark),
                        "",
                        f"{self.subject} is one YAML document",
                        self.column_of_mark(event.start_mark),
                    )
                    raise _Stop
            elif isinstance(event, yaml.NodeEvent):
                self.start(event)
            elif isinstance(event, yaml.CollectionEndEvent):
                frame = self.stack.pop()
                self.deliver(frame.value, frame.pointer)

    def place(self) -> tuple[str | None, str, int]:
        """The pointer of the node about to start (``None`` where it is not kept), the nearest named
        pointer, and its depth."""
        if not self.stack:
            return "", "", 0
        parent = self.stack[-1]
        if isinstance(parent.value, list):
            if parent.pointer is None:
                return None, parent.near, parent.depth
            pointer = f"{parent.pointer}/{len(parent.value)}"
            return pointer, pointer, parent.depth
        if parent.key is _KEY_PENDING or parent.key is _KEY_REFUSED or parent.pointer is None:
            return None, parent.near, parent.depth
        assert isinstance(parent.key, str)
        pointer = f"{parent.pointer}/{escape_token(parent.key)}"
        return pointer, pointer, parent.depth

    def start(self, event: yaml.NodeEvent) -> None:
        pointer, near, depth = self.place()
        line = self.line_of_mark(event.start_mark)
        column = self.column_of_mark(event.start_mark)
        if self.stack:
            parent = self.stack[-1]
            if isinstance(parent.value, list):
                if pointer is not None:
                    self.lines.keys[pointer] = line
                    self.lines.columns[pointer] = column
            elif parent.key is _KEY_PENDING:
                parent.key_line = line
                parent.key_column = column
        if isinstance(event, yaml.AliasEvent):
            self.problem(
                line, near, f"Aliases (*{event.anchor}) are not allowed: write the value out", column
            )
            if self.stack and self.stack[-1].key is _KEY_PENDING and isinstance(self.stack[-1].value, dict):
                self.stack[-1].key = _KEY_REFUSED  # an alias as a key: one problem is enough
            else:
                self.deliver(None, pointer, line)
            return
        if event.anchor is not None:
            self.problem(
                line, near, f"Anchors (&{event.anchor}) are not allowed: write the value out", column
            )
        tag = getattr(event, "tag", None)
        if tag is not None:
            self.problem(
                line, near, f"Tags such as {_tag_name(tag)} are not allowed: write the value plainly", column
            )
        if isinstance(event, yaml.ScalarEvent):
            value_line = line + 1 if event.style in ("|", ">") else line
            value = self.scalar(event, line, near, column)
            if pointer is not None:
                self.lines.value_columns.setdefault(pointer, column)
                if event.start_mark is not None and event.end_mark is not None:
                    self.lines.spans.setdefault(pointer, (event.start_mark.index, event.end_mark.index))
            self.deliver(value, pointer, value_line)
            return
        assert isinstance(event, yaml.CollectionStartEvent)
        if depth + 1 > self.max_nesting:
            self.problem(line, near, f"Nesting is limited to {self.max_nesting} levels", column)
            raise _Stop
        if pointer is not None:
            self.lines.values[pointer] = line
            self.lines.value_columns[pointer] = column
        container: dict[str, Any] | list[Any] = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.stack.append(_Frame(container, pointer, near, depth + 1))

    def scalar(self, event: yaml.ScalarEvent, line: int, near: str, column: int) -> Any:
        """The value of a scalar by the core schema; quoted and block scalars are always text."""
        text: str = event.value
        if event.style not in (None, "") or event.tag is not None:
            return text
        if text in _NULL:
            return None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        try:
            if _INT_DECIMAL.fullmatch(text):
                return int(text)
            if _INT_OCTAL.fullmatch(text):
                return int(text[2:], 8)
            if _INT_HEX.fullmatch(text):
                return int(text[2:], 16)
        except ValueError:  # more digits than ``int`` reads
            self.problem(line, near, f"The number {_shown(text)} is too long", column)
            return None
        if _NOT_FINITE.fullmatch(text):
            self.problem(line, near, f"Numbers must be finite: quote {text} to keep it as text", column)
            return None
        if _FLOAT.fullmatch(text):
            number = float(text)
            if not math.isfinite(number):
                self.problem(line, near, f"Numbers must be finite: {_shown(text)} is too large", column)
                return None
            return number
        return text

    def deliver(self, value: Any, pointer: str | None, value_line: int | None = None) -> None:
        """Hand a finished node to the collection it is in (or make it the root)."""
        if not self.stack:
            self.root, self.has_root = value, True
            return
        parent = self.stack[-1]
        if isinstance(parent.value, list):
            parent.value.append(value)
            if pointer is not None and value_line is not None:
                self.lines.values.setdefault(pointer, value_line)
            return
        if parent.key is _KEY_PENDING:
            self.key(parent, value)
            return
        if isinstance(parent.key, str):
            parent.value[parent.key] = value
            if pointer is not None and value_line is not None:
                self.lines.values.setdefault(pointer, value_line)
        parent.key = _KEY_PENDING

    def key(self, parent: _Frame, key: Any) -> None:
        assert isinstance(parent.value, dict)
        line, column = parent.key_line, parent.key_column
        if not isinstance(key, str):
            if isinstance(key, dict | list):
                message = "A key is text, not a mapping or a list"
            else:
                shown = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
                message = f"A key is text: quote {shown} to use it as a key"
            self.problem(line, parent.near, message, column)
            parent.key = _KEY_REFUSED
            return
        pointer = f"{parent.pointer}/{escape_token(key)}" if parent.pointer is not None else None
        if key in parent.value:
            self.problem(
                line, pointer or parent.near, f"The key {_shown(key)} appears twice in this mapping", column
            )
            parent.key = _KEY_REFUSED
            return
        parent.key = key
        parent.value[key] = None  # keeps the key's place, so a repeat is seen even before its value ends
        if pointer is not None:
            self.lines.keys[pointer] = line
            self.lines.columns[pointer] = column


def load_front_matter(
    yaml_text: str,
    first_line: int,
    *,
    columns: bool = False,
    subject: str = "The front matter",
    max_nesting: int = MAX_NESTING,
) -> LoadedFrontMatter | list[DocumentProblem]:
    """Read the front matter as a mapping, or return every problem found, each with its line.

    ``first_line`` is the document line of the YAML text's first line (2 after an opening ``---``).
    A document read whole as YAML (a workflow) passes ``columns=True`` for problems that name their
    column, its own ``subject`` for the problems about the whole text ("The workflow document is one
    YAML document") and its own bound on nesting.
    """
    reader = _Reader(yaml_text, first_line, columns=columns, subject=subject, max_nesting=max_nesting)
    try:
        reader.read(_events(yaml_text))
    except _Stop:
        pass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = reader.line_at(mark.index) if mark is not None else reader.lines.root_line
        reader.problem(line, "", _syntax_message(exc, max_nesting), reader.column_of_mark(mark))
    except yaml.reader.ReaderError as exc:
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        reader.problem(
            reader.line_at(exc.position),
            "",
            f"The character U+{code:04X} is not allowed in YAML",
            reader.column_at(exc.position),
        )
    except UnicodeError as exc:  # libyaml reads UTF-8, which a lone surrogate cannot be written in
        start = exc.start if isinstance(exc, UnicodeEncodeError) else 0
        reader.problem(reader.line_at(start), "", f"{subject} is not valid text", reader.column_at(start))
    except yaml.YAMLError as exc:
        reader.problem(reader.lines.root_line, "", f"{subject} is not valid YAML: {exc}")
    if reader.problems:
        return reader.problems
    shown_column = 1 if columns else 0
    if not reader.has_root or reader.root is None:
        return [
            DocumentProblem(reader.lines.root_line, "", f"{subject} is empty: write its fields", shown_column)
        ]
    if not isinstance(reader.root, dict):
        return [
            DocumentProblem(
                first_line, "", f"{subject} is a mapping of fields, such as 'name: value'", shown_column
            )
        ]
    return LoadedFrontMatter(reader.root, reader.lines)


def _syntax_message(exc: yaml.MarkedYAMLError, max_nesting: int = MAX_NESTING) -> str:
    problem = (exc.problem or "").strip()
    if problem == "exceeded maximum nesting depth":  # libyaml's own limit, met while looking ahead
        return f"Nesting is limited to {max_nesting} levels"
    context = (exc.context or "").strip()
    text = f"{problem} ({context})" if problem and context else problem or context or "not valid"
    return f"Invalid YAML: {text}"


#: The most a document's source may be (``http-api.md``, "Definitions"), in UTF-8 bytes.
SOURCE_MAX_BYTES: Final = 65_536


def read_document(source: str, problems: DocumentProblems) -> tuple[SplitDocument, Any, LineIndex]:
    """The source split and its front matter loaded, for any function type's checker: the problems of
    its size, its split and its YAML are added to ``problems`` and raised at once (nothing else can be
    checked without them)."""
    if len(source.encode("utf-8", "surrogatepass")) > SOURCE_MAX_BYTES:
        problems.add(1, "", "A source is at most 65,536 bytes")
        problems.raise_if_any()
    split = split_document(source)
    if isinstance(split, list):
        problems.extend(split)
        problems.raise_if_any()
        raise AssertionError("unreachable")  # pragma: no cover
    loaded = load_front_matter(split.front_matter, split.front_matter_first_line)
    if isinstance(loaded, list):
        problems.extend(loaded)
        problems.raise_if_any()
        raise AssertionError("unreachable")  # pragma: no cover
    front_matter, lines = loaded
    return split, front_matter, lines
