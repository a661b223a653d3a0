"""Agent runs in process (``agent-runs.md``): questions and approvals that wait, taken up again as the
run's execution does it (settle, then the reason function), with a real MCP server on 127.0.0.1 and a
fake provider speaking the Anthropic Messages API whose steps each test scripts."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
from fake_providers import MESSAGES, FakeProviders, Scripted, anthropic_text
from fake_providers import anthropic_tool_steps as tool_use

from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.errors import Problem
from parley.ports.runtime import Runtime
from parley.ports.waiting import RunKey
from parley.reasoning.running import Reasoning
from parley.runs.kinds import check_source
from parley.runs.model import Run
from parley.runs.service import RunService, run_service

PLAYBOOK = PlaybookRef("acme", "campaigns")
KEY = "sk-ant-agent-key-42"
ASK = "ask: { to: 'owner@example.com', expires: P2D }\n"
APPROVE_POST = (
    "approve: [{ tool: chat/post_message, "
    "confirmation: 'Post {{ arguments.text }} to {{ arguments.channel }}?' }]\n"
)


def function(tools: str, extra: str = "") -> str:
    return f"""---
model: anthropic/claude-sonnet-4-5
tools: {tools}
{extra}---
Question: {{{{ input.question }}}}
"""


@dataclass
class AgentWaits:
    """Executions as the state machine runs them: each wait parks on a new token, ``succeed`` ends it
    and nothing more (whoever wrote the request's ending has had the run's next step taken: here, with
    no reasoner, in the same call)."""

    service: RunService | None = None
    tokens: dict[str, RunKey] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    ended: dict[str, Any] = field(default_factory=dict)

    def start(self, run: RunKey, *, timeout_seconds: int, number: int = 1) -> None:
        name = run.wait_execution_name(number)
        if name in self.names:
            return  # ExecutionAlreadyExists
        self.names.append(name)
        assert self.service is not None
        token = f"token-{len(self.tokens) + 1}"
        self.tokens[token] = run
        self.service.park_request(run, token)

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        self.ended.setdefault(token, dict(output))


@dataclass
class Schedules:
    schedules: dict[str, tuple[datetime, dict[str, Any]]] = field(default_factory=dict)

    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        self.schedules[name] = (at, dict(work))

    def cancel(self, name: str) -> None:
        self.schedules.pop(name, None)


@pytest.fixture
def waits() -> AgentWaits:
    return AgentWaits()


@pytest.fixture
def schedules() -> Schedules:
    return Schedules()


@pytest.fixture
def service(
    dynamodb: tuple[Any, str],
    manual_clock: ManualClock,
    fake: FakeProviders,
    tools: Any,
    waits: AgentWaits,
    schedules: Schedules,
) -> RunService:
    client, table = dynamodb
    operator = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - {{ name: chat, url: "{tools.url}", orgs: [acme] }}
models:
  allowed: [anthropic/*]
"""
    runtime = Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(operator, "test", environ={}),
        check_document=check_source,
        environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url},
        run_wait_seconds=30,
        waits=waits,
        scheduler=schedules,
    )
    built = run_service(runtime)
    waits.service = built
    return built


@pytest.fixture
def run(service: RunService) -> Callable[..., Run]:
    def running(tools: str, extra: str = ASK) -> Run:
        source = function(tools, extra)
        name = "agent-" + uuid.uuid5(uuid.NAMESPACE_URL, source).hex[:12]
        service.runtime.definition_service().create_definition(PLAYBOOK, "reasoning", name, source)
        return service.run_definition(
            PLAYBOOK, "reasoning", name, input_value={"question": "Post hi."}, run_id=None, started_by="dev"
        )

    return running


def history(service: RunService, run_id: str) -> list[dict[str, Any]]:
    return list(service.get_run_history(PLAYBOOK, run_id, limit=100).items)


def answer(service: RunService, run_id: str, value: Any) -> Any:
    return service.answer_interaction(PLAYBOOK, run_id, value, claimed_for=None, answered_by="maria")


def test_an_approved_call_is_sent_exactly_as_frozen(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__post_message", {"channel": "C1", "text": "hi"})),
        Scripted(body=anthropic_text("Posted.")),
    )

    started = run("[chat/post_message]", ASK + APPROVE_POST)

    assert started.status == "started"
    assert started.waiting is not None and started.waiting["for"] == "approval"
    assert tools.calls == []
    [listed] = service.list_interactions(PLAYBOOK).items
    assert listed["type"] == "reasoning"
    assert listed["message"] == "Post hi to C1?"
    assert listed["approval"] == {
        "server": "chat",
        "tool": "post_message",
        "arguments": {"channel": "C1", "text": "hi"},
    }
    assert listed["to"] == "owner@example.com"

    answer(service, started.run_id, {"approved": True})

    done = service.get_run(PLAYBOOK, started.run_id)
    assert done.status == "succeeded", done
    assert done.output == "Posted."
    assert [name for name, _ in tools.calls] == ["post_message"]
    types = [event["type"] for event in history(service, started.run_id)]
    assert types == [
        "approval_requested",
        "request_answered",
        "tool_call_started",
        "tool_call_answered",
        "run_succeeded",
    ]
    assert service.list_interactions(PLAYBOOK).items == ()


