"""The models a function calls (issue 30, "Models beside tools"): the providers that answer, the operator's
aliases and catalog, and the secrets of a provider's settings. A package of the core's middle floor, beside
``parley.tools``: it imports the foundation (``config``, ``errors``, ``secret``, ``clock``), the ports and
``parley.tools.servers`` (the secret readers), never a function type, the lifecycle or a front door.

This is its one face; the modules outside ``parley.models`` import only from here:

- what a model call takes and gives, whatever the provider (``providers.base``): :class:`ModelRequest`
  (with its :class:`Settings`, :data:`Effort`, the conversation's :class:`Turn`, :class:`ToolSpec`,
  :class:`ToolCall` and :class:`ToolResult`), :class:`ModelAnswer` (with its :class:`Usage`),
  :class:`ModelCallFailed`, and :class:`ProviderSettings`;
- the calls (``providers``): :func:`call_model`, :func:`list_provider_models` and
  :func:`provider_settings` (whether and how a provider is configured). A provider's adapter, httpx and
  boto3 are imported only when a call names the provider, so importing this package loads none of them;
- a model reference resolved through the aliases and the allowed list (``aliases``):
  :func:`resolve_reference`, :func:`is_allowed`, :class:`UnknownModelReference`, and the rejections
  :func:`model_not_allowed` and :func:`provider_not_configured`;
- the configured providers and the ``list_models`` listing (``listing``, over ``catalog``):
  :func:`configured_providers`, :func:`models_listing`, :func:`model_list_cache`;
- the secrets a provider's settings name, read at send time (``secrets``): :func:`resolver_for`.
"""

from __future__ import annotations

from parley.models.aliases import (
    UnknownModelReference,
    is_allowed,
    model_not_allowed,
    provider_not_configured,
    resolve_reference,
)
from parley.models.listing import configured_providers, model_list_cache, models_listing
from parley.models.providers import call_model, list_provider_models, provider_settings
from parley.models.providers.base import (
    Effort,
    ModelAnswer,
    ModelCallFailed,
    ModelRequest,
    ProviderSettings,
    Settings,
    ToolCall,
    ToolResult,
    ToolSpec,
    Turn,
    Usage,
)
from parley.models.secrets import resolver_for

__all__ = [
    "Effort",
    "ModelAnswer",
    "ModelCallFailed",
    "ModelRequest",
    "ProviderSettings",
    "Settings",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Turn",
    "UnknownModelReference",
    "Usage",
    "call_model",
    "configured_providers",
    "is_allowed",
    "list_provider_models",
    "model_list_cache",
    "model_not_allowed",
    "models_listing",
    "provider_not_configured",
    "provider_settings",
    "resolve_reference",
    "resolver_for",
]
