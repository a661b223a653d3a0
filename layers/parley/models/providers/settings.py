"""Whether a provider is configured, and how (http-api.md, "Model providers").

Each built-in provider reads the environment variables its own SDK reads; the operator configuration may
hold the same keys under ``models.providers.<provider>``, and the environment wins, key by key. A gateway
is an entry of ``models.gateways``. ``models`` is the configuration's ``models`` section, read by its
attributes (``providers``, ``gateways``); ``None`` leaves only the environment.

- ``anthropic``: ``ANTHROPIC_API_KEY`` (sent as ``x-api-key``) or ``ANTHROPIC_AUTH_TOKEN`` (sent as
  ``Authorization: Bearer``); ``ANTHROPIC_BASE_URL``.
- ``openai``: ``OPENAI_API_KEY``; ``OPENAI_BASE_URL``; ``OPENAI_API=chat_completions`` for Chat Completions.
- ``azure``: ``AZURE_OPENAI_ENDPOINT`` (or ``AZURE_RESOURCE_NAME``: ``https://{name}.openai.azure.com``) and
  ``AZURE_OPENAI_API_KEY``; ``OPENAI_API_VERSION``.
- ``google``: ``GOOGLE_API_KEY``, or ``GEMINI_API_KEY`` (the first wins, as in Google's SDK).
- ``vertex``, ``vertex-anthropic``: ``GOOGLE_CLOUD_PROJECT``; ``GOOGLE_CLOUD_LOCATION`` (``global`` when
  left out); the credentials are the application default credentials, found when a run calls.
- ``bedrock``, ``bedrock-anthropic``: ``AWS_REGION`` or ``AWS_DEFAULT_REGION``; the credentials are the
  function's (its IAM role on AWS), so a known region is enough.

Values stay :class:`~parley.secret.Secret` (as the configuration holds them); a value may be a
``{{resolve:secretsmanager:…}}`` reference, which the adapter resolves when it sends (``call_model``'s
``resolve``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from parley.models.providers.base import ProviderKind, ProviderSettings
from parley.secret import Secret

BUILT_IN: Final = frozenset(
    {"anthropic", "openai", "azure", "google", "vertex", "vertex-anthropic", "bedrock", "bedrock-anthropic"}
)


class _Values:
    """One provider's values: the environment's, else the file's."""

    def __init__(self, provider: str, models: Any, environ: Mapping[str, str]) -> None:
        providers = getattr(models, "providers", None) if models is not None else None
        section = providers.get(provider) if isinstance(providers, Mapping) else None
        self._file: Mapping[str, Any] = section if isinstance(section, Mapping) else {}
        self._environ = environ

    def secret(self, *names: str) -> Secret | None:
        """The first of ``names`` set, as a secret."""
        for name in names:
            value = self._environ.get(name)
            if value:
                return Secret(value)
            kept = self._file.get(name)
            if isinstance(kept, str) or hasattr(kept, "get_secret_value"):
                found = _as_secret(kept)
                if found.get_secret_value():
                    return found
        return None

    def text(self, *names: str) -> str | None:
        secret = self.secret(*names)
        return secret.get_secret_value() if secret is not None else None


def provider_settings(provider: str, models: Any, environ: Mapping[str, str]) -> ProviderSettings | None:
    """The provider's settings, or ``None`` when it is not configured."""
    if provider not in BUILT_IN:
        return _gateway(provider, models)
    values = _Values(provider, models, environ)
    if provider == "anthropic":
        return _anthropic(values)
    if provider == "openai":
        key = values.secret("OPENAI_API_KEY")
        if key is None:
            return None
        api: Literal["responses", "chat_completions"] = (
            "chat_completions" if values.text("OPENAI_API") == "chat_completions" else "responses"
        )
        return ProviderSettings(
            "openai", "openai", api_key=key, base_url=values.text("OPENAI_BASE_URL"), api=api
        )
    if provider == "azure":
        return _azure(values)
    if provider == "google":
        key = values.secret("GOOGLE_API_KEY", "GEMINI_API_KEY")
        return ProviderSettings("google", "google", api_key=key) if key is not None else None
    if provider in ("vertex", "vertex-anthropic"):
        project = values.text("GOOGLE_CLOUD_PROJECT")
        if project is None:
            return None
        location = values.text("GOOGLE_CLOUD_LOCATION") or "global"
        google: ProviderKind = "vertex" if provider == "vertex" else "vertex-anthropic"
        return ProviderSettings(provider, google, project=project, location=location)
    region = values.text("AWS_REGION", "AWS_DEFAULT_REGION")
    if region is None:
        return None
    aws: ProviderKind = "bedrock" if provider == "bedrock" else "bedrock-anthropic"
    return ProviderSettings(provider, aws, region=region)


def _anthropic(values: _Values) -> ProviderSettings | None:
    base_url = values.text("ANTHROPIC_BASE_URL")
    key = values.secret("ANTHROPIC_API_KEY")
    if key is not None:
        return ProviderSettings("anthropic", "anthropic", api_key=key, base_url=base_url)
    token = values.secret("ANTHROPIC_AUTH_TOKEN")
    if token is None:
        return None
    bearer = {"Authorization": Secret(f"Bearer {token.get_secret_value()}")}
    return ProviderSettings("anthropic", "anthropic", base_url=base_url, headers=bearer)


def _azure(values: _Values) -> ProviderSettings | None:
    key = values.secret("AZURE_OPENAI_API_KEY")
    endpoint = values.text("AZURE_OPENAI_ENDPOINT")
    if endpoint is None:
        name = values.text("AZURE_RESOURCE_NAME")
        endpoint = f"https://{name}.openai.azure.com" if name else None
    if key is None or endpoint is None:
        return None
    return ProviderSettings(
        "azure", "azure", api_key=key, base_url=endpoint, api_version=values.text("OPENAI_API_VERSION")
    )


def _gateway(name: str, models: Any) -> ProviderSettings | None:
    for gateway in getattr(models, "gateways", None) or () if models is not None else ():
        if getattr(gateway, "name", None) != name:
            continue
        api_key = getattr(gateway, "api_key", None)
        headers = {key: _as_secret(value) for key, value in (getattr(gateway, "headers", None) or {}).items()}
        return ProviderSettings(
            name,
            "gateway",
            api_key=None if api_key is None else _as_secret(api_key),
            base_url=str(gateway.base_url),
            headers=headers,
            structured_outputs=bool(getattr(gateway, "structured_outputs", False)),
            allowed_provider_options=tuple(getattr(gateway, "allowed_provider_options", None) or ()),
        )
    return None


def _as_secret(value: Any) -> Secret:
    """A configuration value as a secret: a ``Secret`` kept, anything else that reads as a secret (such as
    pydantic's ``SecretStr``) taken over, anything else as its text."""
    if isinstance(value, Secret):
        return value
    read = getattr(value, "get_secret_value", None)
    return Secret(str(read() if callable(read) else value))
