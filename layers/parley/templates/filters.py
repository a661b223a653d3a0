"""The filters a template may use, and how a value becomes text.

reasoning-format.md, "Filters": Liquid's standard data and string filters (the list there), plus the
runtime's ``money``, ``clip`` and ``words``. python-liquid 2 implements most of the standard ones;
the LiquidJS/Jekyll ones it lacks (``array_to_sentence_string``, ``group_by``, ``json``,
``normalize_whitespace``, ``number_of_words``, ``pop``, ``push``, ``raw``, ``shift``, ``slugify``,
``to_integer``, ``unshift``, ``xml_escape``) are written here, and ``map`` is python-liquid's with a
missing property read as nil (issue 30), as LiquidJS reads it. Date filters, ``sample``, digests,
``strip_html``, URL encoders, expression filters, ``inspect`` and ``jsonify`` are left out on purpose.

"The template" also says how a value renders: a list as its items with no separators, an object as
``[object Object]``; :func:`to_text` is that rule, shared by outputs, ``echo`` and ``join``.
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from liquid.builtin.filters import array as liquid_array
from liquid.builtin.filters import math as liquid_math
from liquid.builtin.filters import misc as liquid_misc
from liquid.builtin.filters import string as liquid_string
from liquid.exceptions import FilterArgumentError, FilterValueError
from liquid.undefined import Undefined

OBJECT_TEXT: Final = "[object Object]"
CLIP_DEFAULT: Final = 400
ELLIPSIS: Final = "…"

FilterFunc = Callable[..., Any]


def to_text(value: object) -> str:
    """Render ``value`` as template output ("The template": lists join, objects are ``[object Object]``).

    Iterative, so an input nested 512 levels deep renders without deep recursion. A strict
    undefined raises its ``UndefinedError`` when converted, which is the point: a missing value
    never renders as empty text.
    """
    parts: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            parts.append(_scalar_text(item))
    return "".join(parts)


def _scalar_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Undefined):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, Mapping):
        return OBJECT_TEXT
    if isinstance(value, range):
        return f"{value.start}..{value.stop - 1}"
    return str(value)


def is_structure(value: object) -> bool:
    """True for a value that is a list or an object rather than a scalar."""
    return isinstance(value, (list, tuple, Mapping)) and not isinstance(value, Undefined)


# --- the runtime's filters ("The runtime adds three filters") -------------------------------------

_DECIMAL_TEXT: Final = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")


def money(value: object) -> str:
    """US dollars with thousands separators: ``364028`` -> ``$364,028``, ``1234.5`` -> ``$1,234.50``.

    A whole amount has no cents; any other amount has two decimals. Anything but a number or a text
    holding a decimal number stops the render.
    """
    amount: Decimal
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise FilterValueError(
            f"money takes a number or a text holding a decimal number, not {_kind(value)}", token=None
        )
    if isinstance(value, str):
        text = value.strip()
        if not _DECIMAL_TEXT.fullmatch(text):
            raise FilterValueError(
                f"money takes a number or a text holding a decimal number, not {value[:40]!r}", token=None
            )
        amount = Decimal(text)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise FilterValueError("money takes a finite number", token=None)
        amount = Decimal(repr(value))
    else:
        amount = Decimal(value)
    if not amount.is_finite():
        raise FilterValueError("money takes a finite number", token=None)
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if amount == amount.to_integral_value():
        return f"{sign}${int(amount):,}"
    cents = amount.quantize(Decimal("0.01"), rounding="ROUND_HALF_UP")
    return f"{sign}${cents:,.2f}"


def clip(value: object, length: object = CLIP_DEFAULT) -> str:
    """Cut text to ``length`` code points (400 by default), appending ``…`` when it cuts."""
    text = to_text(value)
    size = _whole_number(length, "clip")
    if size < 0:
        raise FilterArgumentError("clip takes a length of 0 or more", token=None)
    if len(text) <= size:
        return text
    return text[:size] + ELLIPSIS


def words(value: object) -> int:
    """The number of runs of characters between whitespace."""
    return len(to_text(value).split())


# --- standard filters python-liquid lacks (LiquidJS semantics) -------------------------------------


def join(value: object, separator: object = " ") -> str:
    """Items joined by ``separator``, each rendered as an output renders it."""
    sep = to_text(separator)
    if isinstance(value, (list, tuple, range)):
        return sep.join(to_text(item) for item in value)
    return to_text(value)


#: What python-liquid's ``map`` gives for an item that lacks the property: a marker of its own, which
#: ``compact`` keeps, ``uniq`` tells apart from nil and JSON cannot write.
_LIQUID_MISSING: Final = liquid_array._NULL


def map_(value: object, key: object) -> object:
    """Each item's ``key`` property, nil for an item without it (so ``| json`` writes ``null``)."""
    mapped = liquid_array.map_(value, key)
    if not isinstance(mapped, list):  # nil, for a list holding nil
        return mapped
    return [None if item is _LIQUID_MISSING else item for item in mapped]


