"""Operator configuration (http-api.md, "Operator configuration")."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from parley.config import (
    EnvironmentSettings,
    OperatorConfig,
    OperatorConfigError,
    load_operator_config,
    operator_config_from_environment,
    parse_operator_config,
)

ROOT = Path(__file__).resolve().parents[3]

#: The example of http-api.md, "Operator configuration" (with the ellipsis of the header filled in).
SPEC_EXAMPLE = """
principals:
  - id: alice                      # recorded as answered_by, started_by
    token: dev-alice               # local only; on AWS principals come from the JWT
    grants:
      - { org: acme, playbook: campaigns, role: write }
tool_servers:
  - name: chat                     # 1-32 of a-z, 0-9, '-', starting with a letter
    url: http://127.0.0.1:9001/mcp
    orgs: [acme]
    playbooks: [campaigns]         # optional: only these playbooks of those orgs
    allowed: [post_message, thread_replies]   # optional: only these tools
    record_content: true           # optional, true by default
    headers: { Authorization: "Bearer chat-secret" }    # optional; secret, never shown or recorded
limits:
  interaction_open_requests: 10000
"""


def test_the_spec_example_loads() -> None:
    config = parse_operator_config(SPEC_EXAMPLE, "operator.yaml", environ={})

    alice = config.principals[0]
    assert alice.id == "alice"
    assert alice.token.get_secret_value() == "dev-alice"
    assert alice.role_on("acme", "campaigns") == "write"
    assert alice.role_on("acme", "other") is None
    chat = config.tool_servers[0]
    assert (chat.name, chat.url, chat.orgs, chat.playbooks) == (
        "chat",
        "http://127.0.0.1:9001/mcp",
        ("acme",),
        ("campaigns",),
    )
    assert chat.allowed == ("post_message", "thread_replies")
    assert chat.headers["Authorization"].get_secret_value() == "Bearer chat-secret"
    assert (
        chat.serves("acme", "campaigns")
        and not chat.serves("acme", "other")
        and not chat.serves("beta", "campaigns")
    )
    assert config.limits.interaction_open_requests == 10_000


def test_defaults() -> None:
    config = parse_operator_config(
        "tool_servers: [{name: chat, url: 'https://chat.example/mcp', orgs: [acme]}]", "x", environ={}
    )

    server = config.tool_servers[0]
    assert (server.record_content, server.playbooks, server.allowed, server.headers) == (True, None, None, {})
    assert server.serves("acme", "anything")
    assert config.principals == ()
    assert config.limits.interaction_open_requests == 10_000
    assert parse_operator_config("", "empty", environ={}) == OperatorConfig()


def test_secrets_never_show() -> None:
    config = parse_operator_config(SPEC_EXAMPLE, "operator.yaml", environ={})

    for shown in (repr(config), str(config), json.dumps(asdict(config), default=str)):
        assert "dev-alice" not in shown
        assert "chat-secret" not in shown


def test_the_environment_wins_over_the_file_for_open_requests() -> None:
    config = parse_operator_config(SPEC_EXAMPLE, "operator.yaml", environ={"INTERACTION_OPEN_REQUESTS": "25"})
    assert config.limits.interaction_open_requests == 25
    assert (
        parse_operator_config(
            "", "x", environ={"INTERACTION_OPEN_REQUESTS": "7"}
        ).limits.interaction_open_requests
        == 7
    )


@pytest.mark.parametrize("value", ["many", "0", "-3", "1.5"])
def test_a_bad_open_requests_variable_is_named(value: str) -> None:
    with pytest.raises(OperatorConfigError, match=r"\$INTERACTION_OPEN_REQUESTS"):
        parse_operator_config("", "x", environ={"INTERACTION_OPEN_REQUESTS": value})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "principals: [{id: a, token: t, grants: [], extra: 1}]",
            "operator.yaml: principals[0]: unknown key 'extra' (allowed: id, token, grants)",
        ),
        (
            "limit: {}",
            "operator.yaml: top level: unknown key 'limit' "
            "(allowed: principals, tool_servers, limits, models, connections)",
        ),
        (
            "limits: {open_requests: 3}",
            "operator.yaml: limits: unknown key 'open_requests' "
            "(allowed: interaction_open_requests, workflow_max_duration)",
        ),
        (
            "tool_servers: [{name: c, url: 'http://x', orgs: [a], header: {}}]",
            "operator.yaml: tool_servers[0]: unknown key 'header'",
        ),
        (
            "principals: [{id: a, token: t, grants: [{org: acme, playbook: p, role: admin}]}]",
            "operator.yaml: principals[0].grants[0]: the admin role is the org's: leave playbook out",
        ),
        (
            "principals: [{id: a, token: t, grants: [{org: acme, playbook: p, role: owner}]}]",
            "operator.yaml: principals[0].grants[0].role: Input should be 'read', 'write' or 'admin'",
        ),
        ("principals: [{id: a, grants: []}]", "operator.yaml: principals[0].token: Field required"),
        ("principals: [{id: a, token: ' '}]", "operator.yaml: principals[0].token: a token cannot be empty"),
        (
            "principals: [{id: a, token: t}, {id: a, token: u}]",
            "operator.yaml: principals: duplicate principal id 'a'",
        ),
        (
            "principals: [{id: a, token: t}, {id: b, token: t}]",
            "operator.yaml: principals: two principals share a token",
        ),
        (
            "principals: [{id: a, token: t, grants: [{org: a, playbook: p, role: read},"
            " {org: a, playbook: p, role: write}]}]",
            "duplicate grant for org/playbook 'a/p'",
        ),
        (
            "principals: [{id: a, token: t, grants: [{org: 'a#b', playbook: p, role: read}]}]",
            "principals[0].grants[0].org: an org or playbook id",
        ),
        (
            "tool_servers: [{name: Chat, url: 'http://x', orgs: [a]}]",
            "tool_servers[0].name: a tool server name is 1 to 32",
        ),
        ("tool_servers: [{name: 1chat, url: 'http://x', orgs: [a]}]", "tool_servers[0].name"),
        (f"tool_servers: [{{name: {'c' * 33}, url: 'http://x', orgs: [a]}}]", "tool_servers[0].name"),
        (
            "tool_servers: [{name: chat, url: 'ftp://x', orgs: [a]}]",
            "tool_servers[0].url: a tool server url is an http",
        ),
        (
            "tool_servers: [{name: chat, url: 'http://x', orgs: []}]",
            "tool_servers[0].orgs: a tool server serves at least one org",
        ),
        (
            "tool_servers: [{name: chat, url: 'http://x', orgs: [a]},"
            " {name: chat, url: 'http://y', orgs: [a]}]",
            "duplicate tool server name 'chat'",
        ),
        (
            "tool_servers: [{name: chat, url: 'http://x', orgs: [a], record_content: maybe}]",
            "tool_servers[0].record_content",
        ),
        ("limits: {interaction_open_requests: 0}", "limits.interaction_open_requests"),
        ("principals: {}", "operator.yaml: principals"),
        ("- a list", "operator.yaml: the configuration is a mapping"),
        ("principals: [\n", "operator.yaml: not valid YAML"),
        ("limits: {}\nlimits: {}\n", "duplicate key 'limits'"),
    ],
)
def test_mistakes_name_the_file_and_the_field(text: str, message: str) -> None:
    with pytest.raises(OperatorConfigError) as caught:
        parse_operator_config(text, "operator.yaml", environ={})

    assert message in str(caught.value)


def test_errors_never_echo_secrets() -> None:
    with pytest.raises(OperatorConfigError) as caught:
        parse_operator_config("principals: [{id: a, token: hunter2, grants: 5}]", "x", environ={})

    assert "hunter2" not in str(caught.value)


def test_loading_a_file(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text(SPEC_EXAMPLE, encoding="utf-8")

    assert load_operator_config(path, environ={}).principals[0].id == "alice"
    with pytest.raises(OperatorConfigError, match=str(tmp_path / "missing.yaml")):
        load_operator_config(tmp_path / "missing.yaml")


def test_the_example_operator_file_has_a_writer_and_a_reader() -> None:
    config = load_operator_config(ROOT / "examples" / "operator.yaml", environ={})

    roles = {p.id: (p.token.get_secret_value(), p.role_on("acme", "campaigns")) for p in config.principals}
    assert roles == {"dev": ("dev-token", "write"), "viewer": ("viewer-token", "read")}


def test_on_aws_the_configuration_is_the_variable_json_or_yaml() -> None:
    grant = {"org": "o", "playbook": "p", "role": "read"}
    as_json = json.dumps({"principals": [{"id": "a", "token": "t", "grants": [grant]}]})

    assert operator_config_from_environment({"PARLEY_OPERATOR_CONFIG": as_json}).principals[0].id == "a"
    assert (
        operator_config_from_environment({"PARLEY_OPERATOR_CONFIG": "principals: [{id: b, token: t}]"})
        .principals[0]
        .id
        == "b"
    )
    assert operator_config_from_environment({}) == OperatorConfig()
    with pytest.raises(OperatorConfigError, match=r"^\$PARLEY_OPERATOR_CONFIG: principals\[0\]"):
        operator_config_from_environment({"PARLEY_OPERATOR_CONFIG": '{"principals": [{"id": "a"}]}'})


def test_environment_settings_need_the_table() -> None:
    assert EnvironmentSettings.from_environment({"PARLEY_TABLE": "parley-prod"}).table_name == "parley-prod"
    with pytest.raises(OperatorConfigError, match="PARLEY_TABLE"):
        EnvironmentSettings.from_environment({})


def test_a_workflow_runs_longest_duration_is_two_hours_to_a_year_and_the_variable_wins() -> None:
    from parley.config import OperatorConfigError, parse_operator_config

    assert (
        parse_operator_config("principals: []\n", "t", environ={}).limits.workflow_max_seconds == 30 * 86400
    )
    written = "principals: []\nlimits: { workflow_max_duration: PT3H }\n"
    assert parse_operator_config(written, "t", environ={}).limits.workflow_max_seconds == 3 * 3600
    overridden = parse_operator_config(written, "t", environ={"WORKFLOW_MAX_DURATION": "P365D"})
    assert overridden.limits.workflow_max_duration == "P365D"
    for refused in ("PT1H", "P366D", "a day"):
        with pytest.raises(OperatorConfigError, match="workflow_max_duration"):
            parse_operator_config("principals: []\n", "t", environ={"WORKFLOW_MAX_DURATION": refused})
