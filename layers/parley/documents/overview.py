"""The overview of an interaction function: the function in plain words (``interaction-format.md``,
"The overview").

``get_definition`` shows it before the document, for a person who reads neither Liquid nor YAML. It is
written once, from the document, when the document is saved, so it says only what the document says.
Templates read as the instructions of a reasoning function read (``reasoning-format.md``, "The
overview"): each value a template reads is its name in bold, a condition or loop over several lines
becomes italic lines, one within a line becomes a phrase of that line, comments are left out, ``raw``
keeps its text and any other tag stays as written.

Everything here reads front matter that has already been checked, but it never raises on any JSON-like
value: an odd but valid schema (a boolean, a ``type`` list, no ``type``) still gets a sentence.

**Used by** is not written here: the definitions that use a function are read each time it is returned.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from parley.documents.durations import duration_in_words, parse_duration
from parley.documents.json_schema import json_type_name
from parley.documents.reply_rule import ReplyRule

MESSAGE_CUT: Final = 8192
"""Characters of the message read in words; the rest is named by the line where it continues."""

_MAX_LISTED: Final = 50  # fields, enum values or arguments listed before "and N more"
_MAX_DEPTH: Final = 8  # how deep a schema or an argument is followed before it is summarized

# --------------------------------------------------------------------------------------------------
# Markdown helpers


def _code(value: str) -> str:
    """``value`` as an inline code span that survives backticks and line breaks."""
    text = " ".join(value.split("\n")) if "\n" in value else value
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``"


_LOOSE_UNDERSCORE: Final = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def _escape(text: str) -> str:
    """Escape what would change the Markdown of a name or a condition; intraword ``_`` stays readable."""
    text = re.sub(r"([\\*`\[\]]|<(?=[A-Za-z/!?]))", r"\\\1", text)
    return _LOOSE_UNDERSCORE.sub(r"\\_", text)


def _bold(name: str) -> str:
    return f"**{_escape(name)}**" if name else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _text(value: Any) -> str:
    """Any JSON-like value as text: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _number(value: Any) -> str:
    """A bound as a person reads it: ``2,000`` for 2000, ``0.5`` for 0.5."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _text(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return repr(value)
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return repr(value)
    return f"{value:,}"


def _value(value: Any) -> str:
    """A value of the answer or the input, such as an ``enum`` value, as code."""
    return _code(_text(value))


def _series(items: Sequence[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def _capped(items: Sequence[str], last: str = "and") -> str:
    if len(items) <= _MAX_LISTED:
        return _series(items, last)
    return _series([*items[:_MAX_LISTED], f"{len(items) - _MAX_LISTED:,} more"], last)


def _count(number: int, one: str, many: str) -> str:
    return f"{number:,} {one if number == 1 else many}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sentence(text: str) -> str:
    text = _one_line(text)
    return text if not text or text[-1] in ".!?:" else text + "."


# --------------------------------------------------------------------------------------------------
# Templates in words (reasoning-format.md, "The overview")


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
        return _bold(_path_name(expression))

    def named(match: re.Match[str]) -> str:
        if match.group(1) is not None or match.group(2) in _KEYWORDS:
            return match.group(0)
        return _bold(_path_name(match.group(2)))

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
    return f"_{_escape(_one_line(text))}_  "


def _loop_head(expression: str) -> tuple[str, str]:
    """``item in input.items limit: 3`` → (``item``, ``input.items (limit: 3)``)."""
    match = re.match(r"\s*([A-Za-z_][\w-]*)\s+in\s+(\(.*?\)|\S+)\s*(.*)$", expression, re.DOTALL)
    if match is None:
        return "", _one_line(expression)
    name, collection, rest = match.groups()
    rest = _one_line(rest.replace(",", " ").replace(" :", ":"))
    return name, f"{collection} ({rest})" if rest else collection


def _heading(branch: _Branch) -> str:
    expression = _one_line(branch.expression)
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
    condition = _one_line(block.branches[0].expression)
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
        text = _one_line(raw) or "nothing"
        expression = _one_line(branch.expression)
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


# --------------------------------------------------------------------------------------------------
# Schemas in words


_TYPE_WORDS: Final[Mapping[str, tuple[str, str]]] = {
    "string": ("text", "text"),
    "integer": ("whole number", "whole numbers"),
    "number": ("number", "numbers"),
    "boolean": ("true or false", "true-or-false values"),
    "null": ("null", "nulls"),
    "array": ("list", "lists"),
    "object": ("object", "objects"),
}
_FORMATS: Final[Mapping[str, str]] = {
    "date": "a date such as 2026-10-17",
    "date-time": "a date and time in ISO 8601",
    "time": "a time of day",
    "duration": "an ISO 8601 duration",
    "email": "an email address",
    "uri": "a URI",
    "url": "a URL",
    "uuid": "a UUID",
    "hostname": "a host name",
    "ipv4": "an IPv4 address",
    "ipv6": "an IPv6 address",
}


@dataclass(frozen=True)
class _Resolved:
    """A subschema with its ``$ref`` followed: the keywords that apply and the name of its type."""

    schema: Mapping[str, Any] | bool
    name: str | None = None


class _Schemas:
    """Reads the fields of one schema document, following ``$ref`` into its own ``$defs``."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def resolve(self, schema: Any, depth: int = 0) -> _Resolved:
        if isinstance(schema, bool):
            return _Resolved(schema)
        if not isinstance(schema, Mapping):
            return _Resolved(True)
        reference = schema.get("$ref")
        if not isinstance(reference, str):
            return _Resolved(schema)
        name = _reference_name(reference)
        target = self._target(reference) if depth < _MAX_DEPTH else None
        if target is None:
            return _Resolved(schema, name)
        inner = self.resolve(target, depth + 1)
        own = {key: value for key, value in schema.items() if key != "$ref"}
        if isinstance(inner.schema, Mapping):
            return _Resolved({**inner.schema, **own}, name)
        return _Resolved(own if own else inner.schema, name)

    def _target(self, reference: str) -> Any:
        if reference == "#":
            return self.root
        if not reference.startswith("#/"):
            return None
        node: Any = self.root
        for token in reference[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def types(self, schema: Mapping[str, Any]) -> list[str]:
        """The types a schema allows, written or inferred from its keywords; empty for any value."""
        written = schema.get("type")
        if isinstance(written, str):
            return [written]
        if isinstance(written, list):
            return list(dict.fromkeys(item for item in written if isinstance(item, str)))
        for keywords, inferred in (
            (("properties", "required", "additionalProperties", "minProperties", "maxProperties"), "object"),
            (("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"), "array"),
            (("minLength", "maxLength", "pattern", "format"), "string"),
            (("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), "number"),
        ):
            if any(keyword in schema for keyword in keywords):
                return [inferred]
        values = schema.get("enum") if isinstance(schema.get("enum"), list) else None
        if values is None and "const" in schema:
            values = [schema["const"]]
        if values:
            return list(dict.fromkeys(json_type_name(value) for value in values))
        return []

    def type_words(self, schema: Any, depth: int = 0, plural: bool = False) -> str:
        """``text``, ``whole number``, ``list of text``, ``Address, an object``, ``text or null``…"""
        resolved = self.resolve(schema, depth)
        body = resolved.schema
        if body is True or body == {}:
            words = "values" if plural else "any value"
        elif body is False:
            words = "no value at all"
        else:
            assert isinstance(body, Mapping)
            words = self._kinds(body, depth, plural)
        if resolved.name:
            return f"{resolved.name} ({words})"
        return words

    def _kinds(self, schema: Mapping[str, Any], depth: int, plural: bool) -> str:
        types = self.types(schema)
        if not types:
            for combinator, joiner in (("anyOf", "or"), ("oneOf", "or"), ("allOf", "and")):
                options = schema.get(combinator)
                if isinstance(options, list) and options and depth < _MAX_DEPTH:
                    said = [self.type_words(option, depth + 1, plural) for option in options[:_MAX_LISTED]]
                    return _series(list(dict.fromkeys(said)), joiner)
            return "values" if plural else "any value"
        words: list[str] = []
        for kind in types:
            singular, many = _TYPE_WORDS.get(kind, (kind, kind))
            if kind == "array":
                items = schema.get("items")
                if isinstance(items, Mapping | bool) and depth < _MAX_DEPTH and items is not True:
                    inner = self.type_words(items, depth + 1, plural=True)
                    words.append(f"{many if plural else singular} of {inner}")
                    continue
            words.append(many if plural else singular)
        return _series(words, "or")

    def bounds(self, schema: Any) -> list[str]:
        """The bounds of a value in words: length, range, items, values and format."""
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping):
            return []
        said: list[str] = []
        said.extend(_range(body.get("minLength"), body.get("maxLength"), "character", "characters"))
        if isinstance(body.get("format"), str):
            said.append(_FORMATS.get(body["format"], f"in the format {_code(body['format'])}"))
        if isinstance(body.get("pattern"), str):
            said.append(f"matching {_code(body['pattern'])}")
        said.extend(_numbers(body))
        said.extend(_range(body.get("minItems"), body.get("maxItems"), "item", "items"))
        if body.get("uniqueItems") is True:
            said.append("no item twice")
        said.extend(_range(body.get("minProperties"), body.get("maxProperties"), "field", "fields"))
        if isinstance(body.get("enum"), list):
            values = [_value(value) for value in body["enum"]]
            if len(values) == 1:
                said.append(f"always {values[0]}")
            elif values:
                said.append(f"one of {_capped(values, 'or')}")
        if "const" in body:
            said.append(f"always {_value(body['const'])}")
        if "default" in body:
            said.append(f"{_value(body['default'])} when left out")
        return said

    def description(self, schema: Any) -> str:
        body = self.resolve(schema).schema
        if isinstance(body, Mapping):
            text = body.get("description")
            if isinstance(text, str) and text.strip():
                return _sentence(text)
            title = body.get("title")
            if isinstance(title, str) and title.strip():
                return _sentence(title)
        return ""

    def fields(self, schema: Any) -> list[tuple[str, Any, bool]]:
        """The listed fields of an object schema: each name, its schema and whether it is required."""
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping):
            return []
        properties = _mapping(body.get("properties"))
        written = body.get("required")
        required = [name for name in written if isinstance(name, str)] if isinstance(written, list) else []
        listed: list[tuple[str, Any, bool]] = [
            (str(name), subschema, name in required) for name, subschema in properties.items()
        ]
        listed.extend((name, True, True) for name in dict.fromkeys(required) if name not in properties)
        return listed

    def is_object(self, schema: Any) -> bool:
        body = self.resolve(schema).schema
        return isinstance(body, Mapping) and "object" in self.types(body)

    def items(self, schema: Any) -> Any:
        """The item schema of a list schema whose items are objects, else ``None``."""
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping) or "array" not in self.types(body):
            return None
        items = body.get("items")
        return items if isinstance(items, Mapping) and self.is_object(items) else None

    def others(self, schema: Any) -> Any:
        body = self.resolve(schema).schema
        if not isinstance(body, Mapping):
            return None
        extra = body.get("additionalProperties")
        return extra if isinstance(extra, Mapping) else None


