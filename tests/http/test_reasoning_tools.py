"""Reasoning runs that call tools, through ``parley serve --clock manual`` as a user runs them: a real
MCP tool server on 127.0.0.1 with a secret header, a fake provider scripting the model's steps, the
run's history and record read over HTTP, and the secret in no response and no log."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_providers import MESSAGES, FakeProviders, Scripted, anthropic_text
from mcp_servers import running_tool_server
from tool_serving import serving_with

pytestmark = pytest.mark.http

BASE = "/v1/orgs/acme/playbooks/campaigns"
ANTHROPIC_KEY = "sk-ant-serve-tools-7f3a"
TOOL_SECRET = "tool-header-secret-19b2"

FUNCTION = """---
model: anthropic/claude-sonnet-4-5
tools: [chat/thread_replies, chat/post_message]
ask: { to: '{{ input.owner }}', expires: P1D, progress: true }
---
{% system %}Read the thread, then answer.{% endsystem %}
Thread {{ input.ts }} of {{ input.channel }}
"""
INPUT = {"owner": "maria", "channel": "C1", "ts": "1.0"}


def tool_use(name: str, arguments: dict[str, Any]) -> Scripted:
    body = anthropic_text("", stop_reason="tool_use")
    body["content"] = [
        {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:8]}", "name": name, "input": arguments}
    ]
    return Scripted(body=body)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeProviders, Any, Path]]:
    tmp = tmp_path_factory.mktemp("serve-reasoning-tools")
    log = tmp / "serve.log"
    with ExitStack() as stack:
        fake = stack.enter_context(FakeProviders())
        tools = stack.enter_context(running_tool_server())
        tools.require_headers({"Authorization": f"Bearer {TOOL_SECRET}"})
        operator = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: "{tools.url}"
    orgs: [acme]
    headers: {{ Authorization: "Bearer {TOOL_SECRET}" }}
models:
  allowed: [anthropic/*]
"""
        with pytest.MonkeyPatch.context() as env:
            env.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            env.setenv("ANTHROPIC_BASE_URL", fake.url)
            url = stack.enter_context(serving_with(tmp, operator))
        yield url, fake, tools, log


def test_a_run_calls_its_tools_reports_progress_and_records_every_call(
    setup: tuple[str, FakeProviders, Any, Path],
) -> None:
    url, fake, tools, log = setup
    fake.script(
        MESSAGES,
        tool_use("chat__thread_replies", {"channel": "C1", "ts": "1.0"}),
        tool_use("report_progress", {"message": "Read the thread."}),
        Scripted(body=anthropic_text("Two replies; nothing to post.")),
    )
    with httpx.Client(base_url=url + BASE, headers={"Authorization": "Bearer dev-token"}, timeout=60) as http:
        saved = http.post("/definitions/reasoning", json={"name": "thread-reader", "source": FUNCTION})
        assert saved.status_code == 201, saved.text
        assert "Whom it may ask" in saved.json()["overview"]

        reply = http.post("/definitions/reasoning/thread-reader/run", json={"input": INPUT})

        assert reply.status_code == 200, reply.text
        run = reply.json()
        assert (run["status"], run["output"]) == ("succeeded", "Two replies; nothing to post.")
        events = http.get(f"/runs/{run['run_id']}/history").json()["events"]
        assert [event["type"] for event in events] == [
            "tool_call_started",
            "tool_call_answered",
            "activity_updated",
            "run_succeeded",
        ]
        assert events[0]["data"]["server"] == "chat" and events[0]["data"]["read_only"] is True
        record = http.get(f"/runs/{run['run_id']}").json()["record"]
        shown = json.dumps([run, events, record, saved.json()])
    assert [name for name, _ in tools.calls] == ["thread_replies"]
    offered = [tool["name"] for tool in fake.requests_to("/v1/messages")[0].body["tools"]]
    assert offered == ["chat__post_message", "chat__thread_replies", "request_input", "report_progress"]
    for secret in (ANTHROPIC_KEY, TOOL_SECRET):
        assert secret not in shown
        assert secret not in log.read_text()
