"""The operator's connection rules (issue 32): the URL patterns of ``connections.allowed_urls``, the
form of a connection's URL, ``status_under``, and the configuration's ``connections`` and ``admin``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from parley.config import ConnectionRules, OperatorConfigError, parse_operator_config
from parley.connections.model import Connection
from parley.connections.rules import UrlRefused, allowed_by, check_url, status_under, url_allowed

RULES = ConnectionRules(
    allowed_urls=("https://*.acme.com/*", "https://tools.example.org/mcp", "http://127.0.0.1:*/*")
)


@pytest.mark.parametrize(
    "url",
    [
        "https://mcp.acme.com/notes",
        "https://a.b.acme.com/x?y=1",
        "https://MCP.Acme.com/notes",
        "https://mcp.acme.com:443/notes",
        "https://tools.example.org/mcp",
        "http://127.0.0.1:9001/mcp",
    ],
)
def test_patterns_allow(url: str) -> None:
    assert url_allowed(url, RULES)
    assert allowed_by(url, RULES, loopback=True)


@pytest.mark.parametrize(
    "url",
    [
        "https://acme.com.evil.example/x.acme.com/",  # a host is compared whole
        "https://evil.example/mcp.acme.com/notes",
        "https://mcp.acme.com:8443/notes",  # the default port only
        "https://tools.example.org/mcp/more",  # a path is matched whole
        "https://tools.example.org/",
        "http://mcp.acme.com/notes",  # the scheme is matched exactly
        "http://127.0.0.2:9001/mcp",
    ],
)
def test_patterns_refuse(url: str) -> None:
    assert not url_allowed(url, RULES)


def test_without_allowed_urls_nothing_may_be_connected() -> None:
    for rules in (ConnectionRules(), ConnectionRules(allowed_urls=())):
        with pytest.raises(UrlRefused, match="allowed_urls is not set"):
            allowed_by("https://mcp.acme.com/notes", rules)


def test_the_refusal_names_the_rule() -> None:
    with pytest.raises(UrlRefused, match=r"allowed_urls does not allow .*https://\*\.acme\.com/\*"):
        allowed_by("https://elsewhere.example/", RULES)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://mcp.acme.com/", "https URL with a host"),
        ("https:///nohost", "https URL with a host"),
        ("http://mcp.acme.com/", "http is allowed only to 127.0.0.1"),
        ("https://user:pw@mcp.acme.com/", "no user name or password"),
        ("https://mcp.acme.com/#x", "no fragment"),
        ("https://mcp.acme.com/ x", "no spaces"),
        ("https://mcp.acme.com:99999/", "https URL with a host"),
        ("https://mcp.acme.com/" + "x" * 3000, "at most 2048"),
    ],
)
def test_a_url_that_cannot_be_a_connection(url: str, words: str) -> None:
    with pytest.raises(UrlRefused, match=words):
        check_url(url, loopback=True)


def test_http_to_the_loopback_only_on_the_local_server() -> None:
    assert check_url("http://127.0.0.1:9001/mcp", loopback=True)[2] == 9001
    with pytest.raises(UrlRefused, match="on the local server"):
        check_url("http://127.0.0.1:9001/mcp")


def test_a_rule_change_makes_a_connection_not_allowed() -> None:
    connection = Connection(
        org="acme",
        name="notes",
        url="https://mcp.acme.com/notes",
        status="active",
        playbooks=None,
        added_by="alice",
        added_at="2026-12-02T03:00:00Z",
        approved_by="root",
        approved_at="2026-12-02T03:01:00Z",
        auth="none",
    )
    assert status_under(connection, RULES) == "active"
    assert status_under(replace(connection, status="pending"), RULES) == "pending"
    assert (
        status_under(connection, ConnectionRules(allowed_urls=("https://other.acme.org/*",))) == "not_allowed"
    )
    assert status_under(connection, ConnectionRules()) == "not_allowed"


def test_the_configuration_reads_connections_and_admin() -> None:
    config = parse_operator_config(
        """
principals:
  - id: root
    token: root-token
    grants:
      - { org: acme, role: admin }
      - { org: acme, playbook: campaigns, role: read }
connections:
  allowed_urls: ["https://*.acme.com/*"]
  require_approval: false
""",
        "test",
    )
    root = config.principal_named("root")
    assert root.is_admin_of("acme") and not root.is_admin_of("globex")
    assert root.role_on("acme", "campaigns") == "read"
    assert [g.playbook for g in root.playbook_grants()] == ["campaigns"]
    assert config.connections == ConnectionRules(
        allowed_urls=("https://*.acme.com/*",), require_approval=False
    )
    assert parse_operator_config("", "test").connections == ConnectionRules(None, True)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{org: acme, role: admin, playbook: campaigns}", "leave playbook out of an admin grant"),
        ("{org: acme, role: write}", "a write grant names its playbook"),
        ("{org: acme, role: owner}", "admin"),
    ],
)
def test_grants_that_do_not_hold(text: str, words: str) -> None:
    with pytest.raises(OperatorConfigError, match=words):
        parse_operator_config(f"principals: [{{id: a, token: t, grants: [{text}]}}]", "test")


def test_two_admin_grants_of_one_org_are_one_too_many() -> None:
    with pytest.raises(OperatorConfigError, match="duplicate grant"):
        parse_operator_config(
            "principals: [{id: a, token: t, grants: [{org: acme, role: admin}, {org: acme, role: admin}]}]",
            "test",
        )


@pytest.mark.parametrize("pattern", ["acme.com", "ftp://x/*", "https://", "https://a b/", "https://x:0/"])
def test_a_pattern_that_is_not_one(pattern: str) -> None:
    with pytest.raises(OperatorConfigError, match=r"connections\.allowed_urls\[0\]"):
        parse_operator_config(f"connections: {{allowed_urls: ['{pattern}']}}", "test")
