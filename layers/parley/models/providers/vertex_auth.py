"""Vertex AI's URLs and access tokens, shared by ``vertex`` (Gemini) and ``vertex-anthropic``.

Vertex takes an OAuth access token from the application default credentials (Vertex AI docs,
"Authenticate to Vertex AI"). google-auth finds and refreshes them; it is imported only when a run
names a Vertex model, and when it is not installed the call fails as ``unavailable`` saying so. A test
(or a caller with its own credentials) passes ``google_token`` in the :class:`CallContext` instead.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any, Final

from parley.models.providers.base import ModelCallFailed, ProviderSettings
from parley.models.providers.context import CallContext

SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"

_lock = threading.Lock()
#: The default credentials, found once per process and refreshed when they expire.
_found: dict[str, Any] = {}


def vertex_base_url(settings: ProviderSettings) -> str:
    """The regional endpoint, or the global one for location ``global`` (Vertex AI docs, "Locations")."""
    if settings.base_url:
        return settings.base_url.rstrip("/")
    location = settings.location or "global"
    host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
    return f"https://{host}"


def publisher_model_url(settings: ProviderSettings, publisher: str, model: str, method: str) -> str:
    location = settings.location or "global"
    return (
        f"{vertex_base_url(settings)}/v1/projects/{settings.project}/locations/{location}"
        f"/publishers/{publisher}/models/{model}:{method}"
    )


def access_token(settings: ProviderSettings, context: CallContext) -> str:
    """A current access token for Vertex, or :class:`ModelCallFailed`."""
    if context.google_token is not None:
        return context.google_token()
    provider = settings.provider
    try:
        google_auth = importlib.import_module("google.auth")
        exceptions = importlib.import_module("google.auth.exceptions")
    except ImportError as exc:
        detail = f"{provider} needs the google-auth package for its credentials, and it is not installed"
        raise ModelCallFailed("unavailable", provider, detail) from exc
    try:
        with _lock:
            credentials = _found.get("credentials")
            if credentials is None:
                credentials, _ = google_auth.default(scopes=[SCOPE])
                _found["credentials"] = credentials
            if not credentials.valid:
                credentials.refresh(_auth_request())
            token = credentials.token
    except exceptions.DefaultCredentialsError as exc:
        raise ModelCallFailed(
            "unavailable", provider, f"no application default credentials were found for {provider}"
        ) from exc
    except exceptions.RefreshError as exc:
        raise ModelCallFailed(
            "credentials_rejected", provider, f"Google refused to refresh the credentials for {provider}"
        ) from exc
    except exceptions.TransportError as exc:
        raise ModelCallFailed(
            "unreachable", provider, f"Google's token endpoint cannot be reached for {provider}"
        ) from exc
    if not isinstance(token, str):
        raise ModelCallFailed("unavailable", provider, f"the credentials for {provider} gave no access token")
    return token


def _auth_request() -> Any:
    """google-auth's transport: requests when installed, else urllib3 (which botocore brings)."""
    try:
        return importlib.import_module("google.auth.transport.requests").Request()
    except ImportError:
        urllib3 = importlib.import_module("urllib3")
        return importlib.import_module("google.auth.transport.urllib3").Request(urllib3.PoolManager())
