"""Connections as tool servers end to end (issue 32; ``http-api.md``, "Connections", "Tool servers";
``reasoning-format.md``, "Before the model is called"): a real ``parley serve --clock manual`` keeping
its data in a folder, a real MCP server on 127.0.0.1 that answers only requests carrying the
connection's header, and a fake Anthropic provider.

A writer adds the connection through the route, a run ends ``connection_pending`` before any model
call, the org's admin approves it, a run calls its tool with the header, ``search`` and ``execute``
reach it; the server restarted with ``allowed_urls`` that no longer allow it ends the next run
``connection_not_allowed``, and restarted with another secret key (its credential unreadable)
``connection_broken``. The header value appears in no response, event, server log or data file.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_providers import MESSAGES, FakeProviders, Scripted, anthropic_text
from fake_providers import anthropic_tool_steps as tool_use
from mcp_servers import LocalToolServer, running_tool_server
from tool_serving import serving_manually

pytestmark = pytest.mark.http

ANTHROPIC_KEY = "sk-ant-http-conn-1c5e0b7d"
CREDENTIAL = "conn-http-4e8a2f61d9c3b705"
HEADER = {"Authorization": f"Bearer {CREDENTIAL}"}
WRITER = {"Authorization": "Bearer dev-token"}
ADMIN = {"Authorization": "Bearer boss-token"}
ORG = "/v1/orgs/acme"
BASE = f"{ORG}/playbooks/campaigns"
ALLOWING = '["http://127.0.0.1:*/*"]'
NO_LONGER = '["https://*.acme.example/*"]'
FUNCTION = """---
model: anthropic/claude-sonnet-4-5
tools: [notes/thread_replies, notes/whoami]
---
Question: {{ input.question }}
"""


def operator(allowed_urls: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
  - id: boss
    token: boss-token
    grants: [{{ org: acme, role: admin }}, {{ org: acme, playbook: campaigns, role: read }}]
models:
  allowed: [anthropic/*]
connections:
  allowed_urls: {allowed_urls}
"""


@dataclass
class Stage:
    """What the module's servers share: the folders, the fake provider, the MCP server, and every
    response body its clients received (for the secret's search)."""

    tmp: Path
    data: Path
    key_file: Path
    fake: FakeProviders
    tools: LocalToolServer
    bodies: list[str] = field(default_factory=list)

    @contextmanager
    def serving(self, allowed_urls: str, key_file: Path | None = None) -> Iterator[httpx.Client]:
        config = self.tmp / "operator.yaml"
        config.write_text(operator(allowed_urls), encoding="utf-8")
        with pytest.MonkeyPatch.context() as env:  # only while the process starts: it copies os.environ
            env.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            env.setenv("ANTHROPIC_BASE_URL", self.fake.url)
            env.setenv("PARLEY_SECRET_KEY_FILE", str(key_file or self.key_file))
            served = serving_manually(config, self.tmp / "serve.log", data=self.data)
            url = served.__enter__()
        try:

            def keep(response: httpx.Response) -> None:
                response.read()
                self.bodies.append(response.text)

            with httpx.Client(base_url=url, timeout=60, event_hooks={"response": [keep]}) as client:
                yield client
        finally:
            served.__exit__(None, None, None)


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[Stage]:
    with FakeProviders() as fake, running_tool_server() as tools:
        tools.require_headers(HEADER)
        data = tmp_path / "data"
        data.mkdir()
        yield Stage(tmp_path, data, tmp_path / "keys" / "secret.key", fake, tools)


def run(http: httpx.Client, name: str) -> httpx.Response:
    return http.post(
        f"{BASE}/definitions/reasoning/{name}/run",
        json={"input": {"question": "What is new?"}, "run_id": str(uuid.uuid4())},
        headers=WRITER,
    )


