"""Which servers serve a playbook, ``allowed``, header secrets (with Secrets Manager references read
through moto) and scrubbing (http-api.md, "Operator configuration")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.ports.tools import ToolNotOffered
from parley.tools.servers import (
    HeaderSecrets,
    SecretUnavailable,
    check_allowed,
    scrub,
    secret_parts,
    server_serving,
    servers_serving,
)

CONFIG = parse_operator_config(
    """
tool_servers:
  - { name: chat, url: "http://127.0.0.1:9001/mcp", orgs: [acme], playbooks: [campaigns],
      allowed: [post_message], headers: { Authorization: "Bearer dev-chat-key" } }
  - { name: graph, url: "http://127.0.0.1:9002/mcp", orgs: [acme, globex] }
  - { name: billing, url: "http://127.0.0.1:9003/mcp", orgs: [globex] }
  - name: vault
    url: "http://127.0.0.1:9004/mcp"
    orgs: [acme]
    headers:
      Authorization: "Bearer {{resolve:secretsmanager:chat-token}}"
      X-Key: "{{resolve:secretsmanager:api-keys:SecretString:chat}}"
""",
    "test",
    environ={},
)
CAMPAIGNS = PlaybookRef("acme", "campaigns")


def test_servers_serving_a_playbook() -> None:
    assert [s.name for s in servers_serving(CONFIG, CAMPAIGNS)] == ["chat", "graph", "vault"]
    assert [s.name for s in servers_serving(CONFIG, PlaybookRef("acme", "launches"))] == ["graph", "vault"]
    assert [s.name for s in servers_serving(CONFIG, PlaybookRef("globex", "x"))] == ["graph", "billing"]


def test_another_orgs_server_is_not_configured_for_the_playbook() -> None:
    with pytest.raises(ToolNotOffered) as raised:
        server_serving(CONFIG, CAMPAIGNS, "billing")
    assert raised.value.because == "tool_server_not_configured"
    assert "search" in raised.value.detail


def test_allowed() -> None:
    chat = server_serving(CONFIG, CAMPAIGNS, "chat")
    check_allowed(chat, "post_message")
    with pytest.raises(ToolNotOffered) as raised:
        check_allowed(chat, "delete_channel")
    assert raised.value.because == "tool_not_allowed"
    check_allowed(server_serving(CONFIG, CAMPAIGNS, "graph"), "anything")


def test_literal_headers_and_what_is_scrubbed() -> None:
    resolved = HeaderSecrets().resolve(server_serving(CONFIG, CAMPAIGNS, "chat"))
    assert resolved.address.headers == {"Authorization": "Bearer dev-chat-key"}
    assert "dev-chat-key" not in repr(resolved) and "dev-chat-key" not in repr(resolved.address)
    assert resolved.scrub({"echo": "key dev-chat-key", "whole": "Bearer dev-chat-key"}) == {
        "echo": "key [secret]",
        "whole": "[secret]",
    }


def test_scrub_reaches_keys_lists_and_text() -> None:
    value = {"abcd-secret": ["x abcd-secret y", 3, None, {"k": "abcd-secret"}]}
    assert scrub(value, ["abcd-secret"]) == {"[secret]": ["x [secret] y", 3, None, {"k": "[secret]"}]}
    assert scrub("no secrets here", []) == "no secrets here"
    assert scrub("a b", ["a"]) == "a b"  # under 4 characters: not scrubbed
    assert secret_parts("Basic dXNlcjpwYXNz") == ["Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"]


@pytest.fixture
def secretsmanager() -> Iterator[Any]:
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("secretsmanager", region_name="us-east-1")
        client.create_secret(Name="chat-token", SecretString="tok-from-the-store-1")
        client.create_secret(Name="api-keys", SecretString=json.dumps({"chat": "key-from-json-2"}))
        yield client


def test_secrets_manager_references(secretsmanager: Any) -> None:
    resolved = HeaderSecrets(secretsmanager).resolve(server_serving(CONFIG, CAMPAIGNS, "vault"))
    assert resolved.address.headers == {
        "Authorization": "Bearer tok-from-the-store-1",
        "X-Key": "key-from-json-2",
    }
    assert resolved.scrub("a tok-from-the-store-1 b key-from-json-2") == "a [secret] b [secret]"
    assert "tok-from" not in repr(resolved)


def test_a_secret_arn_and_the_cache(secretsmanager: Any) -> None:
    arn = secretsmanager.describe_secret(SecretId="chat-token")["ARN"]
    config = parse_operator_config(
        f"""
tool_servers:
  - name: vault
    url: "http://127.0.0.1:9004/mcp"
    orgs: [acme]
    headers: {{ Authorization: "Bearer {{{{resolve:secretsmanager:{arn}}}}}" }}
""",
        "test",
        environ={},
    )
    now = [0.0]
    secrets = HeaderSecrets(lambda: secretsmanager, keep_seconds=300, monotonic=lambda: now[0])
    server = config.tool_servers[0]
    assert secrets.resolve(server).address.headers["Authorization"] == "Bearer tok-from-the-store-1"
    secretsmanager.put_secret_value(SecretId="chat-token", SecretString="tok-rotated-3")
    assert secrets.resolve(server).address.headers["Authorization"] == "Bearer tok-from-the-store-1"
    now[0] = 301.0
    assert secrets.resolve(server).address.headers["Authorization"] == "Bearer tok-rotated-3"


def test_a_missing_secret_names_it_and_no_value(secretsmanager: Any) -> None:
    secretsmanager.delete_secret(SecretId="chat-token", ForceDeleteWithoutRecovery=True)
    with pytest.raises(SecretUnavailable) as raised:
        HeaderSecrets(secretsmanager).resolve(server_serving(CONFIG, CAMPAIGNS, "vault"))
    assert "chat-token" in str(raised.value)
    assert "Authorization" in str(raised.value)