def _reference_name(reference: str) -> str:
    if reference == "#":
        return "the whole shape again"
    tail = reference.rstrip("/").rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    return tail or reference


def _is_count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _range(low: Any, high: Any, one: str, many: str) -> list[str]:
    low = low if _is_count(low) else None
    high = high if _is_count(high) else None
    if low is not None and high is not None:
        if low == high:
            return [f"exactly {_number(low)} {one if low == 1 else many}"]
        return [f"{_number(low)} to {_number(high)} {many}"]
    if low is not None:
        return [f"at least {_number(low)} {one if low == 1 else many}"] if low else []
    if high is not None:
        return [f"at most {_number(high)} {one if high == 1 else many}"]
    return []


def _numbers(schema: Mapping[str, Any]) -> list[str]:
    low, high = schema.get("minimum"), schema.get("maximum")
    low = low if _is_count(low) else None
    high = high if _is_count(high) else None
    above, below = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    said: list[str] = []
    if above is True and low is not None:  # draft-04 style: the minimum itself is excluded
        said.append(f"more than {_number(low)}")
        low = None
    elif _is_count(above):
        said.append(f"more than {_number(above)}")
    if below is True and high is not None:
        said.append(f"less than {_number(high)}")
        high = None
    elif _is_count(below):
        said.append(f"less than {_number(below)}")
    if low is not None and high is not None:
        said.insert(0, f"from {_number(low)} to {_number(high)}")
    elif low is not None:
        said.insert(0, f"at least {_number(low)}")
    elif high is not None:
        said.insert(0, f"at most {_number(high)}")
    if _is_count(schema.get("multipleOf")):
        said.append(f"a multiple of {_number(schema['multipleOf'])}")
    return said


