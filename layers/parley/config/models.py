"""``models`` (``http-api.md``, "Operator configuration" and "Model providers"): which models reasoning
functions may run and how references reach them — allowed references, aliases, gateways, a catalog, the
built-in providers' settings (the environment's values win, :meth:`ModelsConfig.provider_settings`)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from parley.config.rules import is_secret_reference, on_aws, refuse_duplicates, store_only
from parley.reading import (
    Reading,
    bounded_text,
    flag,
    items,
    mapping,
    optional,
    reads,
    record,
    secret,
    text,
    then,
    whole,
)
from parley.secret import Secret

#: The providers the runtime knows by name (``http-api.md``, "Model providers"); a gateway takes any
#: other name of the same shape.
BUILT_IN_PROVIDERS: Final = (
    "anthropic",
    "openai",
    "azure",
    "google",
    "vertex",
    "vertex-anthropic",
    "bedrock",
    "bedrock-anthropic",
)
#: Each built-in provider's settings, named as its own SDK reads them from the environment; the file
#: may hold the same names under ``models.providers.<provider>``.
PROVIDER_SETTINGS: Final[Mapping[str, tuple[str, ...]]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API"),
    "azure": ("AZURE_OPENAI_ENDPOINT", "AZURE_RESOURCE_NAME", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "vertex": ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
    "vertex-anthropic": ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
    "bedrock": ("AWS_REGION",),
    "bedrock-anthropic": ("AWS_REGION",),
}
#: The settings that are keys: on AWS each is a Secrets Manager reference, never the key itself.
SECRET_PROVIDER_SETTINGS: Final = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
    }
)
#: The Chat Completions body fields the runtime sets or reads itself: a gateway's
#: ``allowed_provider_options`` cannot hand them to a function (``reasoning-format.md``, "Options for a
#: gateway").
RUNTIME_SET_FIELDS: Final = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "stop",
        "response_format",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "functions",
        "function_call",
        "stream",
        "stream_options",
        "reasoning_effort",
        "n",
    }
)

_PROVIDER_NAME: Final = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_MODEL_REFERENCE_TEXT: Final = re.compile(r"^[^\s*]+\*?$")
_BODY_FIELD: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
#: An HTTP header's name: 1 to 128 of the token characters (RFC 9110).
HEADER_NAME: Final = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
#: Headers the HTTP client sets itself; a gateway's ``headers`` cannot replace them.
_CLIENT_HEADERS: Final = frozenset({"host", "content-type", "content-length", "transfer-encoding"})


def _gateway_name(value: str) -> str:
    if not _PROVIDER_NAME.match(value):
        raise ValueError("a gateway name is 1 to 32 of a-z, 0-9 and '-', starting with a letter")
    if value in BUILT_IN_PROVIDERS:
        raise ValueError(
            f"{value!r} is a built-in provider; a gateway takes a name of its own "
            f"(built-in: {', '.join(BUILT_IN_PROVIDERS)})"
        )
    return value


def _pattern_or_reference(value: str) -> str:
    """An ``allowed`` entry or an alias key: a name or ``provider/model``, or a prefix ending in ``*``."""
    if not _MODEL_REFERENCE_TEXT.match(value) or value == "*":
        raise ValueError(
            f"{value!r}: a model reference (such as anthropic/claude-sonnet-4-5), an alias name, or a "
            "prefix ending in * (such as anthropic/*); no spaces, and * only at the end"
        )
    return value


def _gateway_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("a gateway base_url is an http:// or https:// URL with a host")
    return url


def _api_key(key: Secret | None, reading: Reading) -> Secret | None:
    if key is None:
        return None
    if not key.get_secret_value().strip():
        raise ValueError("an api_key cannot be empty (leave it out when the gateway needs none)")
    if on_aws(reading) and not is_secret_reference(key):
        raise ValueError(store_only("the api_key"))
    return key


def _gateway_headers(headers: dict[str, Secret], reading: Reading) -> dict[str, Secret]:
    for name, value in headers.items():
        if not HEADER_NAME.match(name):
            raise ValueError(f"{name!r} is not an HTTP header name")
        if name.lower() in _CLIENT_HEADERS:
            raise ValueError(f"header {name!r} is set by the HTTP client; leave it out")
        if on_aws(reading) and not is_secret_reference(value):
            raise ValueError(store_only(f"the header {name!r}"))
    return headers


def _options_the_runtime_leaves(options: tuple[str, ...]) -> tuple[str, ...]:
    for option in options:
        if not _BODY_FIELD.match(option):
            raise ValueError(f"{option!r} is not a request body field name")
        if option in RUNTIME_SET_FIELDS:
            raise ValueError(
                f"{option!r} cannot be allowed: the runtime sets it itself "
                "(the front matter's settings, the messages, the tools and the output format)"
            )
    refuse_duplicates(options, "allowed provider option")
    return options


@dataclass(frozen=True)
class Gateway:
    """An OpenAI-compatible Chat Completions endpoint, named by the operator: its name is the provider
    part of the references that reach it (``internal/llama-3.3-70b``)."""

    name: str = field(metadata=reads(then(text, _gateway_name)))
    base_url: str = field(metadata=reads(then(text, _gateway_url)))
    api_key: Secret | None = field(default=None, metadata=reads(optional(secret), _api_key))
    headers: dict[str, Secret] = field(
        default_factory=dict, metadata=reads(mapping(secret), _gateway_headers)
    )
    #: Whether the endpoint takes ``response_format: {type: json_schema}``.
    structured_outputs: bool = field(default=False, metadata=reads(flag))
    #: The top-level body fields a function's provider options may set for this gateway.
    allowed_provider_options: tuple[str, ...] = field(
        default=(), metadata=reads(then(items(text), _options_the_runtime_leaves))
    )

    def checked(self) -> None:
        """One way to authorize: the api_key or an Authorization header."""
        if self.api_key is not None and any(name.lower() == "authorization" for name in self.headers):
            raise ValueError(
                "the api_key is sent as Authorization: Bearer; give either api_key or an Authorization header"
            )


def _provider_and_model(value: str) -> str:
    provider, _, model = value.partition("/")
    if not _PROVIDER_NAME.match(provider) or not model or any(c.isspace() or c == "*" for c in model):
        raise ValueError(
            f"{value!r}: a catalog id is provider/model, such as internal/llama-3.3-70b (no * or spaces)"
        )
    return value


@dataclass(frozen=True)
class CatalogEntry:
    """A model the providers do not list (or list without its limits), with its limits."""

    id: str = field(metadata=reads(then(text, _provider_and_model)))
    context_window: int = field(metadata=reads(whole(minimum=1)))
    max_tokens: int = field(metadata=reads(whole(minimum=1)))
    name: str | None = field(default=None, metadata=reads(optional(bounded_text(1, 200))))

    def checked(self) -> None:
        """The output fits the window."""
        if self.max_tokens > self.context_window:
            raise ValueError(
                f"max_tokens ({self.max_tokens}) is more than the context_window ({self.context_window})"
            )


def _aliases(aliases: dict[str, str]) -> dict[str, str]:
    for key, target in aliases.items():
        try:
            _pattern_or_reference(key)
        except ValueError as exc:
            raise ValueError(f"alias {exc}") from None
        provider, _, model = target.partition("/")
        wildcard = key.endswith("*")
        if not _PROVIDER_NAME.match(provider) or not model or any(c.isspace() for c in model):
            raise ValueError(
                f"alias {key!r}: its target {target!r} is provider/model, such as anthropic/claude-haiku-4-5"
            )
        if wildcard != target.endswith("*") or "*" in target[:-1]:
            raise ValueError(
                f"alias {key!r}: a wildcard alias (ending in *) maps to a target ending in *, such as "
                "anthropic/*: bedrock-anthropic/us.anthropic.*; an exact alias maps to one model"
            )
    return aliases


def _distinct_gateways(gateways: tuple[Gateway, ...]) -> tuple[Gateway, ...]:
    refuse_duplicates((g.name for g in gateways), "gateway name")
    return gateways


def _distinct_catalog(catalog: tuple[CatalogEntry, ...]) -> tuple[CatalogEntry, ...]:
    refuse_duplicates((entry.id for entry in catalog), "catalog id")
    return catalog


def _provider_settings(
    providers: dict[str, dict[str, Secret]], reading: Reading
) -> dict[str, dict[str, Secret]]:
    for provider, settings in providers.items():
        if provider not in PROVIDER_SETTINGS:
            raise ValueError(
                f"{provider!r} is not a built-in provider ({', '.join(BUILT_IN_PROVIDERS)}); "
                "a gateway's settings belong to its entry in gateways"
            )
        names = PROVIDER_SETTINGS[provider]
        for name, value in settings.items():
            if name not in names:
                raise ValueError(f"{provider}: unknown setting {name!r} (allowed: {', '.join(names)})")
            if not value.get_secret_value().strip():
                raise ValueError(f"{provider}.{name} cannot be empty (leave it out)")
            if on_aws(reading) and name in SECRET_PROVIDER_SETTINGS and not is_secret_reference(value):
                raise ValueError(store_only(f"{provider}.{name}"))
    return providers


@dataclass(frozen=True)
class ModelsConfig:
    """Which models reasoning functions may run and how references reach them (``http-api.md``,
    "Operator configuration" and "Model providers")."""

    #: Only these references or prefixes (``anthropic/*``) may run, as written or as an alias made them;
    #: left out, every model of a configured provider may.
    allowed: tuple[str, ...] | None = field(
        default=None, metadata=reads(optional(items(then(text, _pattern_or_reference))))
    )
    #: Exact names (``fast``) and wildcard prefixes (``anthropic/*`` to ``bedrock-anthropic/us.anthropic.*``),
    #: followed one hop.
    aliases: dict[str, str] = field(default_factory=dict, metadata=reads(then(mapping(text), _aliases)))
    gateways: tuple[Gateway, ...] = field(
        default=(), metadata=reads(then(items(record(Gateway)), _distinct_gateways))
    )
    catalog: tuple[CatalogEntry, ...] = field(
        default=(), metadata=reads(then(items(record(CatalogEntry)), _distinct_catalog))
    )
    #: ``provider -> {SETTING: value}``, the same names the environment gives (the environment wins).
    providers: dict[str, dict[str, Secret]] = field(
        default_factory=dict, metadata=reads(mapping(mapping(secret)), _provider_settings)
    )
    reasoning_max_input_tokens: int | None = field(default=None, metadata=reads(optional(whole(minimum=1))))

    def gateway_named(self, name: str) -> Gateway | None:
        """The gateway ``name``, or ``None``."""
        return next((gateway for gateway in self.gateways if gateway.name == name), None)

    def provider_settings(self, provider: str, environ: Mapping[str, str] | None = None) -> dict[str, Secret]:
        """A built-in provider's settings: the file's, each replaced by the environment's value when the
        environment (default ``os.environ``) sets it; empty for a gateway or an unknown provider."""
        env = os.environ if environ is None else environ
        settings = dict(self.providers.get(provider, {}))
        for name in PROVIDER_SETTINGS.get(provider, ()):
            value = env.get(name, "")
            if value.strip():
                settings[name] = Secret(value)
        return settings


__all__ = [
    "BUILT_IN_PROVIDERS",
    "HEADER_NAME",
    "PROVIDER_SETTINGS",
    "RUNTIME_SET_FIELDS",
    "SECRET_PROVIDER_SETTINGS",
    "CatalogEntry",
    "Gateway",
    "ModelsConfig",
]
