"""``list_models`` (``http-api.md``, "Models"): the models a reasoning function may name.

The entries come from three places: the aliases (and the wildcard ``allowed`` entries, shown as patterns),
the operator's ``models.catalog``, and the list each configured provider gives. A provider's list is kept
five minutes (:class:`ModelListCache`); when a refresh fails the last good list is used, and a provider
with no list at all makes the answer ``partial``. ``listed_at`` is the time of the oldest list used, so a
caller sees how old the answer is.

Each entry is ``{id, object: "model", created, owned_by}`` plus, where known, ``name``,
``context_window``, ``max_tokens``, ``resolved_to`` (an alias) and ``pattern: true`` (a prefix such as
``anthropic/*``, not a model to run). ``created`` is the provider's Unix time, ``0`` where nobody said
(aliases, the catalog, patterns), so that it is always a whole number as OpenAI-style clients expect.

The provider adapters (``parley.models.providers``) give the lists; this module only needs
objects with the attributes of :class:`ListedModelLike`, so it does not depend on them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

from parley.clock import format_time
from parley.config import ModelsConfig

#: How long a provider's list is kept before it is read again.
LIST_MAX_AGE: Final = timedelta(minutes=5)
#: After a failed read, how long the provider is left alone before the next try (the last good list, if
#: any, serves meanwhile): a provider that is down does not slow every ``list_models``.
RETRY_AFTER_FAILURE: Final = timedelta(seconds=30)
#: ``owned_by`` of an operator's entry that names no provider (a wildcard ``allowed`` entry like ``gpt-*``).
OPERATOR: Final = "operator"

_EXTRAS: Final = ("name", "context_window", "max_tokens")


class ListedModelLike(Protocol):
    """An entry of a provider's list: ``parley.models.providers.base.ListedModel`` has these
    attributes; ``id`` is the provider's own id, without the ``provider/`` prefix."""

    @property
    def id(self) -> str: ...
    @property
    def created(self) -> int | None: ...
    @property
    def owned_by(self) -> str | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def context_window(self) -> int | None: ...
    @property
    def max_tokens(self) -> int | None: ...


Lister = Callable[[str], Sequence[ListedModelLike]]


@dataclass(frozen=True)
class ProviderList:
    """A provider's list as it was read at ``listed_at``."""

    models: tuple[ListedModelLike, ...]
    listed_at: datetime


@dataclass
class _Slot:
    good: ProviderList | None = None
    failed_at: datetime | None = None


class ModelListCache:
    """Each provider's list of models, kept ``max_age`` (five minutes); the last good list is kept when a
    refresh fails. Thread-safe; the lister is called outside the lock. One per process."""

    def __init__(
        self, max_age: timedelta = LIST_MAX_AGE, retry_after_failure: timedelta = RETRY_AFTER_FAILURE
    ) -> None:
        self._max_age = max_age
        self._retry_after_failure = retry_after_failure
        self._slots: dict[str, _Slot] = {}
        self._lock = threading.Lock()

    def read(self, provider: str, lister: Lister, now: Callable[[], datetime]) -> ProviderList | None:
        """The provider's list: the kept one while it is fresh, else a new one from ``lister`` (any
        exception is a failed read), else the last good one; ``None`` when there has never been one."""
        moment = now()
        with self._lock:
            slot = self._slots.setdefault(provider, _Slot())
            if slot.good is not None and moment - slot.good.listed_at < self._max_age:
                return slot.good
            if slot.failed_at is not None and moment - slot.failed_at < self._retry_after_failure:
                return slot.good
        try:
            models = tuple(lister(provider))
        except Exception as exc:
            # The type only: a provider's message may quote the request, and the request its credentials.
            _log().warning("The model list of %s could not be read (%s)", provider, type(exc).__name__)
            with self._lock:
                slot.failed_at = moment
                return slot.good
        fresh = ProviderList(models, moment)
        with self._lock:
            slot.good, slot.failed_at = fresh, None
        return fresh

    def clear(self) -> None:
        """Forget every list (tests; a changed configuration)."""
        with self._lock:
            self._slots.clear()