def _field_lines(schemas: _Schemas, schema: Any, indent: str = "", nested: bool = True) -> list[str]:
    """A bullet for each field of an object schema; one level of nesting listed, deeper summarized."""
    lines: list[str] = []
    listed = schemas.fields(schema)
    for name, subschema, required in listed[:_MAX_LISTED]:
        said = [schemas.type_words(subschema), "required" if required else "optional"]
        said.extend(schemas.bounds(subschema))
        inner_fields: Any = None
        if schemas.is_object(subschema):
            inner_fields = subschema
        elif schemas.items(subschema) is not None:
            inner_fields = schemas.items(subschema)
        inner = schemas.fields(inner_fields) if inner_fields is not None else []
        if inner and not nested:
            names = [_bold(inner_name) for inner_name, _, _ in inner]
            said.append(f"with the {_count(len(names), 'field', 'fields')} {_capped(names)}")
        line = f"{indent}- {_bold(name)}: {', '.join(said)}"
        description = schemas.description(subschema)
        if inner and nested:
            lead = "each with" if schemas.items(subschema) is not None else "with"
            lines.append(f"{line}, {lead}:" + (f" {description}" if description else ""))
            lines.extend(_field_lines(schemas, inner_fields, indent + "  ", nested=False))
        else:
            lines.append(f"{line}." + (f" {description}" if description else ""))
    if len(listed) > _MAX_LISTED:
        lines.append(f"{indent}- and {_count(len(listed) - _MAX_LISTED, 'field', 'fields')} more.")
    others = schemas.others(schema)
    if others is not None and (listed or nested):
        lines.append(f"{indent}- any other field: {schemas.type_words(others)}.")
    return lines


