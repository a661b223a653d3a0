"""Connections as tool servers (issue 32; ``reasoning-format.md``, "Tools", "Before the model is
called"; ``http-api.md``, "Connections"), in process: a real MCP server on 127.0.0.1 that refuses any
request without the connection's header (``tests/mcp_servers.py``), a fake Anthropic provider, and the
connection kept in the store and its header in the runtime's connection secrets.

A run names the connection's tool as ``notes/<tool>``; a pending, a broken and a disallowed connection
each end the run before the model is called; the header value appears in no response, record, event,
request to the model or log line."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from fake_providers import MESSAGES, FakeProviders, Scripted, anthropic_text
from fake_providers import anthropic_tool_steps as tool_use

from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.connections.model import Connection, ConnectionAuth, ConnectionStatus
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.errors import Problem
from parley.ports.runtime import Runtime
from parley.runs.kinds import check_source
from parley.runs.model import Run
from parley.runs.service import RunService, run_service
from parley.tools.service import ToolService

PLAYBOOK = PlaybookRef("acme", "campaigns")
KEY = "sk-ant-connections-key-42"
#: The connection's header value: a secret the tests look for everywhere.
CREDENTIAL = "conn-9d41e7c2b8a6f035"
HEADER = {"Authorization": f"Bearer {CREDENTIAL}"}


def operator(allowed_urls: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - {{ name: chat, url: "http://127.0.0.1:1/mcp", orgs: [acme] }}
models:
  allowed: [anthropic/*]
connections:
  allowed_urls: {allowed_urls}
"""


ALLOWING = '["http://127.0.0.1:*/*"]'
NO_LONGER = '["https://*.acme.example/*"]'


def function(tools: str) -> str:
    return f"""---
model: anthropic/claude-sonnet-4-5
tools: {tools}
---
{{% system %}}Use the tools to answer.{{% endsystem %}}
Question: {{{{ input.question }}}}
"""


@pytest.fixture
def runtime(dynamodb: tuple[Any, str], manual_clock: ManualClock, fake: FakeProviders, tools: Any) -> Runtime:
    client, table = dynamodb
    tools.require_headers(HEADER)
    return Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(operator(ALLOWING), "test", environ={}),
        check_document=check_source,
        environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url},
        run_wait_seconds=30,
    )


@pytest.fixture
def service(runtime: Runtime) -> RunService:
    return run_service(runtime)


@pytest.fixture
def connect(runtime: Runtime, tools: Any) -> Callable[..., Connection]:
    def connecting(
        name: str = "notes",
        status: ConnectionStatus = "active",
        auth: ConnectionAuth = "headers",
        playbooks: tuple[str, ...] | None = None,
        secret: dict[str, Any] | None = None,
    ) -> Connection:
        connection = Connection(
            org="acme",
            name=name,
            url=tools.url,
            status=status,
            playbooks=playbooks,
            added_by="dev",
            added_at="2026-01-01T00:00:00Z",
            approved_by="dev" if status == "active" else None,
            approved_at="2026-01-01T00:00:00Z" if status == "active" else None,
            auth=auth,
        )
        runtime.connections.add(connection)
        if auth != "none":
            runtime.connection_secrets.put(
                "acme", name, secret if secret is not None else {"headers": HEADER}
            )
        return connection

    return connecting


@pytest.fixture
def run(service: RunService) -> Callable[..., Run]:
    def running(tools: str, run_id: str | None = None) -> Run:
        source = function(tools)
        name = "fn-" + uuid.uuid5(uuid.NAMESPACE_URL, source + str(uuid.uuid4())).hex[:12]
        service.runtime.definition_service().create_definition(PLAYBOOK, "reasoning", name, source)
        return service.run_definition(
            PLAYBOOK,
            "reasoning",
            name,
            input_value={"question": "What is new?"},
            run_id=run_id,
            started_by="dev",
        )

    return running


def rejection(call: Callable[[], Any]) -> Problem:
    with pytest.raises(Problem) as raised:
        call()
    return raised.value


