"""Requests sent through a tool (interaction-format.md, "Sending through a tool", "Attempts", "`deliver`",
"`deliver.sent`", "The run's history", "How a run ends", "Bounds"), against a real MCP server on 127.0.0.1
that fails on command (``tests/mcp_servers.py``), on the manual clock with the in-memory scheduler
(``advance`` fires what falls due, in time order, each at its own time).

A worker cut off in the middle of an attempt (a Lambda that timed out, a restart) is a tool client, or a
store, that raises :class:`Killed`, a ``BaseException`` nothing in the runtime catches: nothing after it
runs, as nothing runs after a process dies.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Any

import pytest
from mcp_servers import LocalToolServer, unreachable_url

from parley.clock import ManualClock, format_time, parse_time
from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.dynamo import StoreContention
from parley.errors import Problem
from parley.executions.entry import build_timer_handler
from parley.interaction.delivery import attempt_name, attempt_work, lost_name
from parley.ports.runtime import Runtime
from parley.ports.tools import Bounds, ListedTool, ServerAddress, ToolAnswer
from parley.ports.waiting import RunKey
from parley.runs.kinds import check_source
from parley.runs.model import Run
from parley.runs.service import RunService, run_service
from parley.runs.store import DynamoRunStore
from parley.tools.client import McpToolClient

PLAYBOOK = PlaybookRef("acme", "campaigns")
QUICK = Bounds(open_seconds=2, list_seconds=2, respond_seconds=2)
CREDENTIAL = "sk-unit-7c1f0e93ab55"

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
FAILING_QUESTION = """---
to: '{{ input.owner }}'
expires: P2D
deliver: { server: chat, tool: write_fails, with: { reason: '{{ input.draft }}' } }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Ok?
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
#: ``ts`` is sent as the input gives it, and the tool answers it back: the test chooses what `sent` reads.
ECHO = """---
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: chat
  tool: post_echo
  with: { channel: '{{ to }}', text: '{{ message }}', ts: '{{ input.ts }}' }
  sent: { conversation: /channel, id: /ts }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Key {{ input.key | default: "none" }}
"""
TYPED = """---
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: chat
  tool: post_echo
  with:
    channel: '{{ to }}'
    text: 'count {{ input.count }} for {{ run_id }} of {{ function }} until {{ expires_at }}'
    ts: '{{ input.count }}'
    extra: { schema: '{{ answer_schema }}', flags: [true, null, 3], listed: '{{ input.tags }}' }
  sent: { conversation: /channel, id: /ts }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
Approve?
"""
MOMENT = """---
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with: { channel: '{{ to }}', text: 'asked {{ now }} on {{ today }}' }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Ok?
"""
LARGE = """---
to: '{{ input.owner }}'
expires: P2D
deliver: { server: chat, tool: post_echo, with: { channel: '{{ to }}', text: '{{ input.big }}' } }
---
Hi
"""
QUIET = """---
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: quiet
  tool: post_message
  with: { channel: '{{ to }}', text: '{{ message }}' }
  sent: { conversation: /channel, id: /ts }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Quietly: {{ input.draft }}
"""
GONE = """---
to: '{{ input.owner }}'
expires: P2D
deliver: { server: gone, tool: post_message, with: { channel: '{{ to }}', text: '{{ message }}' } }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Ok?
"""
SLOW = """---
to: '{{ input.owner }}'
expires: P2D
deliver: { server: chat, tool: slow, with: { seconds: '{{ input.seconds }}' } }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Ok?
"""
SHORT = """---
to: '{{ input.owner }}'
expires: PT2M
deliver: { server: chat, tool: write_fails, with: { reason: '{{ input.draft }}' } }
output: { schema: { type: object, required: [ok], properties: { ok: { type: boolean } } } }
---
Ok?
"""
FUNCTIONS = {
    "short": SHORT,
    "question": QUESTION,
    "notification": NOTIFICATION,
    "failing": FAILING,
    "failing-question": FAILING_QUESTION,
    "empty-argument": EMPTY_ARGUMENT,
    "not-allowed": NOT_ALLOWED,
    "echo": ECHO,
    "typed": TYPED,
    "moment": MOMENT,
    "large": LARGE,
    "quiet": QUIET,
    "gone": GONE,
    "slow": SLOW,
}
SCHEDULE = [0, 60, 180, 420, 900]


