"""A template in words (``reasoning-format.md``, "The overview"; ``interaction-format.md``, "The
overview"): each value a template reads is its name in bold, a condition or loop over several lines
becomes italic lines, one within a line becomes a phrase of that line, comments are left out, ``raw``
keeps its text and any other tag stays as written. Every function type's overview reads its templates
so.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from parley.documents.words import bold, escape_markdown, one_line

MESSAGE_CUT: Final = 8192
"""Characters of the message read in words; the rest is named by the line where it continues."""


@dataclass
class _Text:
    text: str


@dataclass
class _Output:
    markup: str


@dataclass
class _Leaf:
    """A tag that reads as written, or ``None``: a comment or an end tag, which reads as nothing."""

    source: str | None


@dataclass
class _Branch:
    tag: str
    expression: str
    source: str
    children: list[_Node] = field(default_factory=list)


@dataclass
class _Block:
    kind: str
    line: int
    branches: list[_Branch]
    end_line: int | None = None
    end_source: str | None = None


_Node = _Text | _Output | _Leaf | _Block

_READ_BLOCKS: Final = frozenset({"if", "unless", "for"})
"""Blocks read in words; other blocks keep their tags as written and have their content read."""
_WRITTEN_BLOCKS: Final = frozenset({"case", "tablerow", "capture", "ifchanged"})
_BRANCH_TAGS: Final[Mapping[str, frozenset[str]]] = {
    "if": frozenset({"elsif", "else"}),
    "unless": frozenset({"elsif", "else"}),
    "for": frozenset({"else"}),
    "case": frozenset({"when", "else"}),
}
_OPENING: Final = re.compile(r"\{[{%]")
_TAG_NAME: Final = re.compile(r"\s*(#|[A-Za-z_]\w*)")
_END_RAW: Final = re.compile(r"\{%-?\s*endraw\s*-?%\}")
_COMMENT_TAG: Final = re.compile(r"\{%-?\s*(endcomment|comment)\b")
_MAX_NESTING: Final = 64  # blocks nested deeper read as written, so reading never recurses too far


def _strip_markup(inner: str) -> str:
    """The markup inside ``{{ }}`` or ``{% %}`` without its whitespace control dashes."""
    if inner.startswith("-"):
        inner = inner[1:]
    if inner.endswith("-"):
        inner = inner[:-1]
    return inner.strip()


class _Reader:
    """Reads one template into a tree of text, outputs, tags and blocks, with the line of each tag."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.newlines = [index for index, char in enumerate(source) if char == "\n"]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset)

    def tokens(self) -> Iterable[tuple[str, str, int, int]]:
        """``(kind, text, start, end)`` with kind ``text``, ``output`` or ``tag``; linear in the source."""
        source, position, text_from = self.source, 0, 0
        closable = {"{{": True, "{%": True}
        while True:
            match = _OPENING.search(source, position)
            if match is None:
                break
            start, opening = match.start(), match.group()
            closer = "}}" if opening == "{{" else "%}"
            end = source.find(closer, start + 2) if closable[opening] else -1
            if end < 0:
                closable[opening] = False  # no later opening of this kind closes either
                position = start + 1
                continue
            end += 2
            if start > text_from:
                yield "text", source[text_from:start], text_from, start
            inner = _strip_markup(source[start + 2 : end - 2])
            if opening == "{{":
                yield "output", inner, start, end
                position = text_from = end
                continue
            name = _tag_name(inner)
            if name == "raw":
                closing = _END_RAW.search(source, end)
                stop = closing.start() if closing else len(source)
                yield "unread", "", start, end
                if stop > end:
                    yield "text", source[end:stop], end, stop
                if closing:
                    yield "unread", "", closing.start(), closing.end()
                position = text_from = closing.end() if closing else len(source)
                continue
            if name == "comment":
                position = text_from = self._after_comment(end)
                yield "unread", "", start, position
                continue
            yield "tag", inner, start, end
            position = text_from = end
        if text_from < len(source):
            yield "text", source[text_from:], text_from, len(source)

    def _after_comment(self, position: int) -> int:
        """Where a comment block ends: after its ``endcomment``, counting nested comment blocks."""
        depth = 1
        while True:
            match = _COMMENT_TAG.search(self.source, position)
            if match is None:
                return len(self.source)
            end = self.source.find("%}", match.end())
            if end < 0:
                return len(self.source)
            position = end + 2
            depth += -1 if match.group(1) == "endcomment" else 1
            if depth == 0:
                return position

    def tree(self) -> list[_Node]:
        root: list[_Node] = []
        stack: list[_Block] = []
        overflow: list[str] = []  # blocks opened past _MAX_NESTING, read as written

        def children() -> list[_Node]:
            return stack[-1].branches[-1].children if stack else root

        for kind, text, start, end in self.tokens():
            if kind == "text":
                children().append(_Text(text))
            elif kind == "output":
                children().append(_Output(text))
            elif kind == "unread":
                children().append(_Leaf(None))
            else:
                self._tag(text, self.source[start:end], self.line(start), stack, overflow, children())
        return root

    @staticmethod
    def _tag(
        markup: str, source: str, line: int, stack: list[_Block], overflow: list[str], children: list[_Node]
    ) -> None:
        name = _tag_name(markup)
        expression = markup.strip()[len(name) :].strip()
        if name == "#":
            children.append(_Leaf(None))
        elif name == "echo":
            children.append(_Output(expression))
        elif name in _READ_BLOCKS or name in _WRITTEN_BLOCKS:
            if len(stack) >= _MAX_NESTING:
                overflow.append(name)
                children.append(_Leaf(source))
                return
            block = _Block(name, line, [_Branch(name, expression, source)])
            children.append(block)
            stack.append(block)
        elif overflow and name == f"end{overflow[-1]}":
            overflow.pop()
            children.append(_Leaf(source))
        elif stack and not overflow and name in _BRANCH_TAGS.get(stack[-1].kind, ()):
            stack[-1].branches.append(_Branch(name, expression, source))
        elif name.startswith("end") and any(block.kind == name[3:] for block in stack):
            while stack:
                block = stack.pop()
                if block.kind == name[3:]:
                    block.end_line, block.end_source = line, source
                    break
        else:
            children.append(_Leaf(source))


