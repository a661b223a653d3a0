"""What a function type makes of one definition version (an interaction's prepared function, a reasoning
function's checked document), kept per lifecycle: a version never changes once saved, so it is made once
and reused by every run of it, the least recently used let go past a bound."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Final, Generic, TypeVar

T = TypeVar("T")

#: Versions kept per lifecycle and type.
KEPT_VERSIONS: Final = 256


class PerVersion(Generic[T]):
    """Values by version key, made by the caller on first need (outside the lock: making one may take a
    document's whole check, and two threads making the same value at once is harmless)."""

    def __init__(self, size: int = KEPT_VERSIONS) -> None:
        self._size = size
        self._kept: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        made = make()
        with self._lock:
            self._kept[key] = made
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return made
