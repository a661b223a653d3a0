"""Functions that ask a system (interaction-format.md, "Asking a system", "How a run ends"), end to end:
a real ``parley serve`` running them against a real MCP server on 127.0.0.1."""

from __future__ import annotations

import uuid

import httpx
import pytest
from tool_serving import CREDENTIAL, Served

pytestmark = pytest.mark.http

READ_REPLIES = """---
description: Reads a thread's replies
call:
  server: chat
  tool: thread_replies
  with: { channel: '{{ input.channel }}', ts: '{{ input.ts }}', limit: '{{ input.limit }}' }
  read: /messages
input:
  schema:
    type: object
    required: [channel, ts, limit]
    properties:
      channel: { type: string }
      ts: { type: string }
      limit: { type: integer }
output:
  schema: { type: array }
---
"""
WRITE_FAILS = """---
call: { server: chat, tool: write_fails, with: { reason: '{{ input.reason }}' } }
output: { schema: { type: object } }
---
"""
OTHER_ORG = """---
call: { server: globex-chat, tool: post_message, with: { channel: C1, text: hi } }
output: { schema: { type: object } }
---
"""
SLOW = """---
call: { server: chat, tool: slow, with: { seconds: '{{ input.seconds }}' } }
output: { schema: { type: string } }
---
"""
REPEAT = """---
call: { server: chat, tool: repeat, with: { text: x, times: '{{ input.times }}' } }
output: { schema: { type: string } }
---
"""


def save(http: httpx.Client, name: str, source: str) -> None:
    created = http.post("/definitions/interaction", json={"name": name, "source": source})
    assert created.status_code in (201, 409), created.text


def run(http: httpx.Client, name: str, input_value: object, run_id: str | None = None) -> httpx.Response:
    body: dict[str, object] = {"input": input_value}
    if run_id is not None:
        body["run_id"] = run_id
    return http.post(f"/definitions/interaction/{name}/run", json=body)


def test_a_call_returns_the_part_read_and_records_the_call(served: Served, http: httpx.Client) -> None:
    save(http, "read-replies", READ_REPLIES)
    posted = http.post(
        "/tool-servers/chat/tools/post_message/execute", json={"arguments": {"channel": "C9", "text": "Hi"}}
    ).json()["answer"]
    run_id = str(uuid.uuid4())

    reply = run(http, "read-replies", {"channel": "C9", "ts": posted["ts"], "limit": 5}, run_id)

    assert reply.status_code == 200, reply.text
    done = reply.json()
    assert done["status"] == "succeeded" and isinstance(done["output"], list)
    history = http.get(f"/runs/{run_id}/history").json()["events"]
    assert [e["type"] for e in history] == ["tool_call_started", "tool_call_answered", "run_succeeded"]
    assert history[0]["data"]["arguments"]["limit"] == 5  # '{{ input.limit }}' sends the number itself
    assert history[0]["data"]["arguments_size"] > 0
    # the same run id: the recorded output, without calling again
    calls = len(served.tools.calls)
    again = run(http, "read-replies", {"channel": "C9", "ts": posted["ts"], "limit": 5}, run_id)
    assert (again.status_code, again.json()["output"]) == (200, done["output"])
    assert len(served.tools.calls) == calls
    assert CREDENTIAL not in reply.text + again.text + str(history)


def test_a_writing_tool_that_fails_is_effect_unknown_and_never_runs_again(http: httpx.Client) -> None:
    save(http, "write-fails", WRITE_FAILS)
    run_id = str(uuid.uuid4())

    failed = run(http, "write-fails", {"reason": "disk full"}, run_id)

    assert failed.status_code == 409, failed.text
    problem = failed.json()
    assert (problem["kind"], problem["because"]) == ("effect_unknown", "tool_error")
    assert problem["type"] == "https://on.auto/problems/effect_unknown"
    assert http.get(f"/runs/{run_id}").json()["rejection"]["reason"] == "conflict"
    retried = run(http, "write-fails", {"reason": "disk full"}, run_id)
    assert (retried.status_code, retried.json()["kind"]) == (409, "tools_called")
    recorded = http.get(f"/runs/{run_id}").json()
    assert recorded["status"] == "rejected" and recorded["rejection"]["kind"] == "effect_unknown"


def test_a_server_that_serves_another_org_is_not_offered_and_nothing_is_sent(
    served: Served, http: httpx.Client
) -> None:
    save(http, "other-org", OTHER_ORG)
    before = len(served.tools.calls)

    refused = run(http, "other-org", {})

    assert refused.status_code == 503, refused.text
    assert (refused.json()["kind"], refused.json()["because"]) == (
        "tool_not_offered",
        "tool_server_not_configured",
    )
    assert "search" in refused.json()["detail"]
    assert len(served.tools.calls) == before


def test_a_tool_that_does_not_respond_within_30_seconds_is_tools_unfinished(
    served: Served, http: httpx.Client
) -> None:
    """The real bound of parley serve (interaction-format.md, "Bounds": 30 seconds to respond)."""
    save(http, "slow-tool", SLOW)
    run_id = str(uuid.uuid4())

    reply = run(http, "slow-tool", {"seconds": 90}, run_id)
    # Given up at the bound while the tool still slept, not after its answer (no upper bound on a clock).
    assert [name for name, _ in served.tools.calls if name == "slow"] == ["slow"]
    assert served.tools.finished == []

    assert reply.status_code == 503, reply.text
    problem = reply.json()
    assert (problem["reason"], problem["kind"], problem["because"]) == (
        "tools_unfinished",
        "tools_unfinished",
        "server_failed",
    )
    history = http.get(f"/runs/{run_id}/history").json()["events"]
    assert [e["type"] for e in history] == ["tool_call_started", "tool_call_failed", "run_rejected"]
    assert history[1]["data"]["because"] == "timed_out"
    assert history[1]["data"]["duration_ms"] >= 30_000  # the bound was waited out


def test_an_output_of_nearly_1_mib_is_kept_and_shown_whole(http: httpx.Client) -> None:
    save(http, "repeat-tool", REPEAT)
    run_id = str(uuid.uuid4())

    reply = run(http, "repeat-tool", {"times": 900_000}, run_id)

    assert reply.status_code == 200, reply.text[:500]
    assert reply.json()["output"] == "x" * 900_000
    assert http.get(f"/runs/{run_id}").json()["output"] == "x" * 900_000
    listed = http.get("/runs", params={"name": "repeat-tool"}).json()["runs"][0]
    assert listed["output"] == {"size": 900_002}
