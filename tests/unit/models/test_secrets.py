"""The model providers' secrets (http-api.md, "Model providers"): ``resolver_for(runtime)`` reads
``{{resolve:secretsmanager:…}}`` references through the runtime's Secrets Manager client (moto here), keeps
them five minutes across calls, leaves other values alone, and names a secret it cannot read, never a value.
And the resolver is what a provider's list is read with: the key reaches the provider's header only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fake_providers import FakeProviders
from pydantic import SecretStr

from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.local.aws import local_session
from parley.models.providers import ProviderSettings, list_provider_models
from parley.models.secrets import SecretUnavailable, resolver_for
from parley.ports.runtime import Runtime

KEY = "sk-ant-from-the-store-5e1f"
JSON_KEY = "sk-gw-from-json-77a0"


class NoClient:
    """A Secrets Manager client that must not be used."""

    def get_secret_value(self, **_: Any) -> Any:
        raise AssertionError("no secret should have been read")


@pytest.fixture
def secretsmanager(dynamodb: tuple[Any, str]) -> Iterator[Any]:
    """A Secrets Manager client in the ``dynamodb`` fixture's moto."""
    client = local_session().client("secretsmanager")
    client.create_secret(Name="anthropic-key", SecretString=KEY)
    client.create_secret(Name="llm-keys", SecretString=json.dumps({"internal": JSON_KEY, "n": 3}))
    yield client


def runtime_with(dynamodb: tuple[Any, str], client: Any) -> Runtime:
    return Runtime(
        definitions=DynamoDefinitionStore(*dynamodb),
        clock=ManualClock(),
        operator=parse_operator_config("{}", "test", environ={}),
        secretsmanager=client,
    )


def test_values_without_a_reference_come_back_unchanged(dynamodb: tuple[Any, str]) -> None:
    resolve = resolver_for(runtime_with(dynamodb, NoClient()))
    for value in ["sk-plain-key", "", "Bearer x", "{{resolve:ssm:name}}", "{resolve:secretsmanager:x}"]:
        assert resolve(value) == value


def test_references_are_read(dynamodb: tuple[Any, str], secretsmanager: Any) -> None:
    resolve = resolver_for(runtime_with(dynamodb, secretsmanager))
    arn = secretsmanager.describe_secret(SecretId="llm-keys")["ARN"]

    assert resolve("{{resolve:secretsmanager:anthropic-key}}") == KEY
    assert resolve("{{resolve:secretsmanager:llm-keys:SecretString:internal}}") == JSON_KEY
    assert resolve(f"{{{{resolve:secretsmanager:{arn}:SecretString:internal}}}}") == JSON_KEY
    assert resolve("Bearer {{resolve:secretsmanager:anthropic-key}}") == f"Bearer {KEY}"


def test_what_was_read_is_kept_across_calls(dynamodb: tuple[Any, str], secretsmanager: Any) -> None:
    runtime = runtime_with(dynamodb, secretsmanager)
    assert resolver_for(runtime)("{{resolve:secretsmanager:anthropic-key}}") == KEY

    secretsmanager.put_secret_value(SecretId="anthropic-key", SecretString="sk-rotated")

    # another run, another list: the same client, the value kept (five minutes, as tool servers' headers)
    assert resolver_for(runtime)("{{resolve:secretsmanager:anthropic-key}}") == KEY
    # a runtime of another client keeps its own
    other = runtime_with(dynamodb, local_session().client("secretsmanager"))
    assert resolver_for(other)("{{resolve:secretsmanager:anthropic-key}}") == "sk-rotated"


def test_a_secret_that_cannot_be_read_is_named_never_its_value(
    dynamodb: tuple[Any, str], secretsmanager: Any
) -> None:
    resolve = resolver_for(runtime_with(dynamodb, secretsmanager))

    with pytest.raises(SecretUnavailable) as missing:
        resolve("{{resolve:secretsmanager:no-such-key}}")
    assert "'no-such-key'" in str(missing.value)
    assert "model provider" in str(missing.value)
    assert "ResourceNotFoundException" in str(missing.value)

    for key in ("absent", "n"):  # no such key; a key that is not text
        with pytest.raises(SecretUnavailable) as no_key:
            resolve(f"{{{{resolve:secretsmanager:llm-keys:SecretString:{key}}}}}")
        words = str(no_key.value)
        assert f"'{key}'" in words and "'llm-keys'" in words
        assert JSON_KEY not in words and "internal" not in words


def test_a_providers_list_is_read_with_the_resolved_key(
    dynamodb: tuple[Any, str], secretsmanager: Any
) -> None:
    resolve = resolver_for(runtime_with(dynamodb, secretsmanager))
    with FakeProviders() as fake:
        settings = ProviderSettings(
            "anthropic",
            "anthropic",
            api_key=SecretStr("{{resolve:secretsmanager:anthropic-key}}"),
            base_url=fake.url,
        )
        listed = list_provider_models(settings, resolve=resolve)
        assert [model.id for model in listed] == ["claude-test"]
        assert fake.sent_anywhere(KEY) == ["0 header x-api-key"]
        assert fake.sent_anywhere("resolve:secretsmanager") == []