def test_a_refused_approval_sends_nothing_and_the_model_reads_the_note(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__post_message", {"channel": "C1", "text": "hi"})),
        Scripted(body=anthropic_text("Not posted.")),
    )
    started = run("[chat/post_message]", ASK + APPROVE_POST)

    answer(service, started.run_id, {"approved": False, "note": "Not today."})

    assert service.get_run(PLAYBOOK, started.run_id).output == "Not posted."
    assert tools.calls == []
    told = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert json.loads(told["content"]) == {"approved": False, "note": "Not today."}


def test_a_question_is_asked_answered_and_its_answer_reaches_the_model(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    question = {
        "kind": "choice",
        "prompt": "Which channel?",
        "options": [{"id": "c1", "label": "General"}, {"id": "c2", "label": "Random"}],
        "allow_custom": True,
    }
    fake.script(
        MESSAGES,
        tool_use(("request_input", question)),
        tool_use(("chat__thread_replies", {"channel": "C1", "ts": "1"})),
        Scripted(body=anthropic_text("Done.")),
    )
    started = run("[chat/thread_replies]")
    [listed] = service.list_interactions(PLAYBOOK).items
    assert listed["question"]["kind"] == "choice"
    assert started.waiting is not None and started.waiting["for"] == "input"

    with pytest.raises(Problem) as refused:
        answer(service, started.run_id, {"selected": ["c1"], "custom": "Both"})
    assert refused.value.reason == "invalid_input"
    assert service.list_interactions(PLAYBOOK).items != ()

    answer(service, started.run_id, {"selected": ["c2"]})

    assert service.get_run(PLAYBOOK, started.run_id).output == "Done."
    result = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert json.loads(result["content"])["answer"] == {"selected": ["c2"]}
    assert tools.metas[-1]["parley/interaction_response"]["answer"] == {"selected": ["c2"]}


def test_an_invalid_question_is_a_tool_error_not_a_request(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("request_input", {"kind": "choice", "prompt": "Which?", "options": []})),
        Scripted(body=anthropic_text("Gave up.")),
    )
    done = run("[chat/thread_replies]")
    assert done.status == "succeeded"
    told = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert told["is_error"] is True and "options" in told["content"]


def test_a_resumed_step_taken_up_twice_sends_the_frozen_call_once(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any, waits: AgentWaits
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__post_message", {"channel": "C1", "text": "hi"})),
        Scripted(body=anthropic_text("Posted.")),
    )
    started = run("[chat/post_message]", ASK + APPROVE_POST)
    answer(service, started.run_id, {"approved": True})
    reasoning = service.kind("reasoning")
    assert isinstance(reasoning, Reasoning)

    again = reasoning.take_up(RunKey(PLAYBOOK.org, PLAYBOOK.playbook, started.run_id), resume=True)

    assert again == ("unchanged", None)
    assert [name for name, _ in tools.calls] == ["post_message"]
    assert service.get_run(PLAYBOOK, started.run_id).status == "succeeded"
    assert list(waits.ended.values()) == [{"ending": "answered"}]


def test_an_approval_nobody_answers_is_told_to_the_model_and_nothing_is_sent(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any, manual_clock: ManualClock
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__post_message", {"channel": "C1", "text": "hi"})),
        Scripted(body=anthropic_text("Nobody approved.")),
    )
    started = run("[chat/post_message]", ASK + APPROVE_POST)
    manual_clock.advance(2 * 24 * 3600 + 1)

    assert service.expire_request(RunKey(PLAYBOOK.org, PLAYBOOK.playbook, started.run_id)) == "expired"

    done = service.get_run(PLAYBOOK, started.run_id)
    assert (done.status, done.output) == ("succeeded", "Nobody approved.")
    assert tools.calls == []
    told = json.loads(fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]["content"])
    assert told["approved"] is False and "Nobody answered" in told["note"]
    types = [event["type"] for event in history(service, started.run_id)]
    assert types == ["approval_requested", "request_expired", "run_succeeded"]


