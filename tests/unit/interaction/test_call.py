"""Runs of functions with ``call`` against a real MCP server on 127.0.0.1 (interaction-format.md, "Asking a
system", "How a run ends", "The run's history", "Bounds"; reasoning-format.md, "When a tool-calling run
cannot finish")."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from mcp_servers import LocalToolServer, unreachable_url

from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.documents.json_schema import canonical_json
from parley.errors import Problem
from parley.ports.runtime import Runtime
from parley.ports.tools import Bounds
from parley.runs.kinds import check_source
from parley.runs.model import Run
from parley.runs.service import RunService, run_service
from parley.tools.client import McpToolClient

PLAYBOOK = PlaybookRef("acme", "campaigns")
CREDENTIAL = "sk-call-5e0d7a93c1"
QUICK = Bounds(open_seconds=3, list_seconds=3, respond_seconds=1.0)


def operator_yaml(url: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: {url}
    orgs: [acme]
    playbooks: [campaigns]
    allowed:
      [post_message, thread_replies, json_text, plain_text, repeat, read_fails, write_fails, slow, whoami]
    headers: {{ Authorization: "Bearer {CREDENTIAL}" }}
  - name: other-org
    url: {url}
    orgs: [globex]
  - name: gone
    url: {unreachable_url()}
    orgs: [acme]
  - name: quiet
    url: {url}
    orgs: [acme]
    record_content: false
"""


def source(tool: str, with_: str, read: str | None, schema: str, server: str = "chat") -> str:
    read_line = f"\n  read: {read}" if read is not None else ""
    return f"""---
call:
  server: {server}
  tool: {tool}
  with: {with_}{read_line}
output:
  schema: {schema}
---
"""


FUNCTIONS = {
    "replies": source(
        "thread_replies",
        "{ channel: '{{ input.channel }}', ts: '{{ input.ts }}', limit: '{{ input.limit }}' }",
        "/messages",
        "{ type: array }",
    ),
    "post": source("post_message", "{ channel: C1, text: 'Hi {{ input.name }}' }", None, "{ type: object }"),
    "post-quiet": source(
        "post_message", "{ channel: C1, text: 'Hi {{ input.name }}' }", "/ts", "{ type: string }", "quiet"
    ),
    "post-wrong": source("post_message", "{ channel: C1, text: hi }", "/ts", "{ type: integer }"),
    "post-nowhere": source("post_message", "{ channel: C1, text: hi }", "/nowhere", "{}"),
    "json-rows": source("json_text", "{ value: '{{ input.value }}' }", "/rows", "{ type: array }"),
    "plain": source("plain_text", "{ words: '{{ input.words }}' }", None, "{ type: string }"),
    "repeat": source("repeat", "{ text: x, times: '{{ input.times }}' }", None, "{ type: string }"),
    "read-fails": source("read_fails", "{ reason: disk }", None, "{}"),
    "write-fails": source("write_fails", "{ reason: disk }", None, "{}"),
    "slow": source("slow", "{ seconds: 3 }", None, "{}"),
    "whoami": source("whoami", "{}", None, "{ type: object }"),
    "not-listed": source("no_such_tool", "{}", None, "{}", "quiet"),
    "outside-allowed": source("no_such_tool", "{}", None, "{}"),
    "not-allowed": source("post_message", "{ channel: C1, text: hi }", None, "{}", "other-org"),
    "gone": source("post_message", "{ channel: C1, text: hi }", None, "{}", "gone"),
    "among-text": source("plain_text", "{ words: 'Say {{ input.list }}' }", None, "{}"),
    "big": source("plain_text", "{ words: '{{ input.words }}' }", None, "{}"),
    "wrong-args": source("post_message", "{ channel: 5 }", None, "{}"),
}


@pytest.fixture
def service(
    dynamodb: tuple[Any, str], content: Any, manual_clock: ManualClock, tools: LocalToolServer
) -> RunService:
    client, table = dynamodb
    runtime = Runtime(
        content=content,
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(operator_yaml(tools.url), "test", environ={}),
        check_document=check_source,
        tool_client=McpToolClient(QUICK),
    )
    definitions = runtime.definition_service()
    for name, text in FUNCTIONS.items():
        definitions.create_definition(PLAYBOOK, "interaction", name, text)
    return run_service(runtime)


Runner = Callable[..., Run]


@pytest.fixture
def run(service: RunService) -> Runner:
    def running(name: str, input_value: Any = None, run_id: str | None = None) -> Run:
        return service.run_definition(
            PLAYBOOK, "interaction", name, input_value=input_value or {}, run_id=run_id, started_by="dev"
        )

    return running


def refused(run: Runner, *args: Any) -> Problem:
    with pytest.raises(Problem) as caught:
        run(*args)
    return caught.value


