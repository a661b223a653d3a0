"""JSON Pointers (RFC 6901), as ``call.read``, ``deliver.sent`` and ``replies.read`` write them
(``interaction-format.md``, "Templates and pointers"), and as problems name places in a document.

A pointer such as ``/messages`` starts with a slash, writes ``~`` as ``~0`` and a slash within a name as
``~1``. Reading one never raises: a place that is not there is simply not found.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Final

_BAD_ESCAPE: Final = re.compile(r"~(?![01])")
_INDEX: Final = re.compile(r"0|[1-9][0-9]*")


def escape_token(name: str) -> str:
    """One name as a pointer's token: ``~`` as ``~0``, ``/`` as ``~1``."""
    return name.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """The name a token stands for (``~1`` before ``~0``, so ``~01`` stays ``~1``)."""
    return token.replace("~1", "/").replace("~0", "~")


def join_pointer(base: str, *tokens: str | int) -> str:
    """``base`` with each name (or list index) appended: ``join_pointer("/a", "b/c")`` is ``/a/b~1c``."""
    return base + "".join("/" + escape_token(str(token)) for token in tokens)


def pointer_problem(text: object, *, allow_empty: bool = False) -> str | None:
    """Why ``text`` is not a JSON Pointer, or ``None``. The empty pointer (the whole value) is the caller's
    choice: ``call.read`` refuses it."""
    if not isinstance(text, str):
        return "Expected a JSON Pointer as text, such as /messages"
    if text == "":
        return None if allow_empty else "Expected a JSON Pointer such as /messages, not an empty one"
    if not text.startswith("/"):
        return f"A JSON Pointer starts with a slash, such as /{escape_token(text[:40])}"
    bad = _BAD_ESCAPE.search(text)
    if bad is not None:
        return (
            "A JSON Pointer writes ~ as ~0 and a slash within a name as ~1; "
            f"'~' at character {bad.start() + 1} is followed by neither 0 nor 1"
        )
    return None


def split_pointer(pointer: str) -> list[str]:
    """The names of a valid pointer, unescaped. Raises :class:`ValueError` for an invalid one."""
    problem = pointer_problem(pointer, allow_empty=True)
    if problem is not None:
        raise ValueError(problem)
    if pointer == "":
        return []
    return [unescape_token(token) for token in pointer[1:].split("/")]


def resolve_pointer(document: Any, pointer: str) -> tuple[bool, Any]:
    """``(True, value)`` where ``pointer`` leads in ``document``, else ``(False, None)``.

    A list index is written without leading zeros, and ``-`` (past the end) is never found (RFC 6901).
    """
    try:
        names = split_pointer(pointer)
    except ValueError:
        return False, None
    value = document
    for name in names:
        if isinstance(value, dict):
            if name not in value:
                return False, None
            value = value[name]
        elif isinstance(value, list):
            # a long index is past the end of any list, and ``int`` refuses very long digit strings
            if _INDEX.fullmatch(name) is None or len(name) > 18:
                return False, None
            index = int(name)
            if index >= len(value):
                return False, None
            value = value[index]
        else:
            return False, None
    return True, value


#: "Bounds": what ``deliver.sent`` reads, a message's id and sender, the conversation key: 256 bytes.
IDENTITY_MAX_BYTES: Final = 256


def identity_text(value: Any) -> str | None:
    """A value read at a pointer as an identity (``deliver.sent``, ``replies.read.each`` ``id``,
    ``sender`` and ``to``): a text, or a whole number as its decimal text, of at most 256 bytes without
    a control character; else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    elif isinstance(value, str):
        text = value
    else:
        return None
    if not text or len(text.encode("utf-8", "surrogatepass")) > IDENTITY_MAX_BYTES:
        return None
    if any(unicodedata.category(char) == "Cc" for char in text):
        return None
    return text