def _tag_name(markup: str) -> str:
    match = _TAG_NAME.match(markup)
    if match is None:
        return ""
    return match.group(1)


# How an output expression names the value it reads.
_QUOTED: Final = re.compile(r"""^(?:"([^"]*)"|'([^']*)')$""")
_LITERAL: Final = re.compile(r"^(?:-?\d+(?:\.\d+)?|true|false|nil|null|empty|blank|\(.*\))$", re.DOTALL)
_PATH: Final = re.compile(
    r"""^[A-Za-z_][\w-]*\??(?:\s*\.\s*[A-Za-z_][\w-]*\??|\s*\[\s*(?:"[^"]*"|'[^']*'|-?\d+|[\w.-]+)\s*\])*$"""
)
_SEGMENT: Final = re.compile(
    r"""^([A-Za-z_][\w-]*)\??|\.\s*([A-Za-z_][\w-]*)\??|\[\s*(?:"([^"]*)"|'([^']*)'|(-?\d+)|([\w.-]+))\s*\]"""
)
_PATH_IN_TEXT: Final = re.compile(
    r"""("[^"]*"|'[^']*')|(?<![\w.])([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[[^\]]*\])*)"""
)
_KEYWORDS: Final = frozenset(
    {"and", "or", "not", "contains", "if", "else", "true", "false", "nil", "null", "empty", "blank", "in"}
)
_COLLECTION_PROPERTIES: Final = frozenset({"size", "first", "last"})