def operator_yaml(url: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: {url}
    orgs: [acme]
    allowed: [post_message, post_echo, write_fails, thread_replies, slow]
    headers: {{ Authorization: "Bearer {CREDENTIAL}" }}
  - name: quiet
    url: {url}
    orgs: [acme]
    record_content: false
  - name: gone
    url: {unreachable_url()}
    orgs: [acme]
"""


class Killed(BaseException):
    """The worker was cut off here: nothing in the runtime catches it, nothing after it runs."""


class SwitchableClient:
    """The real MCP client, with a hook run (once) as a call starts: after the attempt was claimed and
    recorded, before anything is sent. It may raise :class:`Killed`, or act meanwhile (cancel, look)."""

    def __init__(self, inner: McpToolClient) -> None:
        self.inner = inner
        self.on_call: Callable[[], None] | None = None

    def list_tools(self, address: ServerAddress) -> list[ListedTool]:
        return self.inner.list_tools(address)

    def call_tool(
        self,
        address: ServerAddress,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        before_call: Callable[[ListedTool], None] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolAnswer:
        hook, self.on_call = self.on_call, None
        if hook is not None:
            hook()
        return self.inner.call_tool(address, tool, arguments, before_call=before_call, meta=meta)


class Harness:
    def __init__(
        self, service: RunService, clock: ManualClock, scheduler: Any, waits: Any, client: SwitchableClient
    ) -> None:
        self.service, self.clock, self.scheduler, self.waits = service, clock, scheduler, waits
        self.client = client
        self.start = clock.now()

    def run(self, name: str, input_value: dict[str, Any], run_id: str | None = None) -> Run:
        return self.service.run_definition(
            PLAYBOOK, "interaction", name, input_value=input_value, run_id=run_id or str(uuid.uuid4()),
            started_by="dev",
        )  # fmt: skip

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

    def whole(self, run_id: str) -> list[dict[str, Any]]:
        """The run's events as ``get_event`` shows them, content whole."""
        return [self.service.get_event(PLAYBOOK, e["id"]) for e in self.events(run_id)]

    def of_type(self, run_id: str, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.events(run_id) if e["type"] == event_type]

    def listed(self, run_id: str) -> dict[str, Any] | None:
        found = [i for i in self.service.list_interactions(PLAYBOOK).items if i["run_id"] == run_id]
        return found[0] if found else None

    def standing(self, run_id: str) -> tuple[str, int] | None:
        listed = self.listed(run_id)
        return None if listed is None else (listed["standing"], listed["attempts"])

    def offsets(self, run_id: str, event_type: str = "delivery_started") -> list[float]:
        """When each event of the type happened, in seconds after the harness started."""
        return [(parse_time(e["at"]) - self.start).total_seconds() for e in self.of_type(run_id, event_type)]

    def answer(self, run_id: str, answer: Any) -> Any:
        return self.service.answer_interaction(PLAYBOOK, run_id, answer, claimed_for=None, answered_by="dev")

    def get_run(self, run_id: str) -> Run:
        return self.service.get_run(PLAYBOOK, run_id)

    def key(self, run_id: str) -> RunKey:
        return RunKey(PLAYBOOK.org, PLAYBOOK.playbook, run_id)


@pytest.fixture
def harness(
    dynamodb: tuple[Any, str], manual_clock: ManualClock, tools: LocalToolServer, waits: Any, scheduler: Any
) -> Iterator[Harness]:
    client, table = dynamodb
    tool_client = SwitchableClient(McpToolClient(QUICK))
    runtime = Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(operator_yaml(tools.url), "test", environ={}),
        check_document=check_source,
        waits=waits,
        scheduler=scheduler,
        tool_client=tool_client,
    )
    service = run_service(runtime)
    waits.service = service
    scheduler.handler = build_timer_handler(runtime)
    definitions = runtime.definition_service()
    for name, source in FUNCTIONS.items():
        definitions.create_definition(PLAYBOOK, "interaction", name, source)
    yield Harness(service, manual_clock, scheduler, waits, tool_client)


def types(h: Harness, run_id: str) -> list[str]:
    return [e["type"] for e in h.events(run_id)]


def assert_one_attempt_at_a_time(history: list[dict[str, Any]]) -> None:
    """Never two ``delivery_started`` without the end of the first between them (a ``lost`` failure is
    such an end), and the attempts numbered 1, 2, 3… in order."""
    open_attempt: int | None = None
    numbers = []
    for event in history:
        data = event["data"]
        if event["type"] == "delivery_started":
            assert open_attempt is None, f"attempt {data['attempt']} started while {open_attempt} ran"
            open_attempt = data["attempt"]
            numbers.append(data["attempt"])
        elif event["type"] in ("delivery_succeeded", "delivery_failed") and data["attempt"] == open_attempt:
            open_attempt = None
    assert numbers == list(range(1, len(numbers) + 1))


# --- delivered -------------------------------------------------------------------------------------------


