"""The tool-server routes end to end: a real ``parley serve`` calling a real MCP server over HTTP on
127.0.0.1 (http-api.md, "Tool servers", "Operator configuration"). The bounds and every failure are
tested in ``tests/unit/tools``; here: what a client sees, the events, and the secret header, which the
MCP server receives and which appears in no response, event or log line of the server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_servers import LocalToolServer, free_port, running_tool_server, unreachable_url

pytestmark = pytest.mark.http

CREDENTIAL = "sk-http-2b7c9e11f4"
WRITER = {"Authorization": "Bearer dev-token", "Content-Type": "application/json"}
BASE = "/v1/orgs/acme/playbooks/campaigns"


@dataclass
class Served:
    url: str
    log: Path
    tools: LocalToolServer


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-tools")
    with running_tool_server() as tools:
        config = tmp / "operator.yaml"
        config.write_text(
            f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: {tools.url}
    orgs: [acme]
    playbooks: [campaigns]
    allowed: [post_message, thread_replies, whoami, write_fails]
    headers: {{ Authorization: "Bearer {CREDENTIAL}" }}
  - name: globex-chat
    url: {tools.url}
    orgs: [globex]
  - name: gone
    url: {unreachable_url()}
    orgs: [acme]
""",
            encoding="utf-8",
        )
        log = tmp / "serve.log"
        port = free_port()
        command = [sys.executable, "-m", "parley.cli", "serve", "--clock", "manual", "--port", str(port),
                   "--config", str(config)]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        with log.open("wb") as sink:
            process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}"
        started = time.monotonic()
        while True:
            if process.poll() is not None:
                raise AssertionError(f"parley serve exited with {process.returncode}:\n{log.read_text()}")
            try:
                httpx.get(url + "/_local/clock", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() - started > 20:
                    process.kill()
                    raise AssertionError(f"parley serve did not answer:\n{log.read_text()}") from None
                time.sleep(0.05)
        try:
            yield Served(url, log, tools)
        finally:
            process.terminate()
            assert process.wait(timeout=15) == 0, log.read_text()


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    served.tools.reset()
    with httpx.Client(base_url=served.url + BASE, headers=WRITER, timeout=60) as client:
        yield client


def test_search_introspect_execute_and_the_history(served: Served, http: httpx.Client) -> None:
    found = http.get("/tool-servers/search")
    assert found.status_code == 200, found.text
    servers = {entry["server"]: entry for entry in found.json()["servers"]}
    assert list(servers) == ["chat", "gone"]
    assert {tool["tool"] for tool in servers["chat"]["tools"]} == {
        "post_message", "thread_replies", "whoami", "write_fails",
    }  # fmt: skip
    assert servers["gone"]["because"] == "unreachable"

    schema = http.get("/tool-servers/chat/tools/thread_replies")
    assert schema.status_code == 200, schema.text
    assert schema.json()["read_only"] is True

    checked = http.post(
        "/tool-servers/chat/tools/post_message/dry-run", json={"arguments": {"channel": "C1"}}
    )
    assert checked.status_code == 200 and checked.json()["would_call"] is False
    assert served.tools.calls == []

    posted = http.post(
        "/tool-servers/chat/tools/post_message/execute", json={"arguments": {"channel": "C1", "text": "Hi"}}
    )
    assert posted.status_code == 200, posted.text
    assert posted.json()["outcome"] == "answered"
    assert posted.json()["answer"]["channel"] == "C1"
    assert served.tools.calls == [("post_message", {"channel": "C1", "text": "Hi", "thread_ts": None})]

    history = http.get("/events", params={"order": "asc"}).json()["events"]
    assert [event["type"] for event in history] == ["tool_call_started", "tool_call_answered"]
    assert history[0]["data"]["arguments"] == {"channel": "C1", "text": "Hi"}


def test_failures_are_problems(http: httpx.Client) -> None:
    hidden = http.post("/tool-servers/globex-chat/tools/post_message/execute", json={"arguments": {}})
    assert hidden.status_code == 404
    assert hidden.headers["content-type"] == "application/problem+json"
    assert (hidden.json()["kind"], hidden.json()["because"]) == (
        "tool_not_offered",
        "tool_server_not_configured",
    )

    refused = http.post("/tool-servers/chat/tools/plain_text/execute", json={"arguments": {"words": "x"}})
    assert (refused.status_code, refused.json()["because"]) == (404, "tool_not_allowed")

    gone = http.post("/tool-servers/gone/tools/x/execute", json={"arguments": {}})
    assert gone.status_code == 503
    assert (gone.json()["kind"], gone.json()["because"]) == ("tool_server_failed", "unreachable")

    failed = http.post("/tool-servers/chat/tools/write_fails/execute", json={"arguments": {"reason": "no"}})
    assert failed.status_code == 200
    assert (failed.json()["outcome"], failed.json()["is_error"]) == ("tool_error", True)


def test_the_secret_header_reaches_the_server_and_nothing_else(served: Served, http: httpx.Client) -> None:
    bodies: list[Any] = [
        http.get("/tool-servers/search").text,
        http.post("/tool-servers/chat/tools/whoami/execute", json={"arguments": {}}).text,
        http.post(
            "/tool-servers/chat/tools/post_message/execute",
            json={"arguments": {"channel": "C1", "text": f"key {CREDENTIAL}"}},
        ).text,
    ]
    served.tools.answer_status("thread_replies", 500)
    bodies.append(
        http.post(
            "/tool-servers/chat/tools/thread_replies/execute",
            json={"arguments": {"channel": "C1", "ts": "1"}},
        ).text
    )
    assert {headers.get("authorization") for headers in served.tools.received} == {f"Bearer {CREDENTIAL}"}
    events = http.get("/events", params={"limit": "100"}).json()["events"]
    whole = [http.get(f"/events/{event['id']}").text for event in events]
    assert events
    everything = "\n".join([*bodies, *whole, str(events), served.log.read_text(errors="replace")])
    assert CREDENTIAL not in everything
    assert "[secret]" in everything