def test_arguments_the_tool_refuses_are_a_failed_call_and_no_request(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__post_message", {"channel": 7})),
        Scripted(body=anthropic_text("Could not post.")),
    )

    done = run("[chat/post_message]", ASK + APPROVE_POST)

    assert done.status == "succeeded"
    assert service.list_interactions(PLAYBOOK).items == ()
    [failed] = [event for event in history(service, done.run_id) if event["type"] == "tool_call_failed"]
    assert failed["data"]["because"] == "arguments_refused"
    told = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert told["is_error"] is True and "input schema" in told["content"]
    assert tools.calls == []


def test_the_model_is_refused_a_twenty_first_request(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, waits: AgentWaits
) -> None:
    steps = [tool_use(("request_input", {"kind": "text", "prompt": f"Question {n}?"})) for n in range(21)]
    fake.script(MESSAGES, *steps, Scripted(body=anthropic_text("Asked enough.")))
    started = run("[chat/thread_replies]")
    for number in range(20):
        answer(service, started.run_id, f"answer {number}")

    done = service.get_run(PLAYBOOK, started.run_id)
    assert (done.status, done.output) == ("succeeded", "Asked enough.")
    told = fake.requests_to("/v1/messages")[21].body["messages"][-1]["content"][0]
    assert told["is_error"] is True and "20 times" in told["content"]
    # Each request waited in an execution of its own, every one told its ending (one transition each).
    key = RunKey(PLAYBOOK.org, PLAYBOOK.playbook, started.run_id)
    assert waits.names == [key.wait_execution_name(number) for number in range(1, 21)]
    assert list(waits.ended.values()) == [{"ending": "answered"}] * 20


def test_an_ask_to_that_renders_a_control_character_is_unworkable_and_asks_nobody(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("request_input", {"kind": "text", "prompt": "Which channel?"})),
        Scripted(body=anthropic_text("Never read.")),
    )
    with pytest.raises(Problem) as refused:
        run("[chat/thread_replies]", 'ask: { to: "owner\\u0007@example.com", expires: P2D }\n')
    assert (refused.value.reason, refused.value.kind) == ("conflict", "unworkable")
    assert "U+0007" in refused.value.detail
    assert service.list_interactions(PLAYBOOK).items == ()


# --- what the store keeps of a waiting and an ended run (issue 26's follow-up: the items' sizes) ------


def _item(dynamodb: tuple[Any, str], sk: str) -> dict[str, Any]:
    client, table = dynamodb
    key = {"pk": {"S": "PB#acme#campaigns"}, "sk": {"S": sk}}
    found: dict[str, Any] = client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    return found


def _put(dynamodb: tuple[Any, str], item: dict[str, Any]) -> None:
    client, table = dynamodb
    client.put_item(TableName=table, Item=item)


def test_a_run_asked_by_the_previous_version_is_taken_up_and_its_record_kept_on_its_ending(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, dynamodb: tuple[Any, str]
) -> None:
    from parley.runs.packed import unpack

    fake.script(MESSAGES, tool_use(("request_input", {"kind": "text", "prompt": "Which?"})))
    fake.script(MESSAGES, Scripted(body=anthropic_text("Done.")))
    started = run("[]")
    work = _item(dynamodb, f"WORK#{started.run_id}")
    assert "state" not in work and "state_ref" not in work
    state = json.loads(unpack(work.pop("state_z")["S"]))
    assert state["requests"] == 1
    # As the previous version kept it: the state as JSON text.
    _put(dynamodb, {**work, "state": {"S": json.dumps(state)}})

    answer(service, started.run_id, "#general")

    done = service.get_run(PLAYBOOK, started.run_id)
    assert (done.status, done.output) == ("succeeded", "Done.")
    assert "#general" in json.dumps(fake.requests_to("/v1/messages")[-1].body["messages"][-1])
    assert done.record is not None and done.record["output_format"] == "text"
    # The record is on the run's ending event, not on the run (nor in its list entry), and the history
    # shows the event as it always did.
    item = _item(dynamodb, f"RUN#{started.run_id}")
    assert "record" not in item and "record_ref" not in item
    holder = _item(dynamodb, f"EVT#{item['record_event']['S']}")
    assert holder["type"]["S"] == "run_succeeded"
    assert json.loads(unpack(holder["record_z"]["S"])) == done.record
    last = history(service, started.run_id)[-1]
    assert last["type"] == "run_succeeded" and "record" not in json.dumps(last)
    [listed] = [r for r in service.list_runs(PLAYBOOK).items if r["run_id"] == started.run_id]
    assert "record" not in listed
    without = service.store.get_run(PLAYBOOK, started.run_id, record=False)
    assert without is not None and without.record is None

    # A run ended by the previous version holds its record itself: read as before.
    del item["record_event"]
    _put(dynamodb, {**item, "record": {"S": json.dumps(done.record)}})
    assert service.get_run(PLAYBOOK, started.run_id) == done