def list_models(
    models: ModelsConfig,
    configured: Sequence[str],
    lister: Lister,
    now: Callable[[], datetime],
    provider: str | None = None,
    *,
    cache: ModelListCache | None = None,
) -> dict[str, Any]:
    """The ``list_models`` answer: ``{object: "list", data, catalog_status, listed_at}``.

    ``configured``: the providers (and gateways) whose lists to read, through ``lister(provider)``, kept
    in ``cache`` (without one, each call reads every list). ``provider``: only the entries of that
    provider (an alias without a ``/`` counts as its target's provider).
    """
    cache = cache if cache is not None else ModelListCache()
    entries: dict[str, dict[str, Any]] = {}
    partial = False
    oldest: datetime | None = None
    for name in dict.fromkeys(configured):
        if provider is not None and name != provider:
            continue
        listed = cache.read(name, lister, now)
        if listed is None:
            partial = True
            continue
        oldest = listed.listed_at if oldest is None else min(oldest, listed.listed_at)
        _add_listed(entries, name, listed.models)
    _add_catalog(entries, models)
    _add_patterns(entries, models.allowed or ())
    _add_aliases(entries, models.aliases)
    data = [
        entry for _, entry in sorted(entries.items()) if provider is None or _provider_of(entry) == provider
    ]
    return {
        "object": "list",
        "data": data,
        "catalog_status": "partial" if partial else "complete",
        "listed_at": format_time(oldest if oldest is not None else now()),
    }


def _entry(model_id: str, owned_by: str, created: int | None = None) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created or 0, "owned_by": owned_by}


def _add_listed(entries: dict[str, dict[str, Any]], provider: str, listed: Iterable[ListedModelLike]) -> None:
    for model in listed:
        model_id = f"{provider}/{model.id}"
        if model_id in entries:
            continue
        entry = _entry(model_id, model.owned_by or provider, model.created)
        for key in _EXTRAS:
            value = getattr(model, key)
            if value is not None:
                entry[key] = value
        entries[model_id] = entry


def _add_catalog(entries: dict[str, dict[str, Any]], models: ModelsConfig) -> None:
    """The operator's catalog: its window and limit (and name, when given) win over a provider's list."""
    for item in models.catalog:
        entry = entries.setdefault(item.id, _entry(item.id, item.id.partition("/")[0]))
        entry["context_window"] = item.context_window
        entry["max_tokens"] = item.max_tokens
        if item.name is not None:
            entry["name"] = item.name


def _add_patterns(entries: dict[str, dict[str, Any]], allowed: Iterable[str]) -> None:
    for pattern in allowed:
        if pattern.endswith("*"):
            provider, slash, _ = pattern.partition("/")
            entry = entries.setdefault(pattern, _entry(pattern, provider if slash else OPERATOR))
            entry["pattern"] = True


def _add_aliases(entries: dict[str, dict[str, Any]], aliases: dict[str, str]) -> None:
    """Each alias, with its target (``resolved_to``) and what is known of that target; a wildcard alias
    is a pattern. The target is what a run calls, so its name and limits describe the alias."""
    targets = dict(entries)  # one hop: an alias describes its target as listed, never another alias
    for key, target in aliases.items():
        wildcard = key.endswith("*")
        known = None if wildcard else targets.get(target)
        entry = entries.setdefault(
            key,
            _entry(
                key,
                known["owned_by"] if known is not None else target.partition("/")[0],
                known["created"] if known is not None else None,
            ),
        )
        entry["resolved_to"] = target
        if wildcard:
            entry["pattern"] = True
        if known is not None:
            for extra in _EXTRAS:
                if extra in known:
                    entry[extra] = known[extra]


def _provider_of(entry: dict[str, Any]) -> str | None:
    """The provider an entry belongs to, for the ``provider`` query: its id's, or its target's."""
    for reference in (str(entry["id"]), str(entry.get("resolved_to", ""))):
        provider, slash, _ = reference.partition("/")
        if slash:
            return provider
    return None


def _log() -> logging.Logger:
    return logging.getLogger("parley.models")