def _schema_in_words(schema: Any, empty: str) -> list[str]:
    """Paragraphs describing a whole input or answer schema: its fields, or its type and bounds."""
    schemas = _Schemas(schema)
    lines: list[str] = []
    description = schemas.description(schema)
    if description:
        lines += [description, ""]
    if schemas.is_object(schema) or schemas.fields(schema):
        fields = _field_lines(schemas, schema)
        if fields:
            return [*lines, *fields]
        return [*lines, empty]
    items = schemas.items(schema)
    bounds = schemas.bounds(schema)
    if items is not None and schemas.fields(items):
        head = f"A list of objects{', ' + ', '.join(bounds) if bounds else ''}, each with:"
        return [*lines, head, "", *_field_lines(schemas, items)]
    words = schemas.type_words(schema)
    return [*lines, _sentence(f"It is {', '.join([words, *bounds])}")]


# --------------------------------------------------------------------------------------------------
# The overview


def _template_line(value: Any) -> str:
    """A short template such as ``to`` read in words on one line."""
    if not isinstance(value, str):
        return _code(_text(value))
    return _one_line(template_in_words(value)) or "nobody"


def _tool(block: Mapping[str, Any], key: str = "tool") -> str:
    return _code(_text(block.get(key, "")))


def _duration(value: Any, fallback: str) -> str:
    if not isinstance(value, str):
        return fallback
    try:
        return duration_in_words(parse_duration(value))
    except (ValueError, OverflowError):
        return _code(value)


def _is_plain(value: Any) -> bool:
    """A value with no template in it and no structure within, shown as JSON on one line."""
    if isinstance(value, str):
        return "{{" not in value and "{%" not in value
    return not isinstance(value, Mapping | list)