def test_a_question_is_delivered_at_once_stays_open_and_its_answer_ends_it(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    started = harness.run("question", {"owner": "C42", "draft": "the brief"}, run_id)
    assert started.status == "started"
    assert harness.standing(run_id) == ("to_deliver", 0)
    assert tools.calls == []  # nothing is sent inside the request: attempt 1 is due at once

    harness.advance(0)

    assert tools.calls == [
        ("post_message", {"channel": "C42", "text": "Approve the brief?\n", "thread_ts": None})
    ]
    listed = harness.listed(run_id)
    assert listed is not None
    assert (listed["standing"], listed["attempts"]) == ("delivered", 1)
    assert listed["delivery"] == {"server": "chat", "tool": "post_message"}
    assert types(harness, run_id) == ["interaction_requested", "delivery_started", "delivery_succeeded"]
    requested, started_event, succeeded = harness.events(run_id)
    assert requested["data"]["delivery"] == {"server": "chat", "tool": "post_message"}
    assert started_event["data"]["attempt"] == 1 and started_event["data"]["tool"] == "post_message"
    assert started_event["data"]["arguments_size"] == len(
        json.dumps({"channel": "C42", "text": "Approve the brief?\n"}, separators=(",", ":"))
    )
    assert len(started_event["data"]["arguments_digest"]) == 64
    assert succeeded["data"]["attempt"] == 1 and succeeded["data"]["result_size"] > 0
    sent = succeeded["data"]["sent"]
    assert sent["conversation"] == "C42" and sent["id"].startswith("1700000000.")
    assert harness.get_run(run_id).status == "started"

    fact = harness.answer(run_id, {"verdict": "approve"})

    assert fact.answer == {"verdict": "approve"}
    run = harness.get_run(run_id)
    assert (run.status, run.output) == ("succeeded", {"verdict": "approve"})
    assert harness.listed(run_id) is None
    assert types(harness, run_id)[-2:] == ["request_answered", "run_succeeded"]


def test_the_standing_is_delivering_while_the_attempt_runs(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    seen: list[tuple[str, int] | None] = []
    harness.client.on_call = lambda: seen.append(harness.standing(run_id))

    harness.advance(0)

    assert seen == [("delivering", 1)]
    assert harness.standing(run_id) == ("delivered", 1)


def test_a_notification_succeeds_with_an_empty_object_once_delivered(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("notification", {"owner": "C1", "draft": "d"}, run_id)
    assert harness.get_run(run_id).status == "started"
    harness.advance(0)
    run = harness.get_run(run_id)
    assert (run.status, run.output) == ("succeeded", {})
    assert types(harness, run_id) == [
        "interaction_requested",
        "delivery_started",
        "delivery_succeeded",
        "run_succeeded",
    ]
    assert harness.listed(run_id) is None
    assert harness.waits.ended[f"token-{run_id}"] == ("succeeded", {"ending": "delivered"})
    assert not any(name.startswith(("deliver-", "lost-", "expire-")) for name in harness.scheduler.schedules)


# --- the schedule ----------------------------------------------------------------------------------------


def test_attempts_follow_the_backoff_to_the_second_and_a_notification_ends_undelivered(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing", {"owner": "C1", "draft": "disk full"}, run_id)
    harness.advance(0)
    assert harness.standing(run_id) == ("retrying", 1)
    for offset, attempts in [(59, 1), (60, 2), (179, 2), (180, 3), (419, 3), (420, 4), (899, 4)]:
        harness.advance(offset - (harness.clock.now() - harness.start).total_seconds())
        assert harness.standing(run_id) == ("retrying", attempts), offset
    harness.advance(1)  # 900 s: the fifth and last

    assert harness.offsets(run_id) == SCHEDULE
    assert harness.offsets(run_id, "delivery_failed") == SCHEDULE
    failed = harness.of_type(run_id, "delivery_failed")
    assert [e["data"]["because"] for e in failed] == ["tool_error"] * 5
    assert [e["data"]["attempt"] for e in failed] == [1, 2, 3, 4, 5]
    assert "cannot write: disk full" in failed[0]["data"]["message"]
    run = harness.get_run(run_id)
    assert run.status == "rejected" and run.rejection is not None
    assert (run.rejection.reason, run.rejection.kind) == ("unanswered", "undelivered")
    assert types(harness, run_id)[-1] == "run_rejected"
    assert harness.listed(run_id) is None
    assert harness.waits.ended[f"token-{run_id}"] == ("succeeded", {"ending": "undelivered"})

    harness.advance(3600)
    assert len(tools.calls) == 5
    assert harness.offsets(run_id) == SCHEDULE


def test_a_notification_whose_attempts_are_spent_answers_410_when_run_again(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing", {"owner": "C1", "draft": "x"}, run_id)
    harness.advance(901)
    assert harness.get_run(run_id).status == "rejected"

    with pytest.raises(Problem) as again:
        harness.run("failing", {"owner": "C1", "draft": "x"}, run_id)

    assert (again.value.status, again.value.reason, again.value.kind) == (410, "unanswered", "undelivered")
    assert harness.of_type(run_id, "delivery_started")[-1]["data"]["attempt"] == 5  # nothing more was tried


def test_a_retry_after_is_waited_for(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    tools.answer_status("post_message", 429, {"Retry-After": "300"}, times=1)
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)

    harness.advance(0)
    failed = harness.of_type(run_id, "delivery_failed")[0]["data"]
    assert (failed["because"], failed["retry_after_ms"]) == ("server_failure", 300_000)
    assert "429" in failed["message"]
    harness.advance(299)
    assert harness.standing(run_id) == ("retrying", 1)  # not at 60 s: the server asked for 300
    harness.advance(1)

    assert harness.offsets(run_id) == [0, 300]
    assert harness.standing(run_id) == ("delivered", 2)


def test_a_retry_after_is_waited_for_up_to_eight_minutes(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    tools.answer_status("post_message", 429, {"Retry-After": "1200"}, times=2)
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)

    harness.advance(479)
    assert harness.standing(run_id) == ("retrying", 1)
    harness.advance(1)
    assert harness.offsets(run_id) == [0, 480]
    assert [e["data"]["retry_after_ms"] for e in harness.of_type(run_id, "delivery_failed")] == [
        1_200_000,
        1_200_000,
    ]
    harness.advance(480)  # after attempt 2 (its own backoff, 2 minutes, is shorter): 8 minutes again

    assert harness.offsets(run_id) == [0, 480, 960]
    assert harness.standing(run_id) == ("delivered", 3)


def test_a_retry_after_shorter_than_the_backoff_keeps_the_backoff(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    tools.answer_status("post_message", 429, {"Retry-After": "5"}, times=1)
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    harness.advance(120)
    assert harness.offsets(run_id) == [0, 60]


def test_a_success_on_the_third_attempt(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    tools.fail_next("post_message", 2)
    harness.run("question", {"owner": "C7", "draft": "the plan"}, run_id)
    steps = [harness.standing(run_id)]
    for seconds in (0, 60, 120):
        harness.advance(seconds)
        steps.append(harness.standing(run_id))

    assert steps == [("to_deliver", 0), ("retrying", 1), ("retrying", 2), ("delivered", 3)]
    assert harness.offsets(run_id) == [0, 60, 180]
    assert len(tools.calls) == 3
    assert types(harness, run_id) == [
        "interaction_requested",
        *["delivery_started", "delivery_failed"] * 2,
        "delivery_started",
        "delivery_succeeded",
    ]
    assert harness.of_type(run_id, "delivery_succeeded")[0]["data"]["attempt"] == 3
    harness.advance(3600)
    assert len(tools.calls) == 3 and harness.standing(run_id) == ("delivered", 3)

    harness.answer(run_id, {"verdict": "revise"})
    assert harness.get_run(run_id).output == {"verdict": "revise"}
    assert harness.listed(run_id) is None


def test_a_question_whose_attempts_are_spent_stays_open_and_answerable(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing-question", {"owner": "C1", "draft": "no"}, run_id)
    harness.advance(900)

    assert harness.standing(run_id) == ("undelivered", 5)
    assert harness.get_run(run_id).status == "started"
    assert types(harness, run_id)[-1] == "delivery_failed"
    harness.advance(24 * 3600)
    assert harness.standing(run_id) == ("undelivered", 5) and len(tools.calls) == 5

    harness.answer(run_id, {"ok": True})
    run = harness.get_run(run_id)
    assert (run.status, run.output) == ("succeeded", {"ok": True})
    assert harness.listed(run_id) is None


def test_an_answer_during_the_retries_stops_them(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing-question", {"owner": "C1", "draft": "no"}, run_id)
    harness.advance(0)
    harness.answer(run_id, {"ok": False})
    harness.advance(900)
    assert len(tools.calls) == 1
    assert harness.get_run(run_id).output == {"ok": False}


def test_the_expiry_during_the_retries_stops_them(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    harness.run("short", {"owner": "C1", "draft": "no"}, run_id)
    harness.advance(120)
    key = harness.key(run_id)
    assert attempt_name(key, 3) not in harness.scheduler.schedules
    harness.advance(3600)

    assert harness.offsets(run_id) == [0, 60]
    run = harness.get_run(run_id)
    assert run.rejection is not None and (run.rejection.reason, run.rejection.kind) == (
        "unanswered",
        "expired",
    )


# --- workers cut off, schedules fired twice ----------------------------------------------------------------


def kill() -> None:
    raise Killed


def test_a_worker_killed_before_the_call_counts_as_lost_a_minute_later(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    harness.client.on_call = kill

    with pytest.raises(Killed):
        harness.advance(0)

    assert harness.standing(run_id) == ("delivering", 1)
    assert tools.calls == []
    harness.advance(59)
    assert harness.standing(run_id) == ("delivering", 1)
    assert types(harness, run_id) == ["interaction_requested", "delivery_started"]

    harness.advance(1)

    history = harness.events(run_id)
    assert [e["type"] for e in history] == [
        "interaction_requested",
        "delivery_started",
        "delivery_failed",
        "delivery_started",
        "delivery_succeeded",
    ]
    lost = history[2]["data"]
    assert (lost["attempt"], lost["because"]) == (1, "lost")
    assert harness.offsets(run_id) == [0, 60]
    assert harness.offsets(run_id, "delivery_failed") == [60]
    assert_one_attempt_at_a_time(history)
    assert harness.standing(run_id) == ("delivered", 2)
    assert len(tools.calls) == 1


def test_a_notifications_last_attempt_lost_ends_it_undelivered(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing", {"owner": "C1", "draft": "no"}, run_id)
    harness.advance(420)
    harness.client.on_call = kill
    with pytest.raises(Killed):
        harness.advance(480)
    assert harness.standing(run_id) == ("delivering", 5)

    harness.advance(60)

    failed = harness.of_type(run_id, "delivery_failed")
    assert [e["data"]["because"] for e in failed] == ["tool_error"] * 4 + ["lost"]
    assert harness.offsets(run_id, "delivery_failed")[-1] == 960
    run = harness.get_run(run_id)
    assert run.rejection is not None and (run.rejection.reason, run.rejection.kind) == (
        "unanswered",
        "undelivered",
    )
    assert_one_attempt_at_a_time(harness.events(run_id))


def test_a_worker_killed_right_after_its_claim_is_still_counted_lost(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    claim = DynamoRunStore.claim_attempt

    def claim_then_die(*args: Any, **kwargs: Any) -> None:
        claim(*args, **kwargs)
        raise Killed

    monkeypatch.setattr(DynamoRunStore, "claim_attempt", claim_then_die)
    with pytest.raises(Killed):
        harness.advance(0)
    monkeypatch.setattr(DynamoRunStore, "claim_attempt", claim)
    assert harness.standing(run_id) == ("delivering", 1)

    harness.advance(60)

    assert [e["data"]["because"] for e in harness.of_type(run_id, "delivery_failed")] == ["lost"]
    assert harness.standing(run_id) == ("delivered", 2)
    assert_one_attempt_at_a_time(harness.events(run_id))


def test_an_end_that_cannot_be_written_leaves_the_attempt_to_the_lost_check(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    end = DynamoRunStore.end_attempt

    def failing_end(*args: Any, **kwargs: Any) -> bool:
        raise Problem("unavailable", "The store is busy; try again shortly.")

    monkeypatch.setattr(DynamoRunStore, "end_attempt", failing_end)
    with pytest.raises(Problem):
        harness.advance(0)
    monkeypatch.setattr(DynamoRunStore, "end_attempt", end)
    assert harness.standing(run_id) == ("delivering", 1)
    harness.scheduler.handler(attempt_work(harness.key(run_id), 1), None)  # the scheduler's retry
    assert harness.standing(run_id) == ("delivering", 1)

    harness.advance(60)

    assert [e["data"]["because"] for e in harness.of_type(run_id, "delivery_failed")] == ["lost"]
    assert harness.standing(run_id) == ("delivered", 2)
    assert len(tools.calls) == 2  # "So a tool may be called twice for one request."


def test_an_end_that_meets_another_write_is_written_again(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("notification", {"owner": "C1", "draft": "d"}, run_id)
    end = DynamoRunStore.end_attempt
    met: list[bool] = []

    def busy_once(*args: Any, **kwargs: Any) -> bool:
        if not met:
            met.append(True)
            raise StoreContention("TransactionCanceledException")
        return end(*args, **kwargs)

    monkeypatch.setattr(DynamoRunStore, "end_attempt", busy_once)
    harness.advance(0)

    assert met == [True]
    assert harness.get_run(run_id).status == "succeeded"
    assert lost_name(harness.key(run_id), 1) not in harness.scheduler.schedules


def test_the_same_schedule_fired_twice_makes_one_attempt(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    work = attempt_work(harness.key(run_id), 1)
    handler = harness.scheduler.handler

    first = handler(work, None)
    second = handler(work, None)

    assert (first["outcome"], second["outcome"]) == ("delivered", "unchanged")
    assert len(harness.of_type(run_id, "delivery_started")) == 1
    assert len(tools.calls) == 1
    harness.advance(0)  # the schedule itself, still pending in the fake scheduler, fires a third time
    assert len(tools.calls) == 1


def test_the_same_schedule_fired_twice_at_once_makes_one_attempt(
    harness: Harness, tools: LocalToolServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    read = DynamoRunStore.get_request
    both_read = threading.Barrier(2, timeout=10)

    def read_together(*args: Any, **kwargs: Any) -> Any:
        found = read(*args, **kwargs)
        if threading.current_thread().name.startswith("worker-"):
            both_read.wait()  # both workers see attempt 1 due before either claims it
        return found

    monkeypatch.setattr(DynamoRunStore, "get_request", read_together)
    work = attempt_work(harness.key(run_id), 1)
    outcomes: list[str] = []

    def worker() -> None:
        outcomes.append(harness.scheduler.handler(work, None)["outcome"])

    workers = [threading.Thread(target=worker, name=f"worker-{n}") for n in range(2)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=30)

    assert sorted(outcomes) == ["delivered", "unchanged"]
    assert len(harness.of_type(run_id, "delivery_started")) == 1
    assert len(tools.calls) == 1


def test_a_lost_check_of_an_attempt_that_ended_does_nothing(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    harness.advance(0)
    key = harness.key(run_id)
    assert lost_name(key, 1) not in harness.scheduler.schedules  # cancelled once the attempt ended
    harness.advance(60)
    outcome = harness.scheduler.handler({"work": "lost", "run": key.as_json(), "attempt": 1}, None)
    assert outcome["outcome"] == "unchanged"
    assert harness.standing(run_id) == ("delivered", 1)


def test_an_attempt_not_due_is_not_made(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    key = harness.key(run_id)
    assert harness.scheduler.handler(attempt_work(key, 2), None)["outcome"] == "unchanged"
    assert harness.scheduler.handler(attempt_work(key, 6), None)["outcome"] == "unchanged"
    assert tools.calls == [] and harness.standing(run_id) == ("to_deliver", 0)


# --- cancels ---------------------------------------------------------------------------------------------


def test_a_cancel_during_the_retries_stops_them(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing-question", {"owner": "C1", "draft": "no"}, run_id)
    harness.advance(60)
    assert harness.standing(run_id) == ("retrying", 2)
    key = harness.key(run_id)
    assert attempt_name(key, 3) in harness.scheduler.schedules

    harness.service.cancel_run(PLAYBOOK, run_id, reason=None, cancelled_by="dev")

    assert attempt_name(key, 3) not in harness.scheduler.schedules
    assert attempt_name(key, 3) in harness.scheduler.cancelled
    harness.advance(3600)
    assert len(tools.calls) == 2
    history = harness.events(run_id)
    assert [e["type"] for e in history][-1] == "run_rejected"
    assert harness.get_run(run_id).rejection.reason == "cancelled"  # type: ignore[union-attr]
    assert harness.listed(run_id) is None


def test_a_cancel_during_an_attempt_lets_it_end_and_makes_no_other(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing-question", {"owner": "C1", "draft": "no"}, run_id)

    def cancel() -> None:
        harness.service.cancel_run(PLAYBOOK, run_id, reason="no longer needed", cancelled_by="dev")

    harness.client.on_call = cancel
    harness.advance(3600)

    assert len(tools.calls) == 1
    # One moment of the manual clock: the attempt's end lists before the run's, whichever came first.
    assert sorted(types(harness, run_id)) == [
        "delivery_failed",
        "delivery_started",
        "interaction_requested",
        "run_rejected",
    ]
    assert harness.get_run(run_id).rejection.detail == "no longer needed"  # type: ignore[union-attr]
    assert not any(name.startswith(("deliver-", "lost-")) for name in harness.scheduler.schedules)


def test_a_cancel_during_the_last_attempt_of_a_notification_ends_the_run_once(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("failing", {"owner": "C1", "draft": "no"}, run_id)
    harness.advance(420)
    assert harness.standing(run_id) == ("retrying", 4)

    def cancel() -> None:
        harness.service.cancel_run(PLAYBOOK, run_id, reason="enough", cancelled_by="dev")

    harness.client.on_call = cancel
    harness.advance(480)

    run = harness.get_run(run_id)
    assert run.rejection is not None and run.rejection.reason == "cancelled"
    endings = [e for e in harness.events(run_id) if e["type"] in ("run_rejected", "run_succeeded")]
    assert len(endings) == 1, endings


# --- deliver.sent ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ts", "why"),
    [
        (None, "nothing"),
        ({"at": "1.2"}, "no text"),
        ([1, 2], "no text"),
        (True, "no text"),
        (1.5, "no text"),
        ("x" * 257, "no text"),
        ("é" * 129, "no text"),  # 258 bytes
        ("a\u0007b", "no text"),
        ("line\nbreak", "no text"),
    ],
)
def test_a_sent_pointing_at_nothing_usable_is_delivered_without_it(
    harness: Harness, ts: Any, why: str
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("echo", {"owner": "C1", "ts": ts}, run_id)
    harness.advance(0)

    assert harness.standing(run_id) == ("delivered", 1)
    succeeded = harness.of_type(run_id, "delivery_succeeded")[0]["data"]
    assert "sent" not in succeeded
    assert "deliver.sent.id ('/ts')" in succeeded["sent_unusable"] and why in succeeded["sent_unusable"]


@pytest.mark.parametrize(
    ("ts", "shown"),
    [(42, "42"), (7.0, "7"), ("x" * 256, "x" * 256), ("é" * 128, "é" * 128), ("1700000000.000100", None)],
)
def test_a_sent_text_or_whole_number_is_recorded(harness: Harness, ts: Any, shown: str | None) -> None:
    run_id = str(uuid.uuid4())
    harness.run("echo", {"owner": "C9", "ts": ts}, run_id)
    harness.advance(0)
    succeeded = harness.of_type(run_id, "delivery_succeeded")[0]["data"]
    assert succeeded["sent"] == {"conversation": "C9", "id": shown or ts}
    assert "sent_unusable" not in succeeded


# --- rendering -------------------------------------------------------------------------------------------


def test_arguments_are_rendered_typed(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    harness.run("typed", {"owner": "C3", "count": 42, "tags": ["a", "b"]}, run_id)
    harness.advance(0)

    ((tool, arguments),) = tools.calls
    assert tool == "post_echo"
    assert arguments["ts"] == 42  # a number stays a number
    schema = json.loads(json.dumps(harness.listed(run_id)["answer_schema"]))  # type: ignore[index]
    assert schema["required"] == ["verdict"]
    assert arguments["extra"] == {"schema": schema, "flags": [True, None, 3], "listed": ["a", "b"]}
    expires_at = format_time(harness.start + timedelta(days=2))
    assert arguments["text"] == f"count 42 for {run_id} of typed until {expires_at}"
    assert harness.of_type(run_id, "delivery_succeeded")[0]["data"]["sent"]["id"] == "42"


def test_every_attempt_sends_the_same_arguments_of_the_requests_moment(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    tools.fail_next("post_message", 2)
    harness.run("moment", {"owner": "C1"}, run_id)
    harness.advance(180)

    assert harness.standing(run_id) == ("delivered", 3)
    texts = [arguments["text"] for _, arguments in tools.calls]
    asked = f"asked {format_time(harness.start)} on {harness.start.strftime('%Y-%m-%d')}"
    assert texts == [asked] * 3
    started = harness.of_type(run_id, "delivery_started")
    assert len({e["data"]["arguments_digest"] for e in started}) == 1
    assert len({e["data"]["arguments_size"] for e in started}) == 1


def test_arguments_past_16_kib_are_refused_and_nothing_is_sent(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    with pytest.raises(Problem) as raised:
        harness.run("large", {"owner": "C1", "big": "x" * (16 * 1024)}, run_id)

    assert (raised.value.status, raised.value.reason, raised.value.kind) == (409, "conflict", "unworkable")
    assert types(harness, run_id) == ["interaction_requested", "delivery_refused", "run_rejected"]
    refused = harness.of_type(run_id, "delivery_refused")[0]["data"]
    assert refused["because"] == "too_large" and refused["arguments_size"] > 16 * 1024
    run = harness.get_run(run_id)
    assert run.status == "rejected" and run.rejection is not None and run.rejection.kind == "unworkable"
    harness.advance(3600)
    assert tools.calls == []
    assert not any(run_id in name for name in harness.scheduler.schedules)
    assert harness.listed(run_id) is None


def test_arguments_of_16_kib_are_sent(harness: Harness, tools: LocalToolServer) -> None:
    arguments = {"channel": "C1", "text": ""}
    room = 16 * 1024 - len(json.dumps(arguments, separators=(",", ":")))
    run_id = str(uuid.uuid4())
    harness.run("large", {"owner": "C1", "big": "x" * room}, run_id)
    harness.advance(0)
    assert harness.of_type(run_id, "delivery_started")[0]["data"]["arguments_size"] == 16 * 1024
    assert len(tools.calls) == 1


def test_an_argument_that_renders_no_text_is_refused(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    with pytest.raises(Problem) as raised:
        harness.run("empty-argument", {"owner": "C1", "channel": ""}, run_id)
    assert (raised.value.reason, raised.value.kind) == ("conflict", "unworkable")
    assert types(harness, run_id) == ["interaction_requested", "delivery_refused", "run_rejected"]
    assert harness.of_type(run_id, "delivery_refused")[0]["data"]["because"] == "unworkable"


# --- failed attempts -------------------------------------------------------------------------------------


def test_a_tool_the_operator_does_not_allow_is_not_offered(harness: Harness, tools: LocalToolServer) -> None:
    with pytest.raises(Problem) as raised:
        harness.run("not-allowed", {"owner": "C1"})
    assert (raised.value.status, raised.value.kind) == (503, "tool_not_offered")
    assert tools.calls == []


def test_a_tool_the_server_stops_listing_fails_the_attempt(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    tools.hide_tool("post_message")
    harness.advance(0)

    failed = harness.of_type(run_id, "delivery_failed")[0]["data"]
    assert failed["because"] == "tool_not_offered"
    assert "post_message" in failed["message"]
    assert harness.standing(run_id) == ("retrying", 1)
    assert tools.calls == []

    tools.reset()  # listed again
    harness.advance(60)
    assert harness.standing(run_id) == ("delivered", 2)


def test_a_server_that_cannot_be_reached_fails_the_attempt(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("gone", {"owner": "C1"}, run_id)
    harness.advance(0)
    failed = harness.of_type(run_id, "delivery_failed")[0]["data"]
    assert (failed["because"], failed["server"]) == ("server_failure", "gone")
    assert harness.standing(run_id) == ("retrying", 1)


def test_a_server_failure_fails_the_attempt(harness: Harness, tools: LocalToolServer) -> None:
    run_id = str(uuid.uuid4())
    tools.answer_status("post_message", 500, times=1)
    harness.run("question", {"owner": "C1", "draft": "d"}, run_id)
    harness.advance(60)
    failed = harness.of_type(run_id, "delivery_failed")[0]["data"]
    assert failed["because"] == "server_failure" and "retry_after_ms" not in failed
    assert harness.standing(run_id) == ("delivered", 2)


def test_no_response_in_time_fails_the_attempt(harness: Harness) -> None:
    harness.client.inner = McpToolClient(Bounds(open_seconds=2, list_seconds=2, respond_seconds=0.3))
    run_id = str(uuid.uuid4())
    harness.run("slow", {"owner": "C1", "seconds": 2}, run_id)
    harness.advance(0)
    failed = harness.of_type(run_id, "delivery_failed")[0]["data"]
    assert failed["because"] == "timed_out"
    assert harness.standing(run_id) == ("retrying", 1)


# --- what is recorded ------------------------------------------------------------------------------------


def test_a_secret_header_is_never_in_an_event(harness: Harness, tools: LocalToolServer) -> None:
    delivered = str(uuid.uuid4())
    harness.run("echo", {"owner": "C1", "ts": f"Bearer {CREDENTIAL}", "key": CREDENTIAL}, delivered)
    failing = str(uuid.uuid4())
    harness.run("failing-question", {"owner": "C1", "draft": f"key {CREDENTIAL}"}, failing)
    harness.advance(0)

    echoed = [arguments for tool, arguments in tools.calls if tool == "post_echo"]
    assert echoed[0]["text"] == f"Key {CREDENTIAL}\n"  # the tool itself gets what was rendered
    assert any(h.get("authorization") == f"Bearer {CREDENTIAL}" for h in tools.received)
    for run_id in (delivered, failing):
        for listed in (harness.events(run_id), harness.whole(run_id)):
            assert CREDENTIAL not in json.dumps(listed)
    started = harness.whole(delivered)[1]["data"]
    assert started["arguments"]["text"] == "Key [secret]\n"
    assert harness.of_type(delivered, "delivery_succeeded")[0]["data"]["sent"]["id"] == "[secret]"
    assert "cannot write: key [secret]" in harness.of_type(failing, "delivery_failed")[0]["data"]["message"]


def test_record_content_off_keeps_no_arguments_and_no_result(
    harness: Harness, tools: LocalToolServer
) -> None:
    run_id = str(uuid.uuid4())
    harness.run("quiet", {"owner": "C5", "draft": "private words"}, run_id)
    harness.advance(0)

    assert harness.standing(run_id) == ("delivered", 1)
    whole = harness.whole(run_id)
    started, succeeded = whole[1]["data"], whole[2]["data"]
    assert "arguments" not in started
    assert started["arguments_size"] > 0 and len(started["arguments_digest"]) == 64
    assert "result" not in succeeded
    assert succeeded["result_size"] > 0 and len(succeeded["result_digest"]) == 64
    assert "private words" not in json.dumps(whole[1:])
    assert succeeded["sent"]["conversation"] == "C5"  # what it was delivered as is no content


def test_record_content_on_keeps_the_arguments_and_the_result(harness: Harness) -> None:
    run_id = str(uuid.uuid4())
    harness.run("question", {"owner": "C5", "draft": "open words"}, run_id)
    harness.advance(0)
    whole = harness.whole(run_id)
    assert whole[1]["data"]["arguments"] == {"channel": "C5", "text": "Approve open words?\n"}
    result = whole[2]["data"]["result"]
    assert result["isError"] is False and result["structuredContent"]["channel"] == "C5"


@pytest.mark.parametrize("name", ["failing", "notification"])
def test_a_cancel_just_before_a_notifications_last_end_is_written_ends_the_run_once(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    run_id = str(uuid.uuid4())
    harness.run(name, {"owner": "C1", "draft": "no"}, run_id)
    if name == "failing":
        harness.advance(420)
        assert harness.standing(run_id) == ("retrying", 4)
    end = DynamoRunStore.end_attempt

    def cancelled_first(*args: Any, **kwargs: Any) -> bool:
        monkeypatch.setattr(DynamoRunStore, "end_attempt", end)
        harness.service.cancel_run(PLAYBOOK, run_id, reason="enough", cancelled_by="dev")
        return end(*args, **kwargs)

    monkeypatch.setattr(DynamoRunStore, "end_attempt", cancelled_first)
    harness.advance(480)

    run = harness.get_run(run_id)
    assert run.rejection is not None and run.rejection.reason == "cancelled"
    endings = [e for e in harness.events(run_id) if e["type"] in ("run_rejected", "run_succeeded")]
    assert len(endings) == 1, endings