def _split_filters(markup: str) -> list[str]:
    """Split ``a | f: 1 | g`` at the bars outside quotes."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in markup:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "|":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _path_name(path: str) -> str:
    """The name a path reads: ``input.owner`` → ``owner``, ``input.items[0].name`` → ``name``."""
    names: list[str] = []
    position = 0
    path = path.strip()
    while position < len(path):
        while position < len(path) and path[position].isspace():
            position += 1
        match = _SEGMENT.match(path, position)
        if match is None:
            break
        identifier = match.group(1) or match.group(2)
        quoted = match.group(3) if match.group(3) is not None else match.group(4)
        if identifier is not None:
            names.append(identifier)
        elif quoted is not None:
            names.append(quoted)
        position = match.end()
    while len(names) > 2 and names[-1] in _COLLECTION_PROPERTIES:
        names.pop()
    return names[-1] if names else path


def _output_in_words(markup: str) -> str:
    """``{{ input.brief | upcase }}`` → **brief**: the name of the value it reads, without its filters."""
    expression = _split_filters(markup)[0].strip()
    if not expression:
        return ""
    quoted = _QUOTED.match(expression)
    if quoted:
        return quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
    if _LITERAL.match(expression):
        return expression
    if _PATH.match(expression):
        return bold(_path_name(expression))

    def named(match: re.Match[str]) -> str:
        if match.group(1) is not None or match.group(2) in _KEYWORDS:
            return match.group(0)
        return bold(_path_name(match.group(2)))

    return _PATH_IN_TEXT.sub(named, expression)


# The read template is a list of segments: text, a line of its own, or a mark of a tag that reads as
# nothing, so that a line holding only such tags leaves no blank line behind.
@dataclass
class _Line:
    text: str


@dataclass
class _Gap:
    pass


_Segment = str | _Line | _Gap


def _italic(text: str) -> str:
    """An italic line; its two trailing spaces keep it a line of its own when the Markdown is shown."""
    return f"_{escape_markdown(one_line(text))}_  "


def _loop_head(expression: str) -> tuple[str, str]:
    """``item in input.items limit: 3`` → (``item``, ``input.items (limit: 3)``)."""
    match = re.match(r"\s*([A-Za-z_][\w-]*)\s+in\s+(\(.*?\)|\S+)\s*(.*)$", expression, re.DOTALL)
    if match is None:
        return "", one_line(expression)
    name, collection, rest = match.groups()
    rest = one_line(rest.replace(",", " ").replace(" :", ":"))
    return name, f"{collection} ({rest})" if rest else collection


def _heading(branch: _Branch) -> str:
    expression = one_line(branch.expression)
    if branch.tag == "else":
        return "Otherwise:"
    if branch.tag == "elsif":
        return f"Or when {expression}:"
    if branch.tag == "unless":
        return f"Unless {expression}:"
    if branch.tag == "for":
        name, collection = _loop_head(branch.expression)
        return f"For each {name} of {collection}:" if name else f"For each {collection}:"
    return f"When {expression}:"


def _segments(nodes: Sequence[_Node], depth: int = 0) -> list[_Segment]:
    out: list[_Segment] = []
    for node in nodes:
        if isinstance(node, _Text):
            out.append(node.text)
        elif isinstance(node, _Output):
            out.append(_output_in_words(node.markup))
        elif isinstance(node, _Leaf):
            out.append(_Gap() if node.source is None else node.source)
        elif node.kind not in _READ_BLOCKS or depth > 200:
            for branch in node.branches:
                out.append(branch.source)
                out.extend(_segments(branch.children, depth + 1))
            out.append(_Gap() if node.end_source is None else node.end_source)
        elif node.end_line is None or node.end_line > node.line:
            for branch in node.branches:
                out.append(_Line(_italic(_heading(branch))))
                out.extend(_segments(branch.children, depth + 1))
            out.append(_Gap())
        else:
            out.append(_phrase(node, depth))
    return out


def _inline(nodes: Sequence[_Node], depth: int) -> str:
    parts: list[str] = []
    for segment in _segments(nodes, depth + 1):
        if isinstance(segment, str):
            parts.append(segment.replace("\n", " "))
        elif isinstance(segment, _Line):
            parts.append(f" {segment.text} ")
    return "".join(parts)


def _separator(children: list[_Node]) -> str | None:
    """The separator of ``{% unless forloop.last %}, {% endunless %}`` closing a loop's body."""
    trimmed = list(children)
    while trimmed and isinstance(trimmed[-1], _Text | _Leaf) and _inline(trimmed[-1:], 0).strip() == "":
        trimmed.pop()
    if not trimmed or not isinstance(trimmed[-1], _Block):
        return None
    block = trimmed[-1]
    condition = one_line(block.branches[0].expression)
    sole = len(block.branches) == 1
    closes_unless_last = (block.kind == "unless" and condition == "forloop.last") or (
        block.kind == "if" and condition in ("not forloop.last", "forloop.last == false")
    )
    if sole and closes_unless_last:
        separator = block.branches[0].children
    elif (
        block.kind == "if"
        and condition == "forloop.last"
        and len(block.branches) == 2
        and block.branches[1].tag == "else"
        and not _inline(block.branches[0].children, 0).strip()
    ):
        separator = block.branches[1].children
    else:
        return None
    if not all(isinstance(node, _Text) for node in separator):
        return None
    children[:] = trimmed[:-1]
    text = "".join(node.text for node in separator if isinstance(node, _Text))
    named = {",": "commas", ";": "semicolons", "": "spaces", "/": "slashes", "|": "bars", "-": "dashes"}
    stripped = text.strip()
    if stripped in named and (stripped or text):
        return named[stripped]
    return f'"{stripped}"' if stripped else None


