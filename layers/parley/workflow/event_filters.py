"""Which events a ``listen`` takes (``workflow-format.md``, "Events").

A filter is ``{"with": {"type"?, "source"?, "subject"?, "data"?}}`` as the document writes it (the
engine's payload keeps each value as written). An event matches a filter when each attribute the filter
names equals the event's (JSON's equality: ``1`` is ``1.0``, ``true`` is not ``1``), or, for a value
written as ``${ … }``, when that JSONata expression over ``$data`` (the event's attribute) gives
``true``. An expression that fails, runs past :data:`TIME_LIMIT_MS` or gives anything else does not
hold.

- ``to.one``: the earliest event matching its filter;
- ``to.any``: the earliest event matching any of the filters;
- ``to.all``: one event per filter, in any order, each event taken once, the earliest that complete the
  set (:func:`taken`).

An event is ``{"type", "id", "time", "source", "subject", "data"}`` (the envelope ``read: envelope``
gives; ``subject`` and ``data`` are ``null`` when the event has none).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from parley.workflow.expressions import expression_body
from parley.workflow.jsonata_library import Utils, jsonata

LOG: Final = logging.getLogger("parley.workflow")
#: The longest one expression may run (``workflow-format.md``, "Bounds").
TIME_LIMIT_MS: Final = 200
_MAX_DEPTH: Final = 2000
#: The attributes a filter may name.
ATTRIBUTES: Final = ("type", "source", "subject", "data")


def json_equal(left: Any, right: Any) -> bool:
    """JSON's equality: numbers by value (``1 == 1.0``), booleans never numbers, objects by members."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and bool(left == right)


def holds(text: str, value: Any) -> bool:
    """Whether the JSONata expression ``text`` gives ``true`` with ``$data`` bound to ``value``."""
    try:
        expression = _parsed(text)
        frame = jsonata.Jsonata.Frame(None)
        frame.set_runtime_bounds(TIME_LIMIT_MS, _MAX_DEPTH)
        frame.bind("data", _to_jsonata(value))
        return expression.evaluate(None, frame) is True
    except RecursionError:
        return False
    except Exception as exc:  # a failing expression does not hold
        LOG.info("an event filter's expression did not hold: %s", exc)
        return False


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> Any:
    return jsonata.Jsonata(text)


def _to_jsonata(value: Any) -> Any:
    if value is None:
        return Utils.NULL_VALUE
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(key): _to_jsonata(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_to_jsonata(item) for item in value]
    return value


def matches(event: Mapping[str, Any], event_filter: Mapping[str, Any]) -> bool:
    """Whether ``event`` matches ``event_filter`` (``{"with": {...}}``)."""
    written = event_filter.get("with") or {}
    if not isinstance(written, Mapping):
        return False
    for name in ATTRIBUTES:
        if name not in written:
            continue
        wanted, actual = written[name], event.get(name)
        text = expression_body(wanted)
        if text is not None:
            if not holds(text, actual):
                return False
        elif not json_equal(wanted, actual):
            return False
    return True


def filters_of(to: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]]]:
    """``(one | any | all, the filters)`` of a listen's ``to``."""
    for mode in ("one", "any", "all"):
        if mode in to:
            given = to[mode]
            found = [given] if mode == "one" else list(given or [])
            return mode, [item for item in found if isinstance(item, Mapping)]
    raise ValueError(f"a listen's to is one of one, any and all, not {sorted(to)}")


def literal_types(to: Mapping[str, Any]) -> list[str]:
    """The event types a listen's filters write out (no expression): where emitted events reach it."""
    _, found = filters_of(to)
    types: list[str] = []
    for event_filter in found:
        written = event_filter.get("with") or {}
        value = written.get("type") if isinstance(written, Mapping) else None
        if isinstance(value, str) and expression_body(value) is None and value not in types:
            types.append(value)
    return types


def taken(to: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[int] | None:
    """The indexes in ``events`` (oldest first) of the events that complete the listen, in the order of
    its filters for ``to.all``; ``None`` when they do not complete it yet."""
    mode, found = filters_of(to)
    if not found:
        return None
    if mode in ("one", "any"):
        for index, event in enumerate(events):
            if any(matches(event, event_filter) for event_filter in found):
                return [index]
        return None
    # to.all: a matching of filters to distinct events, preferring earlier events (augmenting paths).
    fits = [[index for index, event in enumerate(events) if matches(event, f)] for f in found]
    owner: dict[int, int] = {}

    def place(filter_index: int, seen: set[int]) -> bool:
        for index in fits[filter_index]:
            if index in seen:
                continue
            seen.add(index)
            if index not in owner or place(owner[index], seen):
                owner[index] = filter_index
                return True
        return False

    for filter_index in range(len(found)):
        if not place(filter_index, set()):
            return None
    by_filter = {filter_index: index for index, filter_index in owner.items()}
    return [by_filter[filter_index] for filter_index in range(len(found))]


def output_of(read: str, events: Sequence[Mapping[str, Any]]) -> list[Any]:
    """A listen's output: the events' ``data``, or with ``read: envelope`` the whole events."""
    if read == "envelope":
        return [
            {name: event.get(name) for name in ("type", "id", "time", "source", "subject", "data")}
            for event in events
        ]
    return [event.get("data") for event in events]
