"""DynamoDB's request units of a write, with its index entries (issue 31's follow-up: the benches counted
the items a write names, not their index entries).

How DynamoDB meters a write, as this module counts it:

- the item: one write unit per KB of the larger of the item before and after the write (a
  transaction's write: two);
- each global secondary index whose key attributes the item holds before or after: putting an entry
  is one unit per KB of what the index projects; removing one, one unit per KB of the entry removed;
  a write that changes the entry's key is both (a delete and a put); one that changes only a projected
  attribute rewrites the entry (one put); one that changes nothing the index projects costs it nothing.
  Index writes are standard writes, in a transaction too (an index is updated after the transaction,
  not in it);
- a write whose condition fails is metered as the item's own write, with no index entry;
- an item's size is DynamoDB's rule: each attribute's name and value in bytes (a number: about half
  its digits; a list or map: 3 bytes and its elements). An index entry's 100 bytes of storage
  overhead are not metered as writes.

The images before and after a write are read through the client itself, unmetered.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

Item = Mapping[str, Any]


def value_size(value: Mapping[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(str(inner).encode("utf-8", "surrogatepass"))
    if kind == "N":
        digits = str(inner).lstrip("-").replace(".", "").lstrip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind == "B":
        return len(inner) if isinstance(inner, bytes | bytearray) else len(str(inner))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(value_size(element) + 1 for element in inner)
    if kind == "M":
        return 3 + sum(len(name.encode()) + value_size(element) + 1 for name, element in inner.items())
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: element}) for element in inner)
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item: Item | None) -> int:
    """An item's size (DynamoDB JSON), as DynamoDB counts it for request units."""
    if not item:
        return 0
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


def write_units_of(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def _projected(item: Item, index: Any, table: Any) -> dict[str, Any]:
    if index.projection == "ALL":
        return dict(item)
    kept = {table.partition_key, table.sort_key, index.partition_key, index.sort_key, *index.included}
    return {name: value for name, value in item.items() if name in kept}


def index_write_units(before: Item | None, after: Item | None, index: Any, table: Any) -> int:
    """The write units ``index`` takes for a write from ``before`` to ``after`` (``None``: absent)."""
    keys = (index.partition_key, index.sort_key)
    was = before is not None and all(key in before for key in keys)
    now = after is not None and all(key in after for key in keys)
    units = 0
    if was and now:
        assert before is not None and after is not None
        old, new = _projected(before, index, table), _projected(after, index, table)
        if any(before[key] != after[key] for key in keys):
            units += write_units_of(item_size(old)) + write_units_of(item_size(new))
        elif old != new:
            units += write_units_of(item_size(new))
    elif now:
        assert after is not None
        units += write_units_of(item_size(_projected(after, index, table)))
    elif was:
        assert before is not None
        units += write_units_of(item_size(_projected(before, index, table)))
    return units


def write_units(
    before: Item | None,
    after: Item | None,
    indexes: Sequence[Any],
    table: Any,
    *,
    transactional: bool,
    done: bool = True,
) -> tuple[int, int]:
    """``(item units, index units)`` of one write of an item from ``before`` to ``after``; ``done`` is
    ``False`` for a write whose condition failed (its item's units only)."""
    own = write_units_of(max(item_size(before), item_size(after)))
    own *= 2 if transactional else 1
    if not done:
        return own, 0
    return own, sum(index_write_units(before, after, index, table) for index in indexes)
