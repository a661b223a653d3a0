"""What the model reads of a tool's result (``reasoning-format.md``, "What the model sees", "Limits on
calls").

"A tool's text content reaches the model as text. Structured content reaches it only when there is no
text. Other content reaches it as a one-line placeholder." :func:`model_text` reads the MCP result
(``content``, ``structuredContent``, ``isError``):

- each ``text`` item is its text; items are joined by a line break, in their order;
- ``structuredContent`` is compact JSON, and is read only when no item is text (it then comes first);
- any other item is one line, such as ``[image/png content, 12,345 bytes, not shown]`` (images and
  audio: the decoded size of their base64 ``data``; an embedded resource: its text or blob; a resource
  link: its ``size`` when the server gave one). The media type is shown only when it looks like one,
  so a server cannot write into the placeholder;
- a result with nothing in it reads ``[no content]``.

"A result the server marks ``isError``, such as a policy denial, reaches the model as a tool error it
may recover from": :func:`is_error`, and :func:`tool_result` sets ``ToolResult.is_error``.

"The model reads each tool result in full. A result is cut, with a note of how much was left out, only
when it would not fit in the room left for the step that called it": :func:`room_per_call` computes
that room in bytes (the arithmetic is in its docstring), and :func:`cut_to_fit` cuts:

- a JSON object or array is cut *as a prefix*, in document order, and nothing after a cut is kept: a
  list keeps its first items whole while they fit (only a first item that does not fit is itself
  cut); an object keeps its first members while they fit, then cuts the value of the first that does
  not; a long text keeps its start and ends with ``…``. The result stays valid JSON: an object gains
  a ``"_note"`` member first (``"__note"`` when it has one, and so on), an array becomes
  ``{"_note": …, "result": [...]}``. The note reads ``This result was cut to fit: 12,345 bytes left
  out (its last items, fields or text); ask for fewer rows, fields or depth.``, the bytes counted as
  compact JSON;
- any other text keeps its start, cut at a character boundary, and ends with the note on a line of
  its own, in brackets.

A cut result takes at most the room, except when the room is smaller than the note itself: then the
note alone is shown.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from parley.documents.json_schema import json_size
from parley.models import ToolResult

if TYPE_CHECKING:
    from parley.models import ToolCall

NO_CONTENT: Final = "[no content]"
#: The member of a cut array's wrapping object that holds what is kept of it.
KEPT_MEMBER: Final = "result"
_NOTE_MEMBER: Final = "_note"
#: What :func:`_cut_value` gives when nothing of a value fits (``None`` is JSON's ``null``).
_NOTHING: Final = object()
#: What ends a text that was cut.
CUT_TEXT_END: Final = "…"
_MEDIA_TYPE: Final = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}"
)
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")


# --- what the model reads -----------------------------------------------------------------------------


def is_error(result: Mapping[str, Any]) -> bool:
    """Whether the server marked the result ``isError``."""
    return result.get("isError") is True


def model_text(result: Mapping[str, Any]) -> str:
    """The text the model reads of an MCP tool result, in full (see the module's docstring)."""
    content = result.get("content")
    items: Sequence[Any] = content if isinstance(content, list) else []
    has_text = any(_is_text(item) for item in items)
    lines = [item["text"] if _is_text(item) else placeholder(item) for item in items]
    if not has_text and "structuredContent" in result and result["structuredContent"] is not None:
        lines.insert(0, compact_json(result["structuredContent"]))
    return "\n".join(lines) if lines else NO_CONTENT


def placeholder(item: Any) -> str:
    """The one line an item that is not text reaches the model as."""
    if not isinstance(item, Mapping):
        return "[content not shown]"
    kind = item.get("type")
    what = kind if isinstance(kind, str) and _WORD.fullmatch(kind) else "unknown"
    size: int | None = None
    media = item.get("mimeType")
    if kind in ("image", "audio"):
        size = _base64_size(item.get("data"))
    elif kind == "resource" and isinstance(item.get("resource"), Mapping):
        resource = item["resource"]
        media = resource.get("mimeType")
        if isinstance(resource.get("text"), str):
            size = utf8_size(resource["text"])
        else:
            size = _base64_size(resource.get("blob"))
    elif kind == "resource_link":
        given = item.get("size")
        size = given if isinstance(given, int) and not isinstance(given, bool) and given >= 0 else None
    if isinstance(media, str) and _MEDIA_TYPE.fullmatch(media):
        what = media if kind in ("image", "audio") else f"{what} {media}"
    return (
        f"[{what} content, {size:,} bytes, not shown]" if size is not None else f"[{what} content, not shown]"
    )


def tool_result(call: ToolCall, result: Mapping[str, Any], room_bytes: int | None) -> tuple[ToolResult, int]:
    """What the model is given back for ``call``, cut to ``room_bytes`` (``None``: in full), with
    ``shown_bytes`` as :func:`cut_to_fit` gives it."""
    text, shown = cut_to_fit(model_text(result), room_bytes)
    return ToolResult(call.id, call.name, text, is_error=is_error(result)), shown


# --- the room ----------------------------------------------------------------------------------------


def room_per_call(
    context_window: int | None,
    budget_left: int | None,
    step_input_tokens: int | None,
    step_output_tokens: int | None,
    bytes_sent: int,
    calls: int,
) -> int | None:
    """The bytes each result of a step's calls may take; ``None``: each is read in full.

    "The room starts as the smaller of two figures: the model's context window, as the server's model
    catalog gives it, and what is left of the run's budget. The step's input and output are taken off
    it, and the step's calls share the rest equally. Room is counted in the provider's tokens for that
    step, and converted to bytes at the step's ratio of bytes sent to input tokens counted." So::

        tokens = (min(context_window, budget_left) - step_input_tokens - step_output_tokens) // calls
        bytes  = floor(tokens * bytes_sent / step_input_tokens), at least 0

    ``budget_left`` is what was left of the run's input tokens before this step (``None``: no budget,
    the window alone). "When the catalog does not know the window, or the provider reports no token
    counts, each result is read in full": ``None`` when ``context_window`` or ``step_input_tokens`` is
    ``None``, or no input token was counted. An output the provider did not count takes nothing off.
    """
    if context_window is None or step_input_tokens is None or step_input_tokens <= 0:
        return None
    room = context_window if budget_left is None else min(context_window, budget_left)
    tokens = (room - step_input_tokens - (step_output_tokens or 0)) // max(calls, 1)
    if tokens <= 0:
        return 0
    return max(0, math.floor(tokens * bytes_sent / step_input_tokens))


# --- the cut -----------------------------------------------------------------------------------------


def note_words(left_out: int) -> str:
    """The note of a cut result."""
    return (
        f"This result was cut to fit: {left_out:,} bytes left out (its last items, fields or text); ask for "
        "fewer rows, fields or depth."
    )


def cut_to_fit(text: str, room_bytes: int | None) -> tuple[str, int]:
    """The text the model reads of ``text`` given ``room_bytes`` (``None``: in full), and
    ``shown_bytes``: the UTF-8 size of ``text`` less the bytes the note says were left out (the size of
    ``text`` when nothing was cut). See the module's docstring for how."""
    size = utf8_size(text)
    if room_bytes is None or size <= room_bytes:
        return text, size
    value = _json_container(text)
    if value is not None:
        try:
            cut, left_out = _cut_json(value, room_bytes)
        except RecursionError:
            pass
        else:
            return cut, max(0, size - left_out)
    return _cut_plain(text, size, room_bytes)


def _cut_plain(text: str, size: int, room: int) -> tuple[str, int]:
    reserved = utf8_size(f"\n[{note_words(size)}]")
    kept = utf8_prefix(text, max(0, room - reserved))
    shown = utf8_size(kept)
    note = f"[{note_words(size - shown)}]"
    return (f"{kept}\n{note}" if kept else note), shown


def _cut_json(value: dict[str, Any] | list[Any], room: int) -> tuple[str, int]:
    """The cut JSON text and the bytes left out, counted as compact JSON."""
    full = json_size(value)
    if full <= room:  # it fits once compact: nothing is left out
        return compact_json(value), 0
    key = _NOTE_MEMBER
    if isinstance(value, dict):
        while key in value:
            key = "_" + key
    # The note with the whole size in it is at least as long as the final note.
    overhead = utf8_size(compact_json({key: note_words(full)})) - 1  # '{"_note":"…"' without '}'
    if isinstance(value, dict):
        # '{"_note":"…"' + ',<members>}' takes overhead + the kept object's size.
        kept, kept_size = _cut_value(value, room - overhead)
    else:
        # '{"_note":"…"' + ',"result":' + the kept list + '}'.
        kept, kept_size = _cut_value(value, room - overhead - utf8_size(f',"{KEPT_MEMBER}":}}'))
    if kept is _NOTHING or not kept:
        return compact_json({key: note_words(full)}), full
    left_out = full - kept_size
    if isinstance(kept, dict):
        return compact_json({key: note_words(left_out), **kept}), left_out
    return compact_json({key: note_words(left_out), KEPT_MEMBER: kept}), left_out


def _cut_value(value: Any, budget: int) -> tuple[Any, int]:
    """The longest start of ``value`` that takes at most ``budget`` bytes as compact JSON, and its size;
    ``(_NOTHING, 0)`` when nothing of it fits. ``value`` itself when it fits whole. A list keeps whole
    items, cutting only a first item that does not fit; an object keeps whole members, then cuts the
    first that does not fit; a text keeps its start and ends with ``…``; a number or a literal is kept
    whole or not at all."""
    size = json_size(value)
    if size <= budget:
        return value, size
    if isinstance(value, str):
        return _cut_string(value, budget)
    if budget < 2 or not isinstance(value, list | dict):
        return _NOTHING, 0
    used = 2
    if isinstance(value, list):
        items: list[Any] = []
        for item in value:
            comma = 1 if items else 0
            if items:  # a later item is kept whole or not at all
                kept, kept_size = (
                    (item, json_size(item)) if json_size(item) <= budget - used - comma else (_NOTHING, 0)
                )
            else:
                kept, kept_size = _cut_value(item, budget - used)
            if not _shows_something(kept, item):
                break
            items.append(kept)
            used += comma + kept_size
            if kept is not item:
                break
        return items, used
    members: dict[str, Any] = {}
    for name, member in value.items():
        comma = 1 if members else 0
        label = json_size(name) + 1
        kept, kept_size = _cut_value(member, budget - used - comma - label)
        if not _shows_something(kept, member):
            break
        members[name] = kept
        used += comma + label + kept_size
        if kept is not member:
            break
    return members, used


def _shows_something(kept: Any, original: Any) -> bool:
    """A cut item is kept only when something of it is left: not an empty list or object, nor a text
    cut to nothing."""
    if kept is original:
        return True
    if kept is _NOTHING:
        return False
    if isinstance(kept, str):
        return kept != CUT_TEXT_END
    return not (isinstance(kept, list | dict) and len(kept) == 0)


def _cut_string(value: str, budget: int) -> tuple[Any, int]:
    """The longest start of ``value`` that, with ``…`` after it, takes at most ``budget`` bytes as JSON."""
    if budget < json_size(CUT_TEXT_END):
        return _NOTHING, 0
    low, high = 0, len(value)  # the longest start that fits
    while low < high:
        middle = (low + high + 1) // 2
        if json_size(value[:middle] + CUT_TEXT_END) <= budget:
            low = middle
        else:
            high = middle - 1
    kept = value[:low] + CUT_TEXT_END
    return kept, json_size(kept)


def _json_container(text: str) -> dict[str, Any] | list[Any] | None:
    """``text`` read as JSON when it is an object or an array (no ``NaN`` or ``Infinity``)."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict | list) else None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# --- sizes ---------------------------------------------------------------------------------------------


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def utf8_prefix(text: str, max_bytes: int) -> str:
    """The longest start of ``text`` that takes at most ``max_bytes`` in UTF-8, cut at a character
    boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    cut = max(0, max_bytes)
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # a continuation byte: the character started earlier
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")


def _is_text(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("type") == "text" and isinstance(item.get("text"), str)


def _base64_size(data: Any) -> int | None:
    """The decoded size of base64 ``data``, without decoding it."""
    if not isinstance(data, str):
        return None
    return len("".join(data.split()).rstrip("=")) * 3 // 4
