"""``list_models`` as the API serves it (``http-api.md``, "Models"): the configured providers, their lists
read through the provider adapters (kept five minutes by one process-wide :class:`ModelListCache`), and the
catalog of ``parley.models.catalog`` around them.

A provider is configured when its settings are present (``provider_settings``: the environment, else the
operator's ``models.providers``); every gateway is. The lists are read side by side, each within
:data:`LIST_TIMEOUT_SECONDS`, so that one slow provider does not hold the answer past the API's own
timeout; a list that cannot be read makes the answer ``partial`` (the last good one serves meanwhile).
The providers' keys are resolved when a list is read (:func:`~parley.models.secrets.resolver_for`)
and never appear in the answer.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

from parley.config import BUILT_IN_PROVIDERS, ModelsConfig
from parley.errors import Problem
from parley.models.catalog import ListedModelLike, ModelListCache, list_models
from parley.models.providers import ProviderSettings, list_provider_models, provider_settings
from parley.models.secrets import resolver_for

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime

#: How long reading one provider's list may take in an API call, retries included: well within API
#: Gateway's 29 seconds, the lists being read side by side.
LIST_TIMEOUT_SECONDS: Final = 10.0
#: At most this many lists are read at once.
MAX_PARALLEL_LISTS: Final = 8

_cache: ModelListCache | None = None
_cache_lock = threading.Lock()


def model_list_cache() -> ModelListCache:
    """The process's cache of the providers' lists, made on first use (not at import)."""
    global _cache
    with _cache_lock:
        if _cache is None:
            _cache = ModelListCache()
        return _cache


def configured_providers(models: ModelsConfig, environ: Mapping[str, str]) -> list[str]:
    """The built-in providers that are configured (in :data:`~parley.config.BUILT_IN_PROVIDERS`' order),
    then every gateway, in the configuration's order."""
    return list(_configured(models, environ))


def models_listing(
    runtime: Runtime, *, provider: str | None, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ``list_models`` answer ``{object: "list", data, catalog_status, listed_at}``, only ``provider``'s
    entries when it is given; ``400 bad_request`` when ``provider`` is not a configured provider.
    ``environ`` (the process's environment when left out) holds the providers' settings."""
    models = runtime.operator.models
    settings = _configured(models, os.environ if environ is None else environ)
    if provider is not None and provider not in settings:
        raise Problem("bad_request", _not_configured(provider, list(settings)))
    resolve = resolver_for(runtime)

    def lister(name: str) -> Sequence[ListedModelLike]:
        return list_provider_models(settings[name], resolve=resolve, timeout_seconds=LIST_TIMEOUT_SECONDS)

    cache = model_list_cache()
    wanted = [name for name in settings if provider is None or name == provider]
    if len(wanted) > 1:  # read side by side; list_models then finds each list (or failure) just kept
        with ThreadPoolExecutor(min(len(wanted), MAX_PARALLEL_LISTS), "parley-model-lists") as pool:
            list(pool.map(lambda name: cache.read(name, lister, runtime.clock.now), wanted))
    return list_models(models, list(settings), lister, runtime.clock.now, provider, cache=cache)


def _configured(models: ModelsConfig, environ: Mapping[str, str]) -> dict[str, ProviderSettings]:
    found: dict[str, ProviderSettings] = {}
    for name in (*BUILT_IN_PROVIDERS, *(gateway.name for gateway in models.gateways)):
        settings = provider_settings(name, models, environ)
        if settings is not None:
            found[name] = settings
    return found


def _not_configured(provider: str, configured: list[str]) -> str:
    shown = repr(provider if len(provider) <= 64 else provider[:64] + "…")
    if not configured:
        return f"provider {shown} is not configured: no model provider is."
    return f"provider {shown} is not configured; the configured providers are {', '.join(configured)}."
