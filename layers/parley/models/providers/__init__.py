"""The model providers of reasoning functions: one adapter per provider API, over httpx and boto3
(architecture.md, "Reasoning runs on AWS").

:func:`call_model` makes one model call (retries included, within ``request.timeout_seconds``) and
:func:`list_provider_models` reads a provider's list of models; :func:`provider_settings` says whether
and how a provider is configured. The adapter of a provider is imported only when a call names it
(:data:`ADAPTERS`), so importing this package loads no provider code, no httpx and no boto3: the api
function's cold start carries none of it.

What a call takes and gives, and how a failure's ``kind`` maps to a run's ending, is in ``base``.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from parley.models.providers.base import (
    Effort,
    FailureKind,
    FinishReason,
    ListedModel,
    ModelAnswer,
    ModelCallFailed,
    ModelRequest,
    ProviderKind,
    ProviderSettings,
    Settings,
    Usage,
)
from parley.models.providers.context import CallContext, same

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ADAPTERS",
    "LIST_TIMEOUT_SECONDS",
    "Effort",
    "FailureKind",
    "FinishReason",
    "ListedModel",
    "ModelAnswer",
    "ModelCallFailed",
    "ModelRequest",
    "ProviderKind",
    "ProviderSettings",
    "Settings",
    "Usage",
    "call_model",
    "list_provider_models",
    "provider_settings",
]

_PACKAGE: Final = __name__
#: The module of each provider kind's adapter, imported on first use.
ADAPTERS: Final[Mapping[str, str]] = {
    "anthropic": f"{_PACKAGE}.anthropic",
    "vertex-anthropic": f"{_PACKAGE}.anthropic",
    "bedrock-anthropic": f"{_PACKAGE}.anthropic",
    "openai": f"{_PACKAGE}.openai",
    "azure": f"{_PACKAGE}.openai",
    "gateway": f"{_PACKAGE}.openai",
    "google": f"{_PACKAGE}.google",
    "vertex": f"{_PACKAGE}.google",
    "bedrock": f"{_PACKAGE}.bedrock",
}
#: How long reading one provider's list of models may take, retries included.
LIST_TIMEOUT_SECONDS: Final = 30.0


class _Adapter(Protocol):
    def call(
        self, settings: ProviderSettings, request: ModelRequest, context: CallContext
    ) -> ModelAnswer: ...

    def list_models(
        self, settings: ProviderSettings, context: CallContext, timeout_seconds: float
    ) -> list[ListedModel]: ...


def _adapter(kind: str) -> _Adapter:
    return cast(_Adapter, importlib.import_module(ADAPTERS[kind]))


def call_model(
    settings: ProviderSettings,
    request: ModelRequest,
    *,
    http: httpx.Client | None = None,
    bedrock_client: Any | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    resolve: Callable[[str], str] = same,
    google_token: Callable[[], str] | None = None,
) -> ModelAnswer:
    """One model call, or :class:`ModelCallFailed`.

    ``http`` (an ``httpx.Client``) and ``bedrock_client`` (a ``bedrock-runtime`` client) are made when
    not given. ``resolve`` turns each configured secret value into what is sent (such as a Secrets
    Manager reference into its secret) at send time. ``google_token`` gives Vertex's access token instead
    of google-auth's application default credentials.
    """
    context = CallContext(http, bedrock_client, sleep, clock, resolve, google_token)
    answer = _adapter(settings.kind).call(settings, request, context)
    if answer.raw_finish_reason is None and not answer.text and not answer.refused:
        # A success status around no answer (no content, no finish reason): the provider cannot serve
        # now, which is not a success the run may record.
        raise ModelCallFailed(
            "unavailable",
            settings.provider,
            f"{settings.provider} answered without an answer (no content, no finish reason)",
        )
    return answer


def list_provider_models(
    settings: ProviderSettings,
    *,
    http: httpx.Client | None = None,
    bedrock_client: Any | None = None,
    resolve: Callable[[str], str] = same,
    timeout_seconds: float = LIST_TIMEOUT_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> list[ListedModel]:
    """The provider's list of models, from its list-models endpoint (``bedrock_client`` is a ``bedrock``
    client here, for ListFoundationModels), or :class:`ModelCallFailed`. Vertex lists nothing."""
    context = CallContext(http, bedrock_client, sleep, clock, resolve)
    return _adapter(settings.kind).list_models(settings, context, timeout_seconds)


def provider_settings(provider: str, models: Any, environ: Mapping[str, str]) -> ProviderSettings | None:
    """Whether and how ``provider`` is configured (see ``settings``); ``None`` when it is not."""
    from parley.models.providers.settings import provider_settings as read

    return read(provider, models, environ)