def _arguments(value: Mapping[str, Any] | list[Any], indent: str = "", depth: int = 0) -> list[str]:
    """The arguments of ``call.with`` as bullets, their templates read in words."""
    lines: list[str] = []
    entries = (
        [(_code(str(key)), argument) for key, argument in value.items()]
        if isinstance(value, Mapping)
        else [(f"item {index:,}", argument) for index, argument in enumerate(value, 1)]
    )
    for label, argument in entries[:_MAX_LISTED]:
        if isinstance(argument, list) and all(_is_plain(item) for item in argument):
            lines.append(f"{indent}- {label}: {_value(argument)}")
        elif isinstance(argument, Mapping | list) and argument and depth < 2:
            lines.append(f"{indent}- {label}:")
            lines.extend(_arguments(argument, indent + "  ", depth + 1))
        elif isinstance(argument, str):
            lines.append(f"{indent}- {label}: {_template_line(argument) if argument else '(empty text)'}")
        else:
            lines.append(f"{indent}- {label}: {_value(argument)}")
    if len(entries) > _MAX_LISTED:
        lines.append(f"{indent}- and {_count(len(entries) - _MAX_LISTED, 'argument', 'arguments')} more")
    return lines


def _quote(text: str) -> list[str]:
    """The message as a block quote; trailing spaces stay, since they may be the author's line breaks."""
    lines = text.strip("\n").split("\n")
    return [f"> {line}" if line.strip() else ">" for line in lines]


def _section(title: str, *paragraphs: str | list[str]) -> list[str]:
    lines = [f"**{title}**", ""]
    for paragraph in paragraphs:
        lines.extend(paragraph if isinstance(paragraph, list) else [paragraph])
        lines.append("")
    return lines


def _asks_a_system(front_matter: Mapping[str, Any]) -> list[str]:
    call = _mapping(front_matter.get("call"))
    input_schema = _mapping(front_matter.get("input")).get("schema")
    output_schema = _mapping(front_matter.get("output")).get("schema")
    lines = _section(
        "Who it asks",
        f"The tool {_tool(call)} on the server {_tool(call, 'server')}, called once in each run. "
        "It asks no person and sends no message.",
    )
    sends: list[str | list[str]] = []
    if input_schema is None:
        sends.append("The document gives no input schema, so its input may hold any fields.")
    else:
        sends += ["What its input holds:", _schema_in_words(input_schema, "It takes no input fields.")]
    with_ = call.get("with")
    if isinstance(with_, Mapping) and with_:
        sends += ["The call's arguments:", _arguments(with_)]
    else:
        sends.append("The call takes no arguments.")
    lines += _section("What it sends", *sends)
    read = call.get("read")
    if isinstance(read, str) and read:
        where = f"The part of the tool's answer at {_code(read)}, which becomes the run's output."
    else:
        where = "The tool's whole answer, which becomes the run's output."
    if output_schema is None:
        lines += _section("What it reads", where)
    else:
        lines += _section("What it reads", where, _schema_in_words(output_schema, "An object."))
    return lines


def _reply_rule_lines(rule: ReplyRule, output_schema: Any) -> list[str]:
    schemas = _Schemas(output_schema)
    properties = {name: subschema for name, subschema, _ in schemas.fields(output_schema)}
    lines: list[str] = []
    for name, part in rule.properties.items():
        if part.part == "word":
            said = "the first word of the reply"
            body = schemas.resolve(properties.get(name, True)).schema
            written = _mapping(body).get("enum")
            values = (
                [value for value in written if isinstance(value, str)] if isinstance(written, list) else []
            )
            values += [value for value in part.words if value not in values]
            if values:
                said += f", one of {_capped([_code(value) for value in values], 'or')}"
            meanings = [
                f"{_series([chr(34) + word + chr(34) for word in words])} "
                f"{'also means' if len(words) == 1 else 'also mean'} {_code(value)}"
                for value, words in part.words.items()
                if words
            ]
            if meanings:
                said += "; " + "; ".join(meanings)
        elif part.part == "rest":
            said = "what follows the first word"
        else:
            said = "the whole reply"
        lines.append(f"- {_bold(name)}: {said}.")
    if rule.derived:
        lines.append("")
        lines.append("This rule is made from the answer schema, so it reads no other field of the answer.")
    return lines