def history(service: RunService, run_id: str) -> list[dict[str, Any]]:
    return [service.get_event(PLAYBOOK, e["id"]) for e in service.get_run_history(PLAYBOOK, run_id).items]


def types(service: RunService, run_id: str) -> list[str]:
    return [e["type"] for e in history(service, run_id)]


REPLIES_INPUT = {"channel": "C1", "ts": "1700000000.000001", "limit": 5}


def test_a_structured_answer_read_at_a_pointer_is_the_output(
    run: Runner, service: RunService, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())

    done = run("replies", REPLIES_INPUT, run_id)

    assert done.status == "succeeded"
    assert done.output == [
        {"ts": "1700000001.000100", "user": "U1", "text": "approve", "thread_ts": "1700000000.000001"}
    ]
    assert tools.calls == [("thread_replies", {"channel": "C1", "ts": "1700000000.000001"})]
    assert service.get_run(PLAYBOOK, run_id).output == done.output
    events = history(service, run_id)
    assert [e["type"] for e in events] == ["tool_call_started", "tool_call_answered", "run_succeeded"]
    started = events[0]["data"]
    # one {{ }} sends the value itself: the limit stays a number
    assert started["arguments"] == {"channel": "C1", "ts": "1700000000.000001", "limit": 5}
    assert started["read_only"] is True
    assert started["arguments_size"] == len(canonical_json(started["arguments"]))
    digest = hashlib.sha256(canonical_json(started["arguments"]).encode()).hexdigest()
    assert started["arguments_digest"] == digest
    assert events[1]["data"]["call_id"] == started["call_id"]


def test_a_json_text_answer_and_a_plain_text_answer(run: Runner) -> None:
    assert run("json-rows", {"value": 7}).output == [1, 2, 3]
    assert run("plain", {"words": "hello"}).output == "You said: hello"


