"""Requests sent through a tool (interaction-format.md, "Sending through a tool", "Attempts", "`deliver`",
"`deliver.sent`"), against a real MCP server on 127.0.0.1 that fails on command, on the manual clock with
the in-memory scheduler (``advance`` fires what falls due, in time order)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock, parse_time
from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.documents.definition import check_source
from parley.errors import Problem
from parley.runs.entry import build_timer_handler
from parley.runs.model import Run
from parley.runs.service import RunService, run_service
from parley.runtime import Runtime
from parley.tools.client import Bounds, McpToolClient

PLAYBOOK = PlaybookRef("acme", "campaigns")
QUICK = Bounds(open_seconds=2, list_seconds=2, respond_seconds=2)

QUESTION = """---
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with:
    channel: '{{ to }}'
    text: '{{ message }}'
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
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with: { channel: '{{ to }}', text: '{{ message }}' }
---
Sent: {{ input.draft }}
"""
FAILING = """---
to: '{{ input.owner }}'
expires: P2D
deliver: { server: chat, tool: write_fails, with: { reason: '{{ input.draft }}' } }
---
Hi
"""
EMPTY_ARGUMENT = """---
to: '{{ input.owner }}'
expires: P2D
deliver: { server: chat, tool: post_message, with: { channel: '{{ input.channel }}', text: hi } }
---
Hi
"""
NOT_ALLOWED = """---
to: '{{ input.owner }}'
expires: P2D
deliver: { server: chat, tool: plain_text, with: { words: hi } }
---
Hi
"""


def operator_yaml(url: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: {url}
    orgs: [acme]
    allowed: [post_message, write_fails, thread_replies]
"""


class Harness:
    def __init__(self, service: RunService, clock: ManualClock, scheduler: Any, waits: Any):
        self.service, self.clock, self.scheduler, self.waits = service, clock, scheduler, waits

    def run(self, name: str, input_value: dict[str, Any], run_id: str | None = None) -> Run:
        return self.service.run_definition(
            PLAYBOOK, "interaction", name, input_value=input_value, run_id=run_id, started_by="dev"
        )

    def advance(self, seconds: float) -> None:
        """Move the clock on, firing each schedule at its own time, in time order."""
        end = self.clock.now() + timedelta(seconds=seconds)
        while True:
            due = sorted(at for at, _ in self.scheduler.schedules.values() if at <= end)
            if not due:
                break
            if due[0] > self.clock.now():
                self.clock.advance((due[0] - self.clock.now()).total_seconds())
            self.scheduler.fire_due(self.clock.now())
        if end > self.clock.now():
            self.clock.advance((end - self.clock.now()).total_seconds())

    def events(self, run_id: str) -> list[dict[str, Any]]:
        return list(self.service.get_run_history(PLAYBOOK, run_id, limit=100).items)

    def listed(self, run_id: str) -> dict[str, Any] | None:
        found = [i for i in self.service.list_interactions(PLAYBOOK).items if i["run_id"] == run_id]
        return found[0] if found else None


@pytest.fixture
def harness(
    dynamodb: tuple[Any, str], manual_clock: ManualClock, tools: Any, waits: Any, scheduler: Any
) -> Iterator[Harness]:
    client, table = dynamodb
    runtime = Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(operator_yaml(tools.url), "test", environ={}),
        check_document=check_source,
        waits=waits,
        scheduler=scheduler,
        tool_client=McpToolClient(QUICK),
    )
    service = run_service(runtime)
    waits.service = service
    scheduler.handler = build_timer_handler(runtime)
    definitions = runtime.definition_service()
    for name, source in [
        ("question", QUESTION),
        ("notification", NOTIFICATION),
        ("failing", FAILING),
        ("empty-argument", EMPTY_ARGUMENT),
        ("not-allowed", NOT_ALLOWED),
    ]:
        definitions.create_definition(PLAYBOOK, "interaction", name, source)
    yield Harness(service, manual_clock, scheduler, waits)


def types(h: Harness, run_id: str) -> list[str]:
    return [e["type"] for e in h.events(run_id)]


def test_a_question_is_delivered_at_once_and_stays_open(harness: Harness, tools: Any) -> None:
    run_id = str(uuid.uuid4())
    started = harness.run("question", {"owner": "C42", "draft": "the brief"}, run_id)
    assert started.status == "started"
    assert harness.listed(run_id)["standing"] == "to_deliver"  # type: ignore[index]

    harness.advance(0)

    assert tools.calls == [
        ("post_message", {"channel": "C42", "text": "Approve the brief?\n", "thread_ts": None})
    ]
    listed = harness.listed(run_id)
    assert listed is not None
    assert (listed["standing"], listed["attempts"]) == ("delivered", 1)
    assert listed["delivery"] == {"server": "chat", "tool": "post_message"}
    assert types(harness, run_id) == ["interaction_requested", "delivery_started", "delivery_succeeded"]
    succeeded = harness.events(run_id)[2]["data"]
    assert succeeded["sent"]["conversation"] == "C42" and succeeded["sent"]["id"]


def test_a_notification_succeeds_with_an_empty_object_once_delivered(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("notification", {"owner": "C1", "draft": "d"}, run_id)
    harness.advance(0)
    run = harness.service.get_run(PLAYBOOK, run_id)
    assert (run.status, run.output) == ("succeeded", {})
    assert types(harness, run_id)[-1] == "run_succeeded"
    assert harness.listed(run_id) is None


def test_attempts_follow_the_backoff_and_a_notification_ends_undelivered(
    harness: Harness, tools: Any
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing", {"owner": "C1", "draft": "disk full"}, run_id)
    start = harness.clock.now()
    harness.advance(0)
    assert harness.listed(run_id)["standing"] == "retrying"  # type: ignore[index]
    harness.advance(15 * 60 + 1)
    started = [e for e in harness.events(run_id) if e["type"] == "delivery_started"]
    offsets = [(parse_time(e["at"]) - start).total_seconds() for e in started]
    assert offsets == [0, 60, 180, 420, 900]
    failed = [e["data"]["because"] for e in harness.events(run_id) if e["type"] == "delivery_failed"]
    assert failed == ["tool_error"] * 5
    run = harness.service.get_run(PLAYBOOK, run_id)
    assert run.status == "rejected" and run.rejection is not None
    assert (run.rejection.reason, run.rejection.kind) == ("unanswered", "undelivered")


def test_an_argument_that_renders_no_text_is_refused(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    with pytest.raises(Problem) as raised:
        harness.run("empty-argument", {"owner": "C1", "channel": ""}, run_id)
    assert (raised.value.reason, raised.value.kind) == ("conflict", "unworkable")
    assert types(harness, run_id) == ["interaction_requested", "delivery_refused", "run_rejected"]


def test_a_tool_the_operator_does_not_allow_is_not_offered(harness: Harness, tools: Any) -> None:
    with pytest.raises(Problem) as raised:
        harness.run("not-allowed", {"owner": "C1"})
    assert (raised.value.status, raised.value.kind) == (503, "tool_not_offered")
    assert tools.calls == []
