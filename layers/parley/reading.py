"""Reading untrusted nested data (the operator configuration's YAML or JSON) into frozen dataclasses,
with every mistake named by its place.

Why not pydantic: every function reads the operator configuration on its first event, and pydantic's
import and model building were most of that event's own time (issue 20: cold start as a user feels it).
The configuration needs little of it — strings, whole numbers, booleans, secrets, lists and mappings of
those, and records with fixed keys — so this module does that much, in plain Python. Its messages are
pydantic's words where pydantic had some ("Field required", "Input should be a valid string"), so an
operator reads the same mistakes as before.

A record is a frozen dataclass whose fields say how their value is read (``field(metadata=reads(…))``):
a field without a default is required, a key that is no field is refused with the keys allowed, the
field's checks run on its value once read (as pydantic's field validators did), and the record's
``checked()`` method, if it has one, once every field was read (as its model validators did). A check
refuses a value by raising ``ValueError`` with the message to show.

Every mistake is recorded (:class:`Reading`), not only the first; a refused value raises :class:`Refused`
up to the record that holds it, which goes on with its other fields.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypeVar

from parley.errors import ParleyError
from parley.secret import Secret

T = TypeVar("T")
Record = TypeVar("Record")
#: A place in the data: keys of mappings and indexes of lists, from the top.
Loc: TypeAlias = tuple[int | str, ...]
#: Reads one value at a place, or records why not and raises :class:`Refused`.
Reader: TypeAlias = Callable[[Any, Loc, "Reading"], T]
#: A field's check: the value read, in the reading's context; raises ``ValueError`` to refuse it.
Check: TypeAlias = Callable[[Any, "Reading"], Any]

_METADATA_KEY: Final = "parley.reading"
#: The texts pydantic read as booleans (case aside).
_TRUE: Final = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE: Final = frozenset({"0", "off", "f", "false", "n", "no"})


@dataclass(frozen=True)
class Mistake:
    """One refused value: where, and why."""

    at: Loc
    message: str


class Refused(ParleyError):
    """The value at some place was refused; the mistakes are recorded in the :class:`Reading`."""


class Reading:
    """One reading of a document: its ``context`` (what checks may ask, such as ``aws``) and the mistakes
    found so far, in the order found."""

    def __init__(self, **context: Any) -> None:
        self.context: Mapping[str, Any] = context
        self.mistakes: list[Mistake] = []

    def refuse(self, at: Loc, message: str) -> Refused:
        """Record a mistake at ``at``; raise what this returns."""
        self.mistakes.append(Mistake(at, message))
        return Refused(message)


@dataclass(frozen=True)
class _How:
    read: Reader[Any]
    checks: tuple[Check, ...]
    check_default: bool


def reads(read: Reader[Any], *checks: Check, check_default: bool = False) -> dict[str, Any]:
    """A record field's metadata: how its value is read, then checked (``check_default``: the checks
    also run when the key is left out, on the default)."""
    return {_METADATA_KEY: _How(read, checks, check_default)}


def read_record(cls: type[Record], value: Any, reading: Reading, at: Loc = ()) -> Record:
    """``value`` (a mapping) as the record ``cls``; raises :class:`Refused` after recording every mistake."""
    return record(cls)(value, at, reading)


# --- readers ---------------------------------------------------------------------------------------


def text(value: Any, at: Loc, reading: Reading) -> str:
    if isinstance(value, str):
        return value
    raise reading.refuse(at, "Input should be a valid string")


def bounded_text(min_length: int = 0, max_length: int | None = None) -> Reader[str]:
    def read(value: Any, at: Loc, reading: Reading) -> str:
        found = text(value, at, reading)
        if len(found) < min_length:
            raise reading.refuse(at, f"String should have at least {_count(min_length, 'character')}")
        if max_length is not None and len(found) > max_length:
            raise reading.refuse(at, f"String should have at most {_count(max_length, 'character')}")
        return found

    return read


def secret(value: Any, at: Loc, reading: Reading) -> Secret:
    if isinstance(value, Secret):
        return value
    return Secret(text(value, at, reading))


def whole(minimum: int | None = None) -> Reader[int]:
    """A whole number; as pydantic's lax mode, ``"25"`` and ``25.0`` are 25."""

    def read(value: Any, at: Loc, reading: Reading) -> int:
        number = _whole(value, at, reading)
        if minimum is not None and number < minimum:
            raise reading.refuse(at, f"Input should be greater than or equal to {minimum}")
        return number

    return read


def _whole(value: Any, at: Loc, reading: Reading) -> int:
    if isinstance(value, int):  # a bool too: true is 1, as pydantic read it
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise reading.refuse(at, "Input should be a finite number")
        if not value.is_integer():
            raise reading.refuse(at, "Input should be a valid integer, got a number with a fractional part")
        return int(value)
    if isinstance(value, str):
        written = value.strip()
        try:
            return int(written)
        except ValueError:
            pass
        try:
            number = float(written)
        except ValueError:
            number = math.nan
        if math.isfinite(number) and number.is_integer():
            return int(number)
        raise reading.refuse(at, "Input should be a valid integer, unable to parse string as an integer")
    raise reading.refuse(at, "Input should be a valid integer")