def test_a_succeeded_run_returns_its_output_without_calling_again(
    run: Runner, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    first = run("post", {"name": "Lee"}, run_id)

    again = run("post", {"name": "Lee"}, run_id)

    assert again.output == first.output and again.status == "succeeded"
    assert len(tools.calls) == 1


def test_not_offered_and_unreachable_end_unavailable_before_sending_and_run_again(
    run: Runner, service: RunService, tools: LocalToolServer
) -> None:
    for name, kind, because in [
        ("not-listed", "tool_not_offered", "tool_not_listed"),
        ("outside-allowed", "tool_not_offered", "tool_not_allowed"),
        ("not-allowed", "tool_not_offered", "tool_server_not_configured"),
        ("gone", "tool_server_failed", "unreachable"),
    ]:
        run_id = str(uuid.uuid4())
        problem = refused(run, name, {}, run_id)
        assert (problem.status, problem.reason, problem.kind, problem.because) == (
            503,
            "unavailable",
            kind,
            because,
        )
        assert service.get_run(PLAYBOOK, run_id).status == "rejected"
        assert types(service, run_id) == ["run_rejected"]
        assert refused(run, name, {}, run_id).kind == kind  # runs again, not tools_called
    assert "search" in refused(run, "not-listed", {}).detail
    assert tools.calls == []


def test_a_rate_limited_call_is_tool_server_failed_with_retry_after(
    run: Runner, service: RunService, tools: LocalToolServer
) -> None:
    tools.answer_status("post_message", 429, {"Retry-After": "7"})
    run_id = str(uuid.uuid4())

    problem = refused(run, "post", {"name": "Lee"}, run_id)

    assert (problem.kind, problem.because, problem.headers.get("Retry-After")) == (
        "tool_server_failed",
        "rate_limited",
        "7",
    )
    tools.reset()
    assert run("post", {"name": "Lee"}, run_id).status == "succeeded"  # refused: it runs again


def test_a_read_only_tool_error_is_tools_unfinished_and_never_runs_again(
    run: Runner, service: RunService
) -> None:
    run_id = str(uuid.uuid4())

    problem = refused(run, "read-fails", {}, run_id)

    assert (problem.status, problem.reason, problem.kind, problem.because) == (
        503,
        "tools_unfinished",
        "tools_unfinished",
        "tool_error",
    )
    assert service.get_run(PLAYBOOK, run_id).rejection.reason == "unavailable"  # type: ignore[union-attr]
    assert "cannot read: disk" in problem.detail
    assert types(service, run_id) == ["tool_call_started", "tool_call_answered", "run_rejected"]
    assert history(service, run_id)[1]["data"]["is_error"] is True
    again = refused(run, "read-fails", {}, run_id)
    assert (again.status, again.kind, again.because) == (409, "tools_called", "only_read")
    assert "nothing was changed" in again.detail


def test_a_writing_tool_error_is_effect_unknown(run: Runner) -> None:
    run_id = str(uuid.uuid4())

    problem = refused(run, "write-fails", {}, run_id)

    assert (problem.status, problem.reason, problem.kind, problem.because) == (
        409,
        "effect_unknown",  # interaction-format.md, "In a workflow": the problem type effect_unknown
        "effect_unknown",
        "tool_error",
    )
    again = refused(run, "write-fails", {}, run_id)
    assert (again.kind, again.because) == ("tools_called", None)


def test_a_server_failing_on_the_call_is_server_failed(
    run: Runner, service: RunService, tools: LocalToolServer
) -> None:
    tools.answer_status("post_message", 500)
    run_id = str(uuid.uuid4())

    problem = refused(run, "post", {"name": "Lee"}, run_id)

    assert (problem.kind, problem.because) == ("effect_unknown", "server_failed")
    assert types(service, run_id) == ["tool_call_started", "tool_call_failed", "run_rejected"]
    assert history(service, run_id)[1]["data"]["because"] == "server_failure"


def test_a_slow_read_only_tool_times_out_as_tools_unfinished(run: Runner, service: RunService) -> None:
    run_id = str(uuid.uuid4())

    problem = refused(run, "slow", {}, run_id)

    assert (problem.kind, problem.because) == ("tools_unfinished", "server_failed")
    assert history(service, run_id)[1]["data"]["because"] == "timed_out"


def test_unworkable_answers(run: Runner, service: RunService) -> None:
    wrong = refused(run, "post-wrong", {})
    assert (wrong.status, wrong.kind) == (409, "unworkable")
    assert wrong.errors[0].pointer == "/answer/ts"
    assert "calls the tool again" in wrong.detail
    nowhere = refused(run, "post-nowhere", {})
    assert nowhere.kind == "unworkable" and "/nowhere" in nowhere.detail


def test_outputs_up_to_1_mib_are_kept_whole_and_larger_ones_are_unworkable(
    run: Runner, service: RunService
) -> None:
    """Past a table item's size, the output and the tool's result live in the content store: get_run and
    get_event show them whole, lists show their size; past 1 MiB the run ends unworkable."""
    run_id = str(uuid.uuid4())
    done = run("repeat", {"times": 1_000_000}, run_id)
    assert done.output == "x" * 1_000_000
    assert service.get_run(PLAYBOOK, run_id).output == "x" * 1_000_000
    listed = service.list_runs(PLAYBOOK).as_json()["runs"][0]
    assert listed["output"] == {"size": 1_000_002} and listed["omitted"] == ["output"]
    events = list(service.get_run_history(PLAYBOOK, run_id).items)
    assert events[1]["data"]["result"]["size"] > 1_000_000 and events[1]["omitted"] == ["result"]
    assert events[2]["data"]["output"] == {"size": 1_000_002} and events[2]["omitted"] == ["output"]
    whole = service.get_event(PLAYBOOK, events[1]["id"])["data"]["result"]
    assert "x" * 1_000_000 in json.dumps(whole)
    assert service.get_event(PLAYBOOK, events[2]["id"])["data"]["output"] == "x" * 1_000_000

    too_big = str(uuid.uuid4())
    problem = refused(run, "repeat", {"times": 1024 * 1024}, too_big)
    assert (problem.status, problem.kind) == (409, "unworkable")
    assert "1 MiB" in problem.detail
    assert service.get_run(PLAYBOOK, too_big).status == "rejected"
    assert history(service, too_big)[1]["data"]["result_kept"] is False


def test_arguments_unworkable_before_sending(run: Runner, tools: LocalToolServer) -> None:
    among = refused(run, "among-text", {"list": [1, 2]})
    assert (among.status, among.kind) == (409, "unworkable")
    big = refused(run, "big", {"words": "w" * (16 * 1024)})
    assert big.kind == "unworkable" and "16 KiB" in big.detail
    wrong = refused(run, "wrong-args", {})
    assert wrong.kind == "unworkable" and wrong.errors
    missing = refused(run, "replies", {"channel": "C1"})
    assert missing.reason == "invalid_input"
    assert tools.calls == []


def test_a_secret_header_appears_nowhere(run: Runner, service: RunService, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    done = run("whoami", {}, run_id)
    assert tools.received[-1]["authorization"] == f"Bearer {CREDENTIAL}"
    shown = json.dumps([done.as_json(), history(service, run_id)])
    assert CREDENTIAL not in shown and "[secret]" in shown
    tools.answer_status("whoami", 500)
    failing = refused(run, "whoami", {})
    assert CREDENTIAL not in json.dumps(failing.detail)


def test_record_content_false_keeps_sizes_not_content(run: Runner, service: RunService) -> None:
    run_id = str(uuid.uuid4())

    assert run("post-quiet", {"name": "Lee"}, run_id).output.startswith("1700000000.")

    started, answered, _ = history(service, run_id)
    assert "arguments" not in started["data"] and "arguments_digest" not in started["data"]
    assert started["data"]["arguments_size"] > 0
    assert "result" not in answered["data"] and answered["data"]["result_size"] > 0