def everything_kept(service: RunService, run_id: str) -> str:
    """The run as read back and its whole history, as JSON text."""
    got = service.get_run(PLAYBOOK, run_id)
    events = list(service.get_run_history(PLAYBOOK, run_id, limit=100).items)
    return json.dumps([got.record, got.output, events], default=str)


def test_a_run_calls_a_connections_tool_with_its_header_and_keeps_no_trace_of_it(
    run: Callable[..., Run],
    service: RunService,
    fake: FakeProviders,
    tools: Any,
    connect: Callable[..., Connection],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    connect()
    fake.script(
        MESSAGES,
        tool_use(("notes__thread_replies", {"channel": "C1", "ts": "1.0"}), ("notes__whoami", {})),
        Scripted(body=anthropic_text("Two replies came in.")),
    )

    done = run("[notes/thread_replies, notes/whoami]")

    assert done.output == "Two replies came in."
    assert sorted(name for name, _ in tools.calls) == ["thread_replies", "whoami"]
    assert all(seen.get("authorization") == HEADER["Authorization"] for seen in tools.received)
    assert all(meta.get("auto.on/run_id") == done.run_id for meta in tools.metas)
    first = fake.requests_to("/v1/messages")[0]
    assert sorted(tool["name"] for tool in first.body["tools"]) == ["notes__thread_replies", "notes__whoami"]
    events = list(service.get_run_history(PLAYBOOK, done.run_id, limit=100).items)
    started = {e["data"]["tool"]: e["data"] for e in events if e["type"] == "tool_call_started"}
    assert started["thread_replies"]["server"] == "notes"
    assert started["thread_replies"]["read_only"] is True
    assert started["thread_replies"]["arguments"] == {"channel": "C1", "ts": "1.0"}  # content recorded
    answered = [e["data"] for e in events if e["type"] == "tool_call_answered"]
    assert any("[secret]" in json.dumps(data["result"]) for data in answered)  # whoami's echo, scrubbed
    # The secret is nowhere: not in the record, the events, what the model was sent, or a log line.
    assert CREDENTIAL not in everything_kept(service, done.run_id)
    assert fake.sent_anywhere(CREDENTIAL) == []
    assert CREDENTIAL not in caplog.text


@pytest.mark.parametrize(
    ("status", "secret", "because"),
    [
        ("pending", None, "connection_pending"),
        ("broken", None, "connection_broken"),
        ("active", {"nothing": "here"}, "connection_broken"),  # its credential cannot be read now
    ],
)
def test_a_connection_that_cannot_be_used_ends_the_run_before_the_model_is_called(
    run: Callable[..., Run],
    fake: FakeProviders,
    tools: Any,
    connect: Callable[..., Connection],
    status: ConnectionStatus,
    secret: dict[str, Any] | None,
    because: str,
) -> None:
    connect(status=status, secret=secret)

    problem = rejection(lambda: run("[notes/thread_replies]"))

    assert (problem.status, problem.reason, problem.kind, problem.because) == (
        503,
        "unavailable",
        "tool_not_offered",
        because,
    )
    assert "The model was not called." in problem.detail
    assert fake.requests_to("/v1/messages") == []
    assert tools.calls == []


def test_a_secret_that_cannot_be_read_makes_the_connection_broken(
    run: Callable[..., Run], runtime: Runtime, fake: FakeProviders, connect: Callable[..., Connection]
) -> None:
    connect()
    runtime.connection_secrets.delete("acme", "notes")

    assert rejection(lambda: run("[notes/*]")).because == "connection_broken"
    assert fake.requests_to("/v1/messages") == []


def test_a_rule_change_makes_the_next_run_not_allowed(
    run: Callable[..., Run],
    runtime: Runtime,
    fake: FakeProviders,
    tools: Any,
    connect: Callable[..., Connection],
) -> None:
    connect()
    fake.script(MESSAGES, Scripted(body=anthropic_text("Fine.")))
    assert run("[notes/thread_replies]").output == "Fine."

    runtime.operator = parse_operator_config(operator(NO_LONGER), "test", environ={})
    fake.reset()

    problem = rejection(lambda: run("[notes/thread_replies]"))
    assert (problem.reason, problem.kind, problem.because) == (
        "unavailable",
        "tool_not_offered",
        "connection_not_allowed",
    )
    assert fake.requests_to("/v1/messages") == []


def test_a_connection_serves_only_the_playbooks_it_names_and_the_operators_name_wins(
    run: Callable[..., Run], fake: FakeProviders, tools: Any, connect: Callable[..., Connection]
) -> None:
    connect(name="elsewhere", playbooks=("other",))
    connect(name="chat")  # as if added before the operator configured a server of that name

    assert rejection(lambda: run("[elsewhere/thread_replies]")).because == "tool_server_not_configured"
    # "chat" is the operator's server (unreachable here), not the connection.
    assert rejection(lambda: run("[chat/thread_replies]")).kind == "tool_server_failed"
    assert tools.calls == []
    assert fake.requests_to("/v1/messages") == []


def test_a_connection_without_a_credential_sends_no_header(
    run: Callable[..., Run], fake: FakeProviders, tools: Any, connect: Callable[..., Connection]
) -> None:
    tools.require_headers({})
    connect(auth="none")
    fake.script(
        MESSAGES,
        tool_use(("notes__thread_replies", {"channel": "C1", "ts": "1.0"})),
        Scripted(body=anthropic_text("Done.")),
    )

    assert run("[notes/thread_replies]").output == "Done."
    assert all("authorization" not in seen for seen in tools.received)


def test_an_oauth_connection_sends_its_access_token(
    run: Callable[..., Run], fake: FakeProviders, tools: Any, connect: Callable[..., Connection]
) -> None:
    connect(auth="oauth", secret={"oauth": {"access_token": CREDENTIAL, "token_endpoint": "https://x/t"}})
    fake.script(
        MESSAGES,
        tool_use(("notes__whoami", {})),
        Scripted(body=anthropic_text("Done.")),
    )

    assert run("[notes/whoami]").output == "Done."
    assert tools.calls == [("whoami", {})]
    assert fake.sent_anywhere(CREDENTIAL) == []


# --- search, introspect, execute, dry_run -------------------------------------------------------------


def test_the_tool_operations_reach_an_active_connection_and_keep_no_trace_of_its_secret(
    runtime: Runtime, service: RunService, tools: Any, connect: Callable[..., Connection]
) -> None:
    connect()
    connect(name="waiting", status="pending")
    operations = ToolService(runtime)

    found = operations.search(PLAYBOOK, None)
    by_name = {entry["server"]: entry for entry in found["servers"]}
    assert "thread_replies" in [tool["tool"] for tool in by_name["notes"]["tools"]]
    assert (by_name["waiting"]["tools"], by_name["waiting"]["because"]) == ([], "connection_pending")
    assert by_name["chat"]["because"] == "unreachable"  # the operator's server, first

    read = operations.introspect(PLAYBOOK, "notes", "thread_replies")
    assert (read["server"], read["read_only"]) == ("notes", True)

    executed = operations.execute(PLAYBOOK, "notes", "whoami", {}, by="dev")
    assert executed["outcome"] == "answered"
    dry = operations.dry_run(PLAYBOOK, "notes", "thread_replies", {"channel": "C1", "ts": "1.0"})
    assert dry["would_call"] is True

    events = operations.store.list_events(
        PLAYBOOK, run_id=None, event_type=None, since=None, descending=False, limit=100, after=None
    ).items
    assert [event.type for event in events] == ["tool_call_started", "tool_call_answered"]
    assert events[0].data["arguments"] == {}  # content recorded
    shown = json.dumps([found, read, executed, dry, [event.data for event in events]], default=str)
    assert CREDENTIAL not in shown
    assert "[secret]" in json.dumps(executed)


@pytest.mark.parametrize("status", ["pending", "broken"])
def test_the_tool_operations_answer_a_connection_that_cannot_be_used_with_its_because(
    runtime: Runtime, tools: Any, connect: Callable[..., Connection], status: ConnectionStatus
) -> None:
    connect(status=status)
    operations = ToolService(runtime)
    because = f"connection_{status}"

    for call in (
        lambda: operations.introspect(PLAYBOOK, "notes", "thread_replies"),
        lambda: operations.execute(PLAYBOOK, "notes", "thread_replies", {}, by="dev"),
    ):
        problem = rejection(call)
        assert (problem.status, problem.kind, problem.because) == (503, "tool_not_offered", because)
    dry = operations.dry_run(PLAYBOOK, "notes", "thread_replies", {})
    assert dry["would_call"] is False
    assert dry["checks"][0]["because"] == because
    assert tools.calls == []


def test_the_tool_operations_see_a_rule_change_at_the_next_read(
    runtime: Runtime, connect: Callable[..., Connection]
) -> None:
    connect()
    operations = ToolService(runtime)
    assert operations.introspect(PLAYBOOK, "notes", "thread_replies")["tool"] == "thread_replies"

    runtime.operator = parse_operator_config(operator(NO_LONGER), "test", environ={})

    assert rejection(lambda: operations.introspect(PLAYBOOK, "notes", "thread_replies")).because == (
        "connection_not_allowed"
    )
    entry = next(e for e in operations.search(PLAYBOOK, None)["servers"] if e["server"] == "notes")
    assert entry["because"] == "connection_not_allowed"


def test_a_save_does_not_warn_of_a_connection_it_names(
    runtime: Runtime, connect: Callable[..., Connection]
) -> None:
    connect(status="pending")
    saved = runtime.definition_service().create_definition(
        PLAYBOOK, "reasoning", "uses-notes", function("[notes/thread_replies, nowhere/thing]")
    )

    assert not any("notes" in warning for warning in saved.warnings)
    assert any("nowhere" in warning for warning in saved.warnings)


class RefusingSecretsManager:
    """A Secrets Manager client no connection may reach."""

    def get_secret_value(self, **_: Any) -> Any:
        raise AssertionError("a connection's header was taken for a reference to the operator's secrets")


def test_a_header_that_looks_like_a_reference_to_the_operators_secrets_is_sent_as_written(
    run: Callable[..., Run],
    runtime: Runtime,
    fake: FakeProviders,
    tools: Any,
    connect: Callable[..., Connection],
) -> None:
    written = {"X-Key": "{{resolve:secretsmanager:operator-chat-token}}"}
    runtime.secretsmanager = RefusingSecretsManager()
    tools.require_headers(written)
    connect(secret={"headers": written})
    fake.script(
        MESSAGES,
        tool_use(("notes__thread_replies", {"channel": "C1", "ts": "1.0"})),
        Scripted(body=anthropic_text("Done.")),
    )

    assert run("[notes/thread_replies]").output == "Done."
    assert {seen.get("x-key") for seen in tools.received} == {written["X-Key"]}


def test_a_connection_as_a_server_shows_no_header_value(
    runtime: Runtime, connect: Callable[..., Connection]
) -> None:
    from parley.tools.connected import server_for
    from parley.tools.servers import HeaderSecrets

    connect()
    server = server_for(runtime, PLAYBOOK, "notes")
    resolved = HeaderSecrets(RefusingSecretsManager()).resolve(server)

    assert resolved.address.headers == HEADER
    assert (server.allowed, server.approve, server.record_content) == (None, (), True)
    assert CREDENTIAL not in repr(server) + repr(resolved) + repr(resolved.address)
    assert resolved.scrub({"echo": f"Bearer {CREDENTIAL}", "alone": CREDENTIAL}) == {
        "echo": "[secret]",
        "alone": "[secret]",
    }
