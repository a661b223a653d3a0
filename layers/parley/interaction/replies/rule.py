"""Reading an answer from a reply's words with the reply rule (``interaction-format.md``, "Answering by
reply"; the rule itself is resolved by :func:`parley.interaction.reply_rule.resolve_reply_rule`).

- ``word``: the reply's first word (split on whitespace), compared without case and without the
  punctuation around it (:func:`~parley.interaction.reply_rule.normalize_word`) with the property's
  ``enum`` values and the ``words`` the rule lists for them; the answer holds the ``enum`` value itself.
  For a property without an ``enum``, the first word is taken as written.
- ``rest``: what follows the first word, without the whitespace around it and without a separator
  such as ``-``, ``—`` or ``:`` that stands alone before it (``revise — name the role`` keeps
  ``name the role``). An empty rest is left out of the answer for an optional property, so that
  ``approve`` alone answers ``{verdict: approve}``; for a required one it is kept, and the schema judges.
- ``text``: the whole reply, without the whitespace around it.

The answer is then checked against the request's answer schema, its problems under ``/answer``.
Replies past 8 KiB ("Bounds": a reply's words) and empty ones are refused before they are read.

A problem names the values a word may be and never repeats the reply's words: ``reply_refused`` keeps
the reply's identity and never its words.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from parley.documents.json_schema import json_size, validate_instance
from parley.documents.pointers import join_pointer
from parley.errors import ErrorEntry
from parley.interaction.reply_rule import ReplyRule, RulePart, _enum, _property_schemas, normalize_word

#: "Bounds": a reply's words, as UTF-8.
REPLY_MAX_BYTES: Final = 8 * 1024
#: "Answering a request": an answer takes at most 64 KiB as JSON.
ANSWER_MAX_BYTES: Final = 64 * 1024
#: Values named in one problem before the rest are counted.
VALUES_SHOWN: Final = 20
ANSWER_AT: Final = "/answer"

Unread = Literal["unreadable", "too_long"]


@dataclass(frozen=True)
class ReplyReading:
    """What the rule made of a reply: the ``answer``, or why not (``refused``) and the ``problems``."""

    answer: dict[str, Any] | None
    refused: Unread | None = None
    problems: tuple[ErrorEntry, ...] = field(default_factory=tuple)

    @property
    def answered(self) -> bool:
        return self.answer is not None


def reply_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def read_reply(rule: ReplyRule, text: str, answer_schema: Any) -> ReplyReading:
    """Apply ``rule`` to the words of a reply, and check the answer against ``answer_schema``."""
    if reply_bytes(text) > REPLY_MAX_BYTES:
        detail = f"A reply takes at most 8 KiB ({REPLY_MAX_BYTES} bytes)"
        return ReplyReading(None, "too_long", (ErrorEntry(ANSWER_AT, detail),))
    whole = text.strip()
    if not whole:
        return ReplyReading(None, "unreadable", (ErrorEntry(ANSWER_AT, "The reply has no words"),))
    first, rest = _split_first_word(whole)
    properties = _property_schemas(answer_schema)
    required = _required(answer_schema)
    answer: dict[str, Any] = {}
    problems: list[ErrorEntry] = []
    for name, part in rule.properties.items():
        if part.part == "text":
            answer[name] = whole
        elif part.part == "rest":
            if rest or name in required:
                answer[name] = rest
        else:
            value, problem = _word_value(first, part, _enum(properties.get(name)))
            if problem is None:
                answer[name] = value
            else:
                problems.append(ErrorEntry(join_pointer(ANSWER_AT, name), problem))
    if problems:
        return ReplyReading(None, "unreadable", tuple(problems))
    found = validate_instance(answer, answer_schema, ANSWER_AT)
    if found:
        return ReplyReading(None, "unreadable", tuple(found))
    if json_size(answer) > ANSWER_MAX_BYTES:
        detail = f"An answer takes at most 64 KiB ({ANSWER_MAX_BYTES} bytes) as JSON"
        return ReplyReading(None, "unreadable", (ErrorEntry(ANSWER_AT, detail),))
    return ReplyReading(answer)


def _split_first_word(whole: str) -> tuple[str, str]:
    parts = whole.split(maxsplit=1)
    first = parts[0]
    rest = parts[1] if len(parts) > 1 else ""
    # a separator standing alone between the word and the rest ("revise - name the role") is not the rest
    separator = rest.split(maxsplit=1)
    if separator and all(_is_separator(char) for char in separator[0]):
        rest = separator[1] if len(separator) > 1 else ""
    return first, rest.strip()


def _is_separator(char: str) -> bool:
    return unicodedata.category(char) == "Pd" or char in ":;,.|"


def _required(schema: Any) -> set[str]:
    required = schema.get("required") if isinstance(schema, dict) else None
    return {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()


def _word_value(first: str, part: RulePart, enum: list[str] | None) -> tuple[str, str | None]:
    """The value the first word means, or ``("", problem)``."""
    if enum is None:
        return first, None
    if first in enum:
        return first, None
    key = normalize_word(first)
    if key:
        for value in enum:
            if normalize_word(value) == key:
                return value, None
        for value, words in part.words.items():
            if value in enum and any(normalize_word(word) == key for word in words):
                return value, None
    return "", f"The first word is not one of {values_listing(enum, part.words)}"


def values_listing(enum: list[str], words: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """``approve (or yes, ok), revise``: the values a word may be, each with the words that mean it."""
    shown: list[str] = []
    for value in enum[:VALUES_SHOWN]:
        also = [word for word in (words or {}).get(value, ()) if normalize_word(word)]
        shown.append(f"{value} (or {', '.join(also)})" if also else value)
    if len(enum) > VALUES_SHOWN:
        shown.append(f"and {len(enum) - VALUES_SHOWN} more")
    return ", ".join(shown)
