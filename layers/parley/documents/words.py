"""Markdown in plain words, as the overviews write it: bold names, code, series with "and", counts,
values and sentences (shared by every function type's overview)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

#: Fields, enum values or arguments listed before "and N more".
MAX_LISTED: Final = 50


def code(value: str) -> str:
    """``value`` as an inline code span that survives backticks and line breaks."""
    text = " ".join(value.split("\n")) if "\n" in value else value
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``"


_LOOSE_UNDERSCORE: Final = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def escape_markdown(text: str) -> str:
    """Escape what would change the Markdown of a name or a condition; intraword ``_`` stays readable."""
    text = re.sub(r"([\\*`\[\]]|<(?=[A-Za-z/!?]))", r"\\\1", text)
    return _LOOSE_UNDERSCORE.sub(r"\\_", text)


def bold(name: str) -> str:
    return f"**{escape_markdown(name)}**" if name else ""


def one_line(text: str) -> str:
    return " ".join(text.split())


def section(title: str, *paragraphs: str | list[str]) -> list[str]:
    """An overview's section: its title in bold, then each paragraph (a line, or lines) and a blank."""
    lines = [f"**{title}**", ""]
    for paragraph in paragraphs:
        lines.extend(paragraph if isinstance(paragraph, list) else [paragraph])
        lines.append("")
    return lines


#: What would break a Mermaid label, written as its entity code.
MERMAID_ESCAPES: Final = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "`": "#96;", "&": "#amp;"}


def mermaid_label(text: str) -> str:
    """``text`` as a quoted Mermaid label on one line (the overviews' flowcharts)."""
    return '"' + "".join(MERMAID_ESCAPES.get(char, char) for char in one_line(text)) + '"'


def text_in_words(value: Any) -> str:
    """Any JSON-like value as text: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def number_in_words(value: Any) -> str:
    """A bound as a person reads it: ``2,000`` for 2000, ``0.5`` for 0.5."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return text_in_words(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return repr(value)
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return repr(value)
    return f"{value:,}"


def value_in_words(value: Any) -> str:
    """A value of the answer or the input, such as an ``enum`` value, as code."""
    return code(text_in_words(value))


def series(items: Sequence[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def capped_series(items: Sequence[str], last: str = "and") -> str:
    if len(items) <= MAX_LISTED:
        return series(items, last)
    return series([*items[:MAX_LISTED], f"{len(items) - MAX_LISTED:,} more"], last)


def counted(number: int, one: str, many: str) -> str:
    return f"{number:,} {one if number == 1 else many}"


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def sentence(text: str) -> str:
    text = one_line(text)
    return text if not text or text[-1] in ".!?:" else text + "."