def concat(value: object, other: object) -> object:
    """The list followed by ``other``'s items (python-liquid's own, whose refusal of a non-list fails to
    build its error: a run would end with a message about its internals instead of this one)."""
    if not isinstance(other, (list, tuple)):
        raise FilterArgumentError(f"concat takes a list, not {_kind(other)}", token=None)
    return liquid_array.concat(value, other)


def first(value: object) -> object:
    """The first item of a list; nothing for anything else."""
    if isinstance(value, (list, tuple, range)) and len(value) > 0:
        return value[0]
    return None


def last(value: object) -> object:
    """The last item of a list; nothing for anything else."""
    if isinstance(value, (list, tuple, range)) and len(value) > 0:
        return value[-1]
    return None


def array_to_sentence_string(value: object, connector: object = "and") -> str:
    """``a``, ``a and b``, ``a, b, and c``."""
    items = [to_text(item) for item in _as_list(value)]
    word = to_text(connector)
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    if len(items) == 2:
        return f"{items[0]} {word} {items[1]}"
    return f"{', '.join(items[:-1])}, {word} {items[-1]}"


def group_by(value: object, key: object) -> list[dict[str, object]]:
    """Items grouped by the value of ``key``: ``[{"name": ..., "items": [...]}]`` in first-seen order."""
    name = to_text(key)
    groups: dict[object, dict[str, object]] = {}
    for item in _as_list(value):
        found = item.get(name) if isinstance(item, Mapping) else None
        group = groups.setdefault(_identity(found), {"name": found, "items": []})
        items = group["items"]
        assert isinstance(items, list)
        items.append(item)
    return list(groups.values())


_ABSENT: Final = object()


def uniq(value: object, key: object = None) -> list[object]:
    """The items without repeats (by ``key``'s value when given), in linear time.

    python-liquid's own ``uniq`` compares every pair, which a long list turns into minutes of work
    no deadline can interrupt.
    """
    seen: set[object] = set()
    result: list[object] = []
    name = None if key is None else to_text(key)
    for item in _as_list(value):
        probe = item if name is None else (item.get(name, _ABSENT) if isinstance(item, Mapping) else _ABSENT)
        identity = _identity(probe)
        if identity not in seen:
            seen.add(identity)
            result.append(item)
    return result


def _identity(value: object) -> object:
    """A hashable key equal for equal JSON values (``1`` and ``true`` stay apart)."""
    if value is _ABSENT:
        return ("absent",)
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float, Decimal)):
        return ("number", value)
    if isinstance(value, str):
        return ("text", value)
    try:
        return ("json", json.dumps(value, sort_keys=True, default=repr))
    except (TypeError, ValueError, RecursionError):
        return ("object", id(value))


def json_filter(value: object, indent: object = 0) -> str:
    """The value as JSON; ``indent`` spaces per level when given."""
    spaces = _whole_number(indent, "json")
    try:
        if spaces > 0:
            return json.dumps(
                value, ensure_ascii=False, indent=min(spaces, 10), default=_json_default, allow_nan=False
            )
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), default=_json_default, allow_nan=False
        )
    except ValueError as exc:
        raise FilterValueError(f"json cannot write this value: {exc}", token=None) from exc


def _json_default(value: object) -> object:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, range):
        return list(value)
    if isinstance(value, Undefined):
        return str(value)  # raises the undefined's own error
    raise TypeError(f"json cannot write {_kind(value)}")


def normalize_whitespace(value: object) -> str:
    """Every run of whitespace replaced by one space."""
    return re.sub(r"\s+", " ", to_text(value))


_CJK: Final = re.compile("[\u4e00-\u9fff\u3400-\u4dbf\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af\uf900-\ufaff]")


def number_of_words(value: object, mode: object = None) -> int:
    """Words in the text; with ``cjk`` or ``auto``, each CJK character counts as a word."""
    text = to_text(value)
    plain = len(text.split())
    if mode not in ("cjk", "auto"):
        return plain
    cjk = len(_CJK.findall(text))
    if mode == "auto" and not cjk:
        return plain
    return cjk + len(_CJK.sub(" ", text).split())


def pop(value: object) -> list[object]:
    """A copy of the list without its last item."""
    return _as_list(value)[:-1]


def push(value: object, item: object) -> list[object]:
    """A copy of the list with ``item`` at the end."""
    return [*_as_list(value), item]


def shift(value: object) -> list[object]:
    """A copy of the list without its first item."""
    return _as_list(value)[1:]


def unshift(value: object, item: object) -> list[object]:
    """A copy of the list with ``item`` at the start."""
    return [item, *_as_list(value)]


def raw(value: object) -> object:
    """The value unchanged (nothing is ever escaped, so this only documents intent)."""
    return value


_SLUG_PATTERNS: Final = {
    "raw": re.compile(r"\s+"),
    "default": re.compile(r"[\W_]+"),
    "pretty": re.compile(r"[^\w._~!$&'()+,;=@]+"),
    "ascii": re.compile(r"[^a-zA-Z0-9]+"),
    "latin": re.compile(r"[^a-zA-Z0-9]+"),
}