def _phrase(block: _Block, depth: int) -> str:
    """A condition or loop within one line, as a phrase: ``Dear when input.vip, otherwise Hello``."""
    separator: str | None = None
    texts: list[str] = []
    for branch in block.branches:
        body = list(branch.children)
        if branch.tag == "for":
            separator = _separator(body)
        texts.append(_inline(body, depth))
    lead = texts[0][: len(texts[0]) - len(texts[0].lstrip())]
    trail = texts[-1][len(texts[-1].rstrip()) :]
    parts: list[str] = []
    for branch, raw in zip(block.branches, texts, strict=True):
        text = one_line(raw) or "nothing"
        expression = one_line(branch.expression)
        if branch.tag == "else":
            parts.append(f"otherwise {text}")
        elif branch.tag == "unless":
            parts.append(f"{text} unless {expression}")
        elif branch.tag == "for":
            name, collection = _loop_head(branch.expression)
            each = f"each {name} of {collection}" if name else f"each of {collection}"
            parts.append(f"{each} as {text}" + (f", separated by {separator}" if separator else ""))
        else:
            parts.append(f"{text} when {expression}")
    return lead + ", ".join(parts) + trail


def _is_italic_line(line: str) -> bool:
    return line.startswith("_") and line.endswith(":_  ")


def _assemble(segments: Sequence[_Segment]) -> str:
    """Join segments into lines; a line left holding only tags that read as nothing is dropped."""
    lines: list[str] = []
    current: list[str] = []
    marked = False

    def finish(keep_blank: bool) -> None:
        nonlocal current, marked
        text = "".join(current)
        if text.strip() or (keep_blank and not marked):
            lines.append(text.rstrip() if marked else text)
        current, marked = [], False

    for segment in segments:
        if isinstance(segment, _Gap):
            marked = True
        elif isinstance(segment, _Line):
            if "".join(current).strip():
                current = ["".join(current).rstrip()]
                finish(True)
            current = []
            if lines and lines[-1].strip() and not _is_italic_line(lines[-1]):
                lines.append("")  # a paragraph of its own, so the shown Markdown keeps it a line
            lines.append(segment.text)
            marked = True
        else:
            pieces = segment.split("\n")
            for index, piece in enumerate(pieces):
                if index:
                    finish(True)
                current.append(piece)
    text = "".join(current)
    if text.strip() or not marked:
        lines.append(text)
    return "\n".join(lines)


def template_in_words(source: str) -> str:
    """A Liquid template as a person reads it (``reasoning-format.md``, "The overview")."""
    return _assemble(_segments(_Reader(source).tree()))


def _cut(source: str) -> tuple[str, int | None]:
    """The message up to ``MESSAGE_CUT`` characters, never within a tag, and the offset it continues at."""
    if len(source) <= MESSAGE_CUT:
        return source, None
    cut = MESSAGE_CUT
    for kind, _, start, end in _Reader(source).tokens():
        if start >= cut:
            break
        if end > cut and kind != "text":
            cut = start
            break
    return source[:cut], cut


def cut_template_in_words(source: str, first_line: int) -> tuple[str, int | None]:
    """A template that may be long, such as a message, read in words up to ``MESSAGE_CUT`` characters.

    Returns the reading and, when it was cut, the line of the document where the template continues
    (``first_line`` is the document line the template starts on). The cut never falls within a tag.
    """
    shown, continues_at = _cut(source)
    reading = template_in_words(shown)
    if continues_at is None:
        return reading, None
    return reading, first_line + source.count("\n", 0, continues_at)
