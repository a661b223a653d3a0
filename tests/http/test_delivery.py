"""Requests sent through a tool, end to end (interaction-format.md, "Sending through a tool", "Attempts",
"The run's history", "How a run ends"; http-api.md, "Runs", "Local server"): a real ``parley serve --clock
manual`` delivering through a real MCP server on 127.0.0.1 that fails on command (``tests/tool_serving.py``).

Whether attempt 1 runs before the run's request is answered or at the next advance, each test moves the
clock by 0 first, and reads the schedule relative to the request's own ``requested_at``.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

import httpx
import pytest
from tool_serving import CREDENTIAL, WRITER, Served

pytestmark = pytest.mark.http

QUESTION = """---
to: '{{ input.channel }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with: { channel: '{{ to }}', text: '{{ message }}' }
  sent: { conversation: /channel, id: /ts }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
Approve {{ input.draft }}?
"""
NOTIFICATION = """---
to: '{{ input.channel }}'
expires: P2D
deliver: { server: chat, tool: post_message, with: { channel: '{{ to }}', text: '{{ message }}' } }
---
Sent: {{ input.draft }}
"""
FAILING = """---
to: '{{ input.channel }}'
expires: P2D
deliver: { server: chat, tool: write_fails, with: { reason: '{{ input.reason }}' } }
---
Hi
"""
FAILING_QUESTION = """---
to: '{{ input.channel }}'
expires: P2D
deliver: { server: chat, tool: write_fails, with: { reason: '{{ input.reason }}' } }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Ok?
"""
LARGE = """---
to: '{{ input.channel }}'
expires: P2D
deliver: { server: chat, tool: post_message, with: { channel: '{{ to }}', text: '{{ input.big }}' } }
---
Hi
"""
FUNCTIONS = {
    "deliver-question": QUESTION,
    "deliver-notification": NOTIFICATION,
    "deliver-failing": FAILING,
    "deliver-failing-question": FAILING_QUESTION,
    "deliver-large": LARGE,
}


@pytest.fixture
def client(served: Served, http: httpx.Client) -> httpx.Client:
    for name, source in FUNCTIONS.items():
        created = http.post("/definitions/interaction", json={"name": name, "source": source})
        assert created.status_code in (201, 409), created.text
    return http


def run(http: httpx.Client, name: str, input_value: Any, run_id: str) -> httpx.Response:
    return http.post(f"/definitions/interaction/{name}/run", json={"input": input_value, "run_id": run_id})


def advance(served: Served, seconds: float) -> None:
    moved = httpx.post(
        served.url + "/_local/clock/advance", json={"seconds": seconds}, headers=WRITER, timeout=120
    )
    assert moved.status_code == 200, moved.text


def listed(http: httpx.Client, run_id: str) -> dict[str, Any] | None:
    found = [i for i in http.get("/interactions", params={"limit": 100}).json()["interactions"]]
    mine = [i for i in found if i["run_id"] == run_id]
    return mine[0] if mine else None


def standing(http: httpx.Client, run_id: str) -> tuple[str, int] | None:
    found = listed(http, run_id)
    return None if found is None else (found["standing"], found["attempts"])


def history(http: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    reply = http.get(f"/runs/{run_id}/history", params={"limit": 100})
    assert reply.status_code == 200, reply.text
    events: list[dict[str, Any]] = reply.json()["events"]
    return events


def offsets(http: httpx.Client, run_id: str, event_type: str) -> list[float]:
    """Seconds after the request was asked at which each event of the type happened."""
    events = history(http, run_id)
    asked = _time(events[0]["at"])
    return [(_time(e["at"]) - asked).total_seconds() for e in events if e["type"] == event_type]


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_question_is_delivered_and_its_answer_ends_it(served: Served, client: httpx.Client) -> None:
    run_id = str(uuid.uuid4())
    started = run(client, "deliver-question", {"channel": "C-http-1", "draft": "the brief"}, run_id)
    assert started.status_code == 200, started.text
    assert started.json()["status"] == "started"
    assert standing(client, run_id) in (("to_deliver", 0), ("delivered", 1))

    advance(served, 0)

    shown = listed(client, run_id)
    assert shown is not None
    assert (shown["standing"], shown["attempts"]) == ("delivered", 1)
    assert shown["delivery"] == {"server": "chat", "tool": "post_message"}
    assert shown["takes_answer"] is True and shown["answer_schema"]["required"] == ["verdict"]
    posted = [arguments for tool, arguments in served.tools.calls if tool == "post_message"]
    assert posted == [{"channel": "C-http-1", "text": "Approve the brief?\n", "thread_ts": None}]
    events = history(client, run_id)
    assert [e["type"] for e in events] == ["interaction_requested", "delivery_started", "delivery_succeeded"]
    assert events[0]["data"]["delivery"] == {"server": "chat", "tool": "post_message"}
    assert events[1]["data"]["arguments"] == {"channel": "C-http-1", "text": "Approve the brief?\n"}
    assert events[2]["data"]["sent"]["conversation"] == "C-http-1"

    answered = client.post(f"/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
    assert answered.status_code == 200, answered.text
    advance(served, 0)
    done = client.get(f"/runs/{run_id}").json()
    assert (done["status"], done["output"]) == ("succeeded", {"verdict": "approve"})
    assert listed(client, run_id) is None


def test_a_notification_succeeds_once_delivered(served: Served, client: httpx.Client) -> None:
    run_id = str(uuid.uuid4())
    assert (
        run(client, "deliver-notification", {"channel": "C-http-2", "draft": "d"}, run_id).status_code == 200
    )
    advance(served, 0)
    done = client.get(f"/runs/{run_id}").json()
    assert (done["status"], done["output"]) == ("succeeded", {})
    assert [e["type"] for e in history(client, run_id)][-1] == "run_succeeded"


def test_the_schedule_to_the_second_and_a_notification_ends_undelivered(
    served: Served, client: httpx.Client
) -> None:
    run_id = str(uuid.uuid4())
    body = {"channel": "C-http-3", "reason": "disk full"}
    assert run(client, "deliver-failing", body, run_id).status_code == 200
    advance(served, 0)
    assert standing(client, run_id) == ("retrying", 1)

    for wait, attempts in [(59, 1), (1, 2), (119, 2), (1, 3), (239, 3), (1, 4), (479, 4)]:
        advance(served, wait)
        assert standing(client, run_id) == ("retrying", attempts)
    advance(served, 1)

    assert offsets(client, run_id, "delivery_started") == [0, 60, 180, 420, 900]
    failed = [e["data"] for e in history(client, run_id) if e["type"] == "delivery_failed"]
    assert [f["because"] for f in failed] == ["tool_error"] * 5
    done = client.get(f"/runs/{run_id}").json()
    assert done["status"] == "rejected"
    assert (done["rejection"]["reason"], done["rejection"]["kind"]) == ("unanswered", "undelivered")
    assert listed(client, run_id) is None
    again = run(client, "deliver-failing", body, run_id)
    assert again.status_code == 410, again.text
    advance(served, 3600)
    assert len([c for c in served.tools.calls if c[0] == "write_fails"]) == 5


def test_a_success_on_the_third_attempt(served: Served, client: httpx.Client) -> None:
    run_id = str(uuid.uuid4())
    served.tools.fail_next("post_message", 2)
    assert run(client, "deliver-question", {"channel": "C-http-4", "draft": "x"}, run_id).status_code == 200
    advance(served, 0)
    assert standing(client, run_id) == ("retrying", 1)
    advance(served, 60)
    assert standing(client, run_id) == ("retrying", 2)
    advance(served, 120)
    assert standing(client, run_id) == ("delivered", 3)
    assert offsets(client, run_id, "delivery_started") == [0, 60, 180]

    answered = client.post(f"/runs/{run_id}/answer", json={"answer": {"verdict": "revise"}})
    assert answered.status_code == 200, answered.text
    advance(served, 0)
    assert client.get(f"/runs/{run_id}").json()["output"] == {"verdict": "revise"}


def test_a_retry_after_is_waited_for(served: Served, client: httpx.Client) -> None:
    run_id = str(uuid.uuid4())
    served.tools.answer_status("post_message", 429, {"Retry-After": "300"}, times=1)
    assert run(client, "deliver-question", {"channel": "C-http-5", "draft": "x"}, run_id).status_code == 200
    advance(served, 0)
    advance(served, 299)
    assert standing(client, run_id) == ("retrying", 1)
    advance(served, 1)
    assert standing(client, run_id) == ("delivered", 2)
    failed = [e["data"] for e in history(client, run_id) if e["type"] == "delivery_failed"]
    assert failed[0]["retry_after_ms"] == 300_000
    assert client.post(f"/runs/{run_id}/cancel", json={}).status_code == 200


def test_a_cancel_during_the_retries_stops_them(served: Served, client: httpx.Client) -> None:
    run_id = str(uuid.uuid4())
    body = {"channel": "C-http-6", "reason": f"key {CREDENTIAL}"}
    assert run(client, "deliver-failing-question", body, run_id).status_code == 200
    advance(served, 60)
    assert standing(client, run_id) == ("retrying", 2)

    cancelled = client.post(f"/runs/{run_id}/cancel", json={"reason": "not needed"})

    assert cancelled.status_code == 200, cancelled.text
    advance(served, 3600)
    assert len([c for c in served.tools.calls if c[0] == "write_fails"]) == 2
    events = history(client, run_id)
    assert [e["type"] for e in events].count("delivery_started") == 2
    assert events[-1]["type"] == "run_rejected"
    assert client.get(f"/runs/{run_id}").json()["rejection"]["reason"] == "cancelled"
    # The tool's error echoed the server's secret header value: no event shows it.
    assert CREDENTIAL not in json.dumps(events)
    assert all(CREDENTIAL not in client.get(f"/events/{e['id']}").text for e in events)


def test_arguments_past_16_kib_are_refused(served: Served, client: httpx.Client) -> None:
    run_id = str(uuid.uuid4())
    refused = run(client, "deliver-large", {"channel": "C-http-7", "big": "x" * (16 * 1024)}, run_id)
    assert refused.status_code == 409, refused.text
    assert refused.json()["kind"] == "unworkable"
    advance(served, 0)
    assert [e["type"] for e in history(client, run_id)] == [
        "interaction_requested",
        "delivery_refused",
        "run_rejected",
    ]
    assert served.tools.calls == []