def mcp(http: httpx.Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One ``tools/call`` of the MCP front door, as the writer (its result)."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"org": "acme", "playbook": "campaigns", **arguments}},
    }
    reply = http.post(
        "/mcp",
        content=json.dumps(message),
        headers={
            **WRITER,
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert reply.status_code == 200, reply.text
    text = reply.text
    if text.startswith(("event:", "data:")):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    result: dict[str, Any] = json.loads(text)["result"]
    return result


def not_offered(reply: httpx.Response, because: str) -> None:
    assert reply.status_code == 503, reply.text
    body = reply.json()
    assert (body["reason"], body["kind"], body["because"]) == ("unavailable", "tool_not_offered", because)


def test_a_connection_added_approved_used_and_then_disallowed_or_broken(stage: Stage) -> None:
    with stage.serving(ALLOWING) as http:
        saved = http.post(
            f"{BASE}/definitions/reasoning", json={"name": "ask", "source": FUNCTION}, headers=WRITER
        )
        assert saved.status_code == 201, saved.text

        added = http.post(
            f"{ORG}/connections",
            json={"name": "notes", "url": stage.tools.url, "headers": HEADER},
            headers=WRITER,
        )
        assert added.status_code == 201, added.text
        assert added.json()["status"] == "pending"

        not_offered(run(http, "ask"), "connection_pending")
        not_offered(
            http.get(f"{BASE}/tool-servers/notes/tools/thread_replies", headers=WRITER), "connection_pending"
        )
        searched = http.get(f"{BASE}/tool-servers/search", headers=WRITER).json()["servers"]
        assert [(s["server"], s["tools"], s["because"]) for s in searched] == [
            ("notes", [], "connection_pending")
        ]
        pending = mcp(http, "introspect", {"server": "notes", "tool": "thread_replies"})
        assert pending["isError"] is True
        assert "connection_pending" in json.dumps(pending)
        assert stage.fake.requests_to("/v1/messages") == []
        assert stage.tools.calls == []

        approved = http.post(f"{ORG}/connections/notes/approve", headers=ADMIN)
        assert approved.status_code == 200, approved.text
        assert approved.json()["status"] == "active"

        stage.fake.script(
            MESSAGES,
            tool_use(("notes__thread_replies", {"channel": "C1", "ts": "1.0"}), ("notes__whoami", {})),
            Scripted(body=anthropic_text("Two replies came in.")),
        )
        done = run(http, "ask")
        assert done.status_code == 200, done.text
        assert done.json()["output"] == "Two replies came in."
        assert sorted(name for name, _ in stage.tools.calls) == ["thread_replies", "whoami"]
        assert {seen.get("authorization") for seen in stage.tools.received} == {HEADER["Authorization"]}
        history = http.get(f"{BASE}/runs/{done.json()['run_id']}/history", headers=WRITER)
        assert [
            e["data"]["server"] for e in history.json()["events"] if e["type"] == "tool_call_started"
        ] == [
            "notes",
            "notes",
        ]

        searched = http.get(f"{BASE}/tool-servers/search", headers=WRITER).json()["servers"]
        assert "whoami" in [tool["tool"] for tool in searched[0]["tools"]]
        executed = http.post(
            f"{BASE}/tool-servers/notes/tools/whoami/execute", json={"arguments": {}}, headers=WRITER
        )
        assert executed.status_code == 200, executed.text
        assert "[secret]" in executed.text
        by_agent = mcp(http, "execute", {"server": "notes", "tool": "whoami", "arguments": {}})
        assert by_agent.get("isError") is not True, by_agent
        assert "[secret]" in json.dumps(by_agent)
        assert "notes" in json.dumps(mcp(http, "search", {}))
        dry = http.post(
            f"{BASE}/tool-servers/notes/tools/thread_replies/dry-run",
            json={"arguments": {"channel": "C1", "ts": "1"}},
            headers=WRITER,
        )
        assert dry.json()["would_call"] is True
        events = http.get(f"{BASE}/events", params={"limit": "100"}, headers=WRITER).json()["events"]
        for event in events:
            http.get(f"{BASE}/events/{event['id']}", headers=WRITER)
        http.get(f"{ORG}/connections", headers=WRITER)
        http.get(f"{ORG}/connections/notes", headers=WRITER)
    assert stage.fake.sent_anywhere(CREDENTIAL) == []  # nor what the model was sent

    stage.fake.reset()
    stage.tools.reset()
    stage.tools.require_headers(HEADER)
    with stage.serving(NO_LONGER) as http:  # the operator's rule changed
        not_offered(run(http, "ask"), "connection_not_allowed")
        not_offered(
            http.post(
                f"{BASE}/tool-servers/notes/tools/whoami/execute", json={"arguments": {}}, headers=WRITER
            ),
            "connection_not_allowed",
        )
        assert http.get(f"{ORG}/connections/notes", headers=WRITER).json()["status"] == "not_allowed"

    with stage.serving(ALLOWING, key_file=stage.tmp / "other-keys" / "secret.key") as http:
        not_offered(run(http, "ask"), "connection_broken")

    assert stage.fake.requests_to("/v1/messages") == []
    assert stage.tools.calls == []
    # The header value is in no response, no line of the server's log, and no file of its data folder.
    assert stage.bodies
    assert not [body for body in stage.bodies if CREDENTIAL in body]
    assert CREDENTIAL not in (stage.tmp / "serve.log").read_text(encoding="utf-8")
    kept = [
        path for path in stage.data.rglob("*") if path.is_file() and CREDENTIAL.encode() in path.read_bytes()
    ]
    assert kept == []
    assert list(stage.data.rglob("notes.secret"))  # the credential is kept there, encrypted
    assert stage.key_file.exists() and not stage.key_file.is_relative_to(stage.data)