def _asks_a_person(
    front_matter: Mapping[str, Any], body: str, body_first_line: int, rule: ReplyRule | None
) -> list[str]:
    input_schema = _mapping(front_matter.get("input")).get("schema")
    output_schema = _mapping(front_matter.get("output")).get("schema")
    deliver = front_matter.get("deliver")
    replies = front_matter.get("replies")
    lines: list[str] = []
    if input_schema is None:
        lines += _section(
            "What it needs", "The document gives no input schema, so its input may hold any fields."
        )
    else:
        lines += _section("What it needs", _schema_in_words(input_schema, "It takes no input fields."))

    to = _template_line(front_matter.get("to", ""))
    answerer = to
    who = f"It asks {to}."
    if "from" in front_matter:
        answerer = _template_line(front_matter.get("from"))
        if answerer != to:
            who = f"It asks {to}, and only the answer of {answerer} counts."
    lines += _section("Who it asks", who)

    message, line = cut_template_in_words(body, body_first_line)
    sends: list[str | list[str]] = [_quote(message) if message.strip() else "An empty message."]
    if line is not None:
        sends.append(f"_The message is cut here; it continues on line {line:,} of the document._")
    lines += _section("What it sends", *sends)

    if isinstance(deliver, Mapping):
        where = (
            f"It is sent with the tool {_tool(deliver)} on the server {_tool(deliver, 'server')}. "
            "An attempt that fails is tried again, five attempts in all."
        )
    else:
        where = "It waits in the playbook's inbox."
    lines += _section("Where", where)

    expires = _duration(front_matter.get("expires"), "")
    if output_schema is None:
        waits = f"Its request expires after {expires}." if expires else "The document gives no expiry."
    elif expires:
        waits = f"It waits {expires} for an answer. A request nobody answered by then ends unanswered."
    else:
        waits = "The document gives no expiry."
    lines += _section("How long it waits", waits)

    if output_schema is None:
        delivered = (
            "once it is delivered" if isinstance(deliver, Mapping) else "as soon as it is in the inbox"
        )
        lines += _section(
            "What answer it expects",
            f"None: it is a notification, which takes no answer and succeeds {delivered}.",
        )
    else:
        lines += _section("What answer it expects", _schema_in_words(output_schema, "An object."))

    if isinstance(replies, Mapping) or rule is not None:
        lines += _section("How it reads replies", *_replies(front_matter, answerer, rule, output_schema))
    return lines


def _replies(
    front_matter: Mapping[str, Any], answerer: str, rule: ReplyRule | None, output_schema: Any
) -> list[str | list[str]]:
    deliver = _mapping(front_matter.get("deliver"))
    replies = front_matter.get("replies")
    paragraphs: list[str | list[str]] = []
    if isinstance(replies, Mapping):
        wait = _duration(replies.get("wait", "PT5S"), "5 seconds")
        said = (
            f"It reads the replies to its message with the tool {_tool(replies)} on the server "
            f"{_tool(deliver, 'server')}, waiting at least {wait} between two reads. "
            f"Only a reply from {answerer} counts."
        )
        tell = replies.get("tell")
        if isinstance(tell, Mapping):
            tool = _tool(tell) if "tool" in tell else _tool(deliver)
            said += (
                f" A reply that is not an answer is refused, and {answerer} is told how to answer"
                f" through {tool}."
            )
        else:
            said += " A reply that is not an answer is refused, and nobody is told."
        paragraphs.append(said)
    if rule is not None:
        paragraphs += [
            "It takes the answer from a reply this way; case and punctuation around a word do not matter:",
            _reply_rule_lines(rule, output_schema),
        ]
    else:
        paragraphs.append("It has no reply rule, so a reply is not read as an answer.")
    return paragraphs


def write_overview(
    front_matter: Mapping[str, Any], body: str, *, body_first_line: int, reply_rule: ReplyRule | None
) -> str:
    """The overview of an interaction function, in Markdown (``interaction-format.md``, "The overview").

    ``front_matter`` is the checked front matter as plain JSON-like values, ``body`` the message (empty
    for a function with ``call``) and ``body_first_line`` the line of the document the message starts
    on, so a message cut past 8,192 characters can say where it continues. ``reply_rule`` is the rule
    written in ``reply`` or made from the answer schema, ``None`` when the function reads no replies.
    """
    front_matter = _mapping(front_matter)
    description = front_matter.get("description")
    if isinstance(description, str) and description.strip():
        lines = [description.strip(), ""]
    else:
        lines = ["This function has no description yet.", ""]
    if "call" in front_matter:
        lines += _asks_a_system(front_matter)
    else:
        lines += _asks_a_person(
            front_matter, body if isinstance(body, str) else "", body_first_line, reply_rule
        )
    return "\n".join(lines).rstrip("\n") + "\n"