def flag(value: Any, at: Loc, reading: Reading) -> bool:
    """A boolean; as pydantic's lax mode, also ``yes``/``no``, ``on``/``off``, 1 and 0."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    if isinstance(value, int | float | str):
        raise reading.refuse(at, "Input should be a valid boolean, unable to interpret input")
    raise reading.refuse(at, "Input should be a valid boolean")


def choice(*options: str) -> Reader[str]:
    """One of ``options`` exactly."""
    shown = [repr(option) for option in options]
    words = " or ".join(shown) if len(shown) < 3 else ", ".join(shown[:-1]) + " or " + shown[-1]

    def read(value: Any, at: Loc, reading: Reading) -> str:
        if isinstance(value, str) and value in options:
            return value
        raise reading.refuse(at, f"Input should be {words}")

    return read


def then(read: Reader[T], *checks: Callable[[T], T]) -> Reader[T]:
    """What ``read`` reads, then checked by each of ``checks`` (which raise ``ValueError`` to refuse it):
    a type of its own, such as an identifier, wherever it appears (a field, an item of a list)."""

    def read_checked(value: Any, at: Loc, reading: Reading) -> T:
        found = read(value, at, reading)
        try:
            for check in checks:
                found = check(found)
        except ValueError as exc:
            raise reading.refuse(at, str(exc)) from None
        return found

    return read_checked


def optional(read: Reader[T]) -> Reader[T | None]:
    """``null`` (``None``), or what ``read`` reads."""

    def read_optional(value: Any, at: Loc, reading: Reading) -> T | None:
        return None if value is None else read(value, at, reading)

    return read_optional


def items(read: Reader[T]) -> Reader[tuple[T, ...]]:
    """A list (a tuple once read), each item read by ``read``."""

    def read_items(value: Any, at: Loc, reading: Reading) -> tuple[T, ...]:
        if not isinstance(value, list | tuple | set | frozenset):
            raise reading.refuse(at, "Input should be a valid tuple")
        found: list[T] = []
        refused = False
        for index, item in enumerate(value):
            try:
                found.append(read(item, (*at, index), reading))
            except Refused:
                refused = True
        if refused:
            raise Refused(at)
        return tuple(found)

    return read_items


def mapping(read: Reader[T]) -> Reader[dict[str, T]]:
    """A mapping of text keys, each value read by ``read``."""

    def read_mapping(value: Any, at: Loc, reading: Reading) -> dict[str, T]:
        if not isinstance(value, dict):
            raise reading.refuse(at, "Input should be a valid dictionary")
        found: dict[str, T] = {}
        refused = False
        for key, item in value.items():
            if not isinstance(key, str):
                reading.refuse((*at, key, "[key]"), "Input should be a valid string")
                refused = True
                continue
            try:
                found[key] = read(item, (*at, key), reading)
            except Refused:
                refused = True
        if refused:
            raise Refused(at)
        return found

    return read_mapping


def record(cls: type[Record]) -> Reader[Record]:
    """A mapping of ``cls``'s fields (a dataclass whose fields carry :func:`reads` metadata)."""
    fields = [field for field in dataclasses.fields(cls) if field.init]  # type: ignore[arg-type]
    allowed = ", ".join(field.name for field in fields)

    def read_fields(value: Any, at: Loc, reading: Reading) -> Record:
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise reading.refuse(at, f"Input should be a valid dictionary or instance of {cls.__name__}")
        values: dict[str, Any] = {}
        refused = False
        for field in fields:
            how: _How = field.metadata[_METADATA_KEY]
            place = (*at, field.name)
            if field.name in value:
                try:
                    found = how.read(value[field.name], place, reading)
                except Refused:
                    refused = True
                    continue
            elif field.default is not dataclasses.MISSING:
                found = field.default
            elif field.default_factory is not dataclasses.MISSING:
                found = field.default_factory()
            else:
                reading.refuse(place, "Field required")
                refused = True
                continue
            if field.name in value or how.check_default:
                try:
                    for check in how.checks:
                        found = check(found, reading)
                except ValueError as exc:
                    reading.refuse(place, str(exc))
                    refused = True
                    continue
            values[field.name] = found
        names = {field.name for field in fields}
        for key in value:
            if key not in names:
                reading.refuse(at, f"unknown key {key!r} (allowed: {allowed})")
                refused = True
        if refused:
            raise Refused(at)
        made = cls(**values)
        checked = getattr(made, "checked", None)
        if checked is not None:
            try:
                checked()
            except ValueError as exc:
                raise reading.refuse(at, str(exc)) from None
        return made

    return read_fields


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
