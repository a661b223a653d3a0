"""Whether and how each provider is configured, from the environment and the operator's ``models``."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import SecretStr

from parley.models.providers import ProviderSettings, provider_settings


@dataclass
class Gateway:
    name: str
    base_url: str
    api_key: SecretStr | None = None
    headers: dict[str, SecretStr] = field(default_factory=dict)
    structured_outputs: bool = False
    allowed_provider_options: tuple[str, ...] = ()


def models(
    providers: dict[str, dict[str, SecretStr]] | None = None, gateways: tuple[Gateway, ...] = ()
) -> Any:
    return SimpleNamespace(providers=providers or {}, gateways=gateways)


def secret(settings: ProviderSettings | None) -> str | None:
    assert settings is not None
    return settings.api_key.get_secret_value() if settings.api_key is not None else None


def test_nothing_configured_is_none_for_every_provider() -> None:
    for provider in (
        "anthropic",
        "openai",
        "azure",
        "google",
        "vertex",
        "vertex-anthropic",
        "bedrock",
        "bedrock-anthropic",
        "internal",
    ):
        assert provider_settings(provider, None, {}) is None
        assert provider_settings(provider, models(), {}) is None


def test_anthropic_from_its_key_or_its_token() -> None:
    settings = provider_settings(
        "anthropic", None, {"ANTHROPIC_API_KEY": "sk-ant-1", "ANTHROPIC_BASE_URL": "https://proxy.example"}
    )
    assert settings == ProviderSettings(
        "anthropic", "anthropic", api_key=SecretStr("sk-ant-1"), base_url="https://proxy.example"
    )

    settings = provider_settings("anthropic", None, {"ANTHROPIC_AUTH_TOKEN": "tok-1"})
    assert settings is not None
    assert settings.api_key is None
    assert {k: v.get_secret_value() for k, v in settings.headers.items()} == {"Authorization": "Bearer tok-1"}


def test_the_environment_wins_over_the_file_key_by_key() -> None:
    file = models(
        {
            "anthropic": {
                "ANTHROPIC_API_KEY": SecretStr("from-file"),
                "ANTHROPIC_BASE_URL": SecretStr("https://file"),
            }
        }
    )
    settings = provider_settings("anthropic", file, {"ANTHROPIC_API_KEY": "from-env"})
    assert secret(settings) == "from-env"
    assert settings is not None and settings.base_url == "https://file"

    assert secret(provider_settings("anthropic", file, {})) == "from-file"


def test_openai_and_its_api() -> None:
    settings = provider_settings("openai", None, {"OPENAI_API_KEY": "sk-1"})
    assert settings is not None and (settings.kind, settings.api, settings.base_url) == (
        "openai",
        "responses",
        None,
    )

    settings = provider_settings(
        "openai",
        None,
        {
            "OPENAI_API_KEY": "sk-1",
            "OPENAI_API": "chat_completions",
            "OPENAI_BASE_URL": "https://o.example/v1",
        },
    )
    assert settings is not None and (settings.api, settings.base_url) == (
        "chat_completions",
        "https://o.example/v1",
    )


def test_azure_from_its_endpoint_or_resource_name() -> None:
    settings = provider_settings(
        "azure",
        None,
        {
            "AZURE_OPENAI_API_KEY": "az-1",
            "AZURE_OPENAI_ENDPOINT": "https://acme.openai.azure.com",
            "OPENAI_API_VERSION": "preview",
        },
    )
    assert settings == ProviderSettings(
        "azure",
        "azure",
        api_key=SecretStr("az-1"),
        base_url="https://acme.openai.azure.com",
        api_version="preview",
    )
    settings = provider_settings(
        "azure", None, {"AZURE_OPENAI_API_KEY": "az-1", "AZURE_RESOURCE_NAME": "acme"}
    )
    assert settings is not None and settings.base_url == "https://acme.openai.azure.com"
    assert provider_settings("azure", None, {"AZURE_RESOURCE_NAME": "acme"}) is None


def test_google_takes_either_key_the_google_one_first() -> None:
    assert secret(provider_settings("google", None, {"GEMINI_API_KEY": "g-2"})) == "g-2"
    assert (
        secret(provider_settings("google", None, {"GOOGLE_API_KEY": "g-1", "GEMINI_API_KEY": "g-2"})) == "g-1"
    )


@pytest.mark.parametrize("provider", ["vertex", "vertex-anthropic"])
def test_vertex_needs_a_project_and_defaults_the_location(provider: str) -> None:
    settings = provider_settings(provider, None, {"GOOGLE_CLOUD_PROJECT": "acme-ai"})
    assert settings == ProviderSettings(provider, provider, project="acme-ai", location="global")  # type: ignore[arg-type]
    settings = provider_settings(
        provider, None, {"GOOGLE_CLOUD_PROJECT": "acme-ai", "GOOGLE_CLOUD_LOCATION": "us-east5"}
    )
    assert settings is not None and settings.location == "us-east5"


@pytest.mark.parametrize("provider", ["bedrock", "bedrock-anthropic"])
def test_bedrock_is_configured_whenever_a_region_is_known(provider: str) -> None:
    assert provider_settings(provider, None, {"AWS_REGION": "eu-west-1"}) == ProviderSettings(
        provider,
        provider,
        region="eu-west-1",  # type: ignore[arg-type]
    )
    settings = provider_settings(provider, None, {"AWS_DEFAULT_REGION": "us-west-2"})
    assert settings is not None and settings.region == "us-west-2"
    settings = provider_settings(provider, models({provider: {"AWS_REGION": SecretStr("ap-south-1")}}), {})
    assert settings is not None and settings.region == "ap-south-1"


def test_a_gateway_is_its_entry() -> None:
    gateway = Gateway(
        "internal",
        "http://127.0.0.1:9100/v1",
        api_key=SecretStr("gw-1"),
        headers={"x-tenant": SecretStr("acme")},
        structured_outputs=True,
        allowed_provider_options=("user",),
    )
    settings = provider_settings("internal", models(gateways=(gateway,)), {})
    assert settings == ProviderSettings(
        "internal",
        "gateway",
        api_key=SecretStr("gw-1"),
        base_url="http://127.0.0.1:9100/v1",
        headers={"x-tenant": SecretStr("acme")},
        structured_outputs=True,
        allowed_provider_options=("user",),
    )
    assert provider_settings("other", models(gateways=(gateway,)), {}) is None


def test_settings_never_show_their_secrets() -> None:
    settings = provider_settings("anthropic", None, {"ANTHROPIC_AUTH_TOKEN": "tok-very-secret"})
    assert "tok-very-secret" not in repr(settings)
    settings = provider_settings("openai", None, {"OPENAI_API_KEY": "sk-very-secret"})
    assert "sk-very-secret" not in repr(settings)