def slugify(value: object, mode: object = "default", cased: object = False) -> str:
    """A URL slug: Jekyll's modes ``default``, ``raw``, ``pretty``, ``ascii``, ``latin`` and ``none``."""
    text = to_text(value)
    name = to_text(mode) if mode is not None else "default"
    if name == "none":
        return text if cased is True else text.lower()
    if name == "latin":
        text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    pattern = _SLUG_PATTERNS.get(name, _SLUG_PATTERNS["default"])
    slug = pattern.sub("-", text).strip("-")
    return slug if cased is True else slug.lower()


def to_integer(value: object) -> int:
    """A whole number from a number or a text holding one (a fraction is cut toward zero)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, (float, Decimal)):
        if not math.isfinite(value):
            raise FilterValueError("to_integer takes a finite number", token=None)
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if len(text) <= 400:
            try:
                return int(text)
            except ValueError:
                pass
            try:
                number = Decimal(text)
            except InvalidOperation:
                number = Decimal("NaN")
            if number.is_finite():
                return int(number)
    raise FilterValueError(f"to_integer takes a number or a text holding one, not {_kind(value)}", token=None)


def xml_escape(value: object) -> str:
    """``&``, ``<``, ``>``, ``"`` and ``'`` escaped."""
    return html.escape(to_text(value), quote=True)


# --- helpers ---------------------------------------------------------------------------------------


def _as_list(value: object) -> list[object]:
    if isinstance(value, (list, tuple, range)):
        return list(value)
    if value is None:
        return []
    return [value]


def _whole_number(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise FilterArgumentError(f"{name} takes a whole number, not {_kind(value)}", token=None)
    if isinstance(value, int):
        return value
    if isinstance(value, (float, Decimal)) and math.isfinite(value) and value == int(value):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value) < 20:
        return int(value)
    raise FilterArgumentError(f"{name} takes a whole number, not {_kind(value)}", token=None)


def _kind(value: object) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple, range)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def available_filters() -> dict[str, FilterFunc]:
    """Every filter a template may use, by name (reasoning-format.md, "Filters")."""
    filters: dict[str, FilterFunc] = {
        # math
        "abs": liquid_math.abs_,
        "at_least": liquid_math.at_least,
        "at_most": liquid_math.at_most,
        "ceil": liquid_math.ceil,
        "divided_by": liquid_math.divided_by,
        "floor": liquid_math.floor,
        "minus": liquid_math.minus,
        "modulo": liquid_math.modulo,
        "plus": liquid_math.plus,
        "round": liquid_math.round_,
        "times": liquid_math.times,
        # strings
        "append": liquid_string.append,
        "base64_decode": liquid_string.base64_decode,
        "base64_encode": liquid_string.base64_encode,
        "capitalize": liquid_string.capitalize,
        "downcase": liquid_string.downcase,
        "escape": liquid_string.escape,
        "escape_once": liquid_string.escape_once,
        "lstrip": liquid_string.lstrip,
        "newline_to_br": liquid_string.newline_to_br,
        "prepend": liquid_string.prepend,
        "remove": liquid_string.remove,
        "remove_first": liquid_string.remove_first,
        "remove_last": liquid_string.remove_last,
        "replace": liquid_string.replace,
        "replace_first": liquid_string.replace_first,
        "replace_last": liquid_string.replace_last,
        "rstrip": liquid_string.rstrip,
        "slice": liquid_string.slice_,
        "split": liquid_string.split,
        "squish": liquid_string.squish,
        "strip": liquid_string.strip,
        "strip_newlines": liquid_string.strip_newlines,
        "truncate": liquid_string.truncate,
        "truncatewords": liquid_string.truncatewords,
        "upcase": liquid_string.upcase,
        # arrays
        "compact": liquid_array.compact,
        "concat": concat,
        "find": liquid_array.find,
        "find_index": liquid_array.find_index,
        "has": liquid_array.has,
        "reject": liquid_array.reject,
        "reverse": liquid_array.reverse,
        "sort": liquid_array.sort,
        "sort_natural": liquid_array.sort_natural,
        "sum": liquid_array.sum_,
        "where": liquid_array.where,
        # misc
        "default": liquid_misc.default,
        "size": liquid_misc.size,
        # written here
        "array_to_sentence_string": array_to_sentence_string,
        "first": first,
        "group_by": group_by,
        "join": join,
        "json": json_filter,
        "last": last,
        "map": map_,
        "normalize_whitespace": normalize_whitespace,
        "number_of_words": number_of_words,
        "pop": pop,
        "push": push,
        "raw": raw,
        "shift": shift,
        "slugify": slugify,
        "to_integer": to_integer,
        "uniq": uniq,
        "unshift": unshift,
        "xml_escape": xml_escape,
        # the runtime's own
        "money": money,
        "clip": clip,
        "words": words,
    }
    return filters
