"""The tool-server routes end to end: a real ``parley serve`` calling a real MCP server over HTTP on
127.0.0.1 (http-api.md, "Tool servers", "Operator configuration"). The bounds and every failure are
tested in ``tests/unit/tools``; here: what a client sees, the events, and the secret header, which the
MCP server receives and which appears in no response, event or log line of the server."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tool_serving import CREDENTIAL, Served

pytestmark = pytest.mark.http


def test_search_introspect_execute_and_the_history(served: Served, http: httpx.Client) -> None:
    found = http.get("/tool-servers/search")
    assert found.status_code == 200, found.text
    servers = {entry["server"]: entry for entry in found.json()["servers"]}
    assert list(servers) == ["chat", "gone"]
    assert {tool["tool"] for tool in servers["chat"]["tools"]} == {
        "post_message", "thread_replies", "whoami", "write_fails", "read_fails", "slow", "repeat",
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
