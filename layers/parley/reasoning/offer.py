"""Whether a run's model is offered, and how it is reached (``http-api.md``, "Model providers";
``reasoning-format.md``, "How a run ends"), decided before anything is sent:

1. the reference is resolved through the aliases (exact, else the longest wildcard prefix, one hop)
   and split at its first ``/`` into the provider and the model id, sent unchanged;
2. the reference as written or as the alias made it must be ``allowed`` (nothing is sent to a model
   outside it): else ``unavailable``, kind ``model_not_offered``, ``because: model_not_allowed``;
3. the provider must be configured: else ``unavailable`` naming the configured providers and aliases
   (kind ``model_not_offered``, ``because: provider_not_configured``, when others are configured);
4. the provider options: the namespaces the provider reads, a gateway's ``allowed_provider_options``,
   and no namespace that nothing configured reads (``conflict``, ``unworkable``; nothing is called).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.errors import Problem
from parley.models import (
    UnknownModelReference,
    configured_providers,
    is_allowed,
    model_not_allowed,
    provider_not_configured,
    provider_settings,
    resolve_reference,
)
from parley.reasoning.provider_options import gateway_options, options_for, unread_namespaces

if TYPE_CHECKING:
    from parley.config import ModelsConfig
    from parley.models import ProviderSettings
    from parley.reasoning.document import ReasoningDocument


@dataclass(frozen=True)
class Offer:
    """The model a run calls: as requested, as the aliases resolved it, and how to reach it."""

    requested: str
    resolved: str
    model_id: str
    provider: ProviderSettings
    provider_options: Mapping[str, Any]


def offer_for(document: ReasoningDocument, models: ModelsConfig, environ: Mapping[str, str]) -> Offer:
    """The run's model, or the problem that ends the run before anything is sent."""
    requested = f"{document.model.provider}/{document.model.model}"
    try:
        resolved = resolve_reference(requested, models)
    except UnknownModelReference as unknown:
        raise Problem(
            "conflict", f"The model {requested!r} cannot be called: {unknown}", kind="unworkable"
        ) from None
    if not is_allowed(requested, resolved.resolved, models):
        raise model_not_allowed(requested, resolved.resolved)
    settings = provider_settings(resolved.provider, models, environ)
    if settings is None:
        raise provider_not_configured(
            resolved.provider, configured_providers(models, environ), models.aliases
        )
    options = document.provider_options
    # Which namespaces something reads needs every provider's settings: only asked when there are options.
    unread = unread_namespaces(options, configured_providers(models, environ)) if options else []
    if unread:
        raise Problem(
            "conflict",
            f"The provider options under {', '.join(unread)} are read by no configured provider or gateway; "
            "nothing was called. Remove them, or ask the operator to configure the gateway they name.",
            kind="unworkable",
        )
    if settings.kind == "gateway":
        chosen = gateway_options(settings.provider, settings.allowed_provider_options, options)
    else:
        chosen = options_for(settings.kind, settings.provider, options)
    return Offer(requested, resolved.resolved, resolved.model_id, settings, chosen)
