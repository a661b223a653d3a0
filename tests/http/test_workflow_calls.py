"""The rows of the error table a workflow's call raises when the called run asks a system
(workflow-format.md, "Calling a function", "Errors, retries and timeouts"), end to end: a real ``parley
serve`` and a real MCP server on 127.0.0.1 (``tool_serving``). A retry on status 503 takes
``tools_unfinished`` (only read-only tools were called) and runs the call again under a new run id;
``effect_unknown`` (409) is not taken by it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tool_serving import Served

pytestmark = pytest.mark.http

READ_FAILS = """---
call: { server: chat, tool: read_fails, with: { reason: '{{ input.reason }}' } }
output: { schema: { type: string } }
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
#: Calls a function; a 503 is retried once, then anything is caught and shown.
RETRIED = """\
document: {{ dsl: '1.0.3', namespace: t, name: retried, version: '1.0.0' }}
do:
  - guarded:
      try:
        - ask:
            call: run_definition
            with: {{ type: interaction, name: {name}, input: {{ reason: disk full }} }}
      catch:
        errors: {{ with: {{ status: 503 }} }}
        retry: {{ delay: {{ seconds: 0 }}, limit: {{ attempt: {{ count: 1 }} }} }}
        as: caught
        do:
          - show: {{ set: '${{ $caught }}' }}
"""


def save(http: httpx.Client, definition_type: str, name: str, source: str) -> None:
    created = http.post(f"/definitions/{definition_type}", json={"name": name, "source": source})
    assert created.status_code in (201, 409), created.text


def runs_of(http: httpx.Client, name: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = http.get("/runs", params={"name": name, "limit": "100"}).json()["runs"]
    return runs


def test_tools_unfinished_is_taken_by_a_retry_on_503_and_called_again(
    served: Served, http: httpx.Client
) -> None:
    save(http, "interaction", "wf-read-fails", READ_FAILS)
    save(http, "workflow", "retry-read", RETRIED.format(name="wf-read-fails"))
    before = len(served.tools.calls)

    reply = http.post("/definitions/workflow/retry-read/run", json={"input": {}})

    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "succeeded"
    caught = reply.json()["output"]
    assert (caught["type"], caught["status"], caught["kind"]) == (
        "https://on.auto/problems/tools_unfinished",
        503,
        "tools_unfinished",
    )
    assert caught["instance"] == "/do/0/guarded/try/0/ask" and "wf-read-fails" in caught["title"]
    called = runs_of(http, "wf-read-fails")
    assert len(called) == 2  # the first attempt, and the retry's under a new run id
    assert len(served.tools.calls) - before == 2
    history = http.get(f"/runs/{reply.json()['run_id']}/history").json()["events"]
    retried = [event["data"] for event in history if event["type"] == "task_retried"]
    assert retried == [{"task": "/do/0/guarded", "name": "guarded", "attempt": 1, "delay": 0}]
    calls = [event["data"]["run_id"] for event in history if event["type"] == "call_started"]
    assert sorted(calls) == sorted(run["run_id"] for run in called)
    completed = [event["data"] for event in history if event["type"] == "task_completed"]
    assert completed and all(isinstance(data.get("size"), int) for data in completed), history


def test_effect_unknown_is_not_taken_by_a_retry_on_503(served: Served, http: httpx.Client) -> None:
    save(http, "interaction", "wf-write-fails", WRITE_FAILS)
    save(http, "workflow", "retry-write", RETRIED.format(name="wf-write-fails"))

    reply = http.post("/definitions/workflow/retry-write/run", json={"input": {}})

    # effect_unknown (409) is not a 503: the catch does not take it, and nothing calls the tool again.
    assert reply.status_code == 409, reply.text
    problem = reply.json()
    assert (problem["reason"], problem["kind"]) == ("effect_unknown", "effect_unknown")
    assert "(at /do/0/guarded/try/0/ask)" in problem["detail"]
    assert len(runs_of(http, "wf-write-fails")) == 1


def test_a_tool_not_offered_raises_communication_503(http: httpx.Client) -> None:
    save(http, "interaction", "wf-other-org", OTHER_ORG)
    save(http, "workflow", "retry-other", RETRIED.format(name="wf-other-org"))

    reply = http.post("/definitions/workflow/retry-other/run", json={"input": {}})

    assert reply.status_code == 200, reply.text
    caught = reply.json()["output"]
    assert (caught["type"], caught["status"], caught["kind"], caught["because"]) == (
        "https://open-workflow-specification.org/spec/1.0.0/errors/communication",
        503,
        "tool_not_offered",
        "tool_server_not_configured",
    )
    assert len(runs_of(http, "wf-other-org")) == 2


def test_a_retired_function_raises_runtime_409(http: httpx.Client) -> None:
    save(http, "interaction", "wf-retired", READ_FAILS)
    assert http.post("/definitions/interaction/wf-retired/retire").status_code == 200
    catch_all = RETRIED.format(name="wf-retired").replace("errors: { with: { status: 503 } }\n        ", "")
    save(http, "workflow", "call-retired", catch_all)

    reply = http.post("/definitions/workflow/call-retired/run", json={"input": {}})

    assert reply.status_code == 200, reply.text
    output = reply.json()["output"]
    assert (output["type"], output["status"]) == (
        "https://open-workflow-specification.org/spec/1.0.0/errors/runtime",
        409,
    )
