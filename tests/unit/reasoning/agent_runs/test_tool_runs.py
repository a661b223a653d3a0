"""Reasoning runs that call tools (``reasoning-format.md``, "Tools"), in process: a real MCP server on
127.0.0.1 (``tests/mcp_servers.py``) and a fake provider speaking the Anthropic Messages API whose steps
each test scripts. Calls are counted in the tool server's own log of calls."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from fake_providers import MESSAGES, FakeProviders, Scripted, anthropic_text
from fake_providers import anthropic_tool_steps as tool_use

from parley.clock import ManualClock
from parley.config import CatalogEntry, parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.errors import Problem
from parley.ports.runtime import Runtime
from parley.runs.kinds import check_source
from parley.runs.model import Run
from parley.runs.service import RunService, run_service

PLAYBOOK = PlaybookRef("acme", "campaigns")
KEY = "sk-ant-tools-key-42"


def function(tools: str, extra: str = "") -> str:
    return f"""---
model: anthropic/claude-sonnet-4-5
tools: {tools}
{extra}---
{{% system %}}Use the tools to answer.{{% endsystem %}}
Question: {{{{ input.question }}}}
"""


@pytest.fixture
def service(
    dynamodb: tuple[Any, str], manual_clock: ManualClock, fake: FakeProviders, tools: Any
) -> RunService:
    client, table = dynamodb
    operator = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - {{ name: chat, url: "{tools.url}", orgs: [acme] }}
  - {{ name: narrow, url: "{tools.url}", orgs: [acme], allowed: [thread_replies] }}
  - name: guarded
    url: "{tools.url}"
    orgs: [acme]
    approve: [{{ tool: post_message, confirmation: "Post {{{{ arguments.text }}}}?" }}]
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
    )
    return run_service(runtime)


@pytest.fixture
def run(service: RunService) -> Callable[..., Run]:
    saved: set[str] = set()

    def running(
        tools: str, extra: str = "", run_id: str | None = None, question: str = "What is new?"
    ) -> Run:
        source = function(tools, extra)
        name = "fn-" + uuid.uuid5(uuid.NAMESPACE_URL, source).hex[:12]
        if name not in saved:
            service.runtime.definition_service().create_definition(PLAYBOOK, "reasoning", name, source)
            saved.add(name)
        return service.run_definition(
            PLAYBOOK, "reasoning", name, input_value={"question": question}, run_id=run_id, started_by="dev"
        )

    return running


def rejection(call: Callable[[], Any]) -> Problem:
    with pytest.raises(Problem) as raised:
        call()
    return raised.value


def history(service: RunService, run_id: str) -> list[dict[str, Any]]:
    return list(service.get_run_history(PLAYBOOK, run_id, limit=100).items)


def test_the_model_calls_a_tool_reads_its_result_and_answers(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__thread_replies", {"channel": "C1", "ts": "1.0"})),
        Scripted(body=anthropic_text("Two replies came in.")),
    )

    done = run("[chat/thread_replies]")

    assert done.output == "Two replies came in."
    assert [name for name, _ in tools.calls] == ["thread_replies"]
    first, second = fake.requests_to("/v1/messages")
    assert [tool["name"] for tool in first.body["tools"]] == ["chat__thread_replies"]
    result = second.body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert "messages" in json.dumps(result)
    kinds = [event["type"] for event in history(service, done.run_id)]
    assert kinds == ["tool_call_started", "tool_call_answered", "run_succeeded"]
    started = history(service, done.run_id)[0]["data"]
    assert (started["server"], started["tool"], started["read_only"], started["number"]) == (
        "chat",
        "thread_replies",
        True,
        1,
    )
    record = service.get_run(PLAYBOOK, done.run_id).record
    assert record is not None and record["usage"]["input"]["uncached"] == 20  # two steps of 10


def test_every_tool_the_server_allows_and_the_run_id_in_meta(
    run: Callable[..., Run], fake: FakeProviders, tools: Any
) -> None:
    fake.script(MESSAGES, Scripted(body=anthropic_text("Nothing to call.")))

    run("[narrow/*]")

    offered = [tool["name"] for tool in fake.requests_to("/v1/messages")[0].body["tools"]]
    assert offered == ["narrow__thread_replies"]


def test_a_tool_the_server_does_not_list_ends_the_run_before_the_model(
    run: Callable[..., Run], fake: FakeProviders
) -> None:
    problem = rejection(lambda: run("[chat/no_such_tool]"))

    assert (problem.reason, problem.kind, problem.because) == (
        "unavailable",
        "tool_not_offered",
        "tool_not_listed",
    )
    assert fake.requests_to("/v1/messages") == []


def test_a_tool_outside_allowed_and_an_unconfigured_server(
    run: Callable[..., Run], fake: FakeProviders
) -> None:
    assert rejection(lambda: run("[narrow/post_message]")).because == "tool_not_allowed"
    assert rejection(lambda: run("[elsewhere/thing]")).because == "tool_server_not_configured"
    assert fake.requests_to("/v1/messages") == []


def test_a_tool_error_reaches_the_model_which_may_recover(
    run: Callable[..., Run], fake: FakeProviders, tools: Any
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__read_fails", {"reason": "disk"})),
        Scripted(body=anthropic_text("The read failed; I answer without it.")),
    )

    done = run("[chat/read_fails]")

    assert done.status == "succeeded"
    result = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert result.get("is_error") is True


def test_the_third_identical_call_is_refused_and_not_sent(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    same = ("chat__thread_replies", {"channel": "C1", "ts": "1.0"})
    reordered = ("chat__thread_replies", {"ts": "1.0", "channel": "C1"})
    fake.script(
        MESSAGES, tool_use(same), tool_use(reordered), tool_use(same), Scripted(body=anthropic_text("Done."))
    )

    done = run("[chat/thread_replies]")
    assert done.output == "Done."

    assert len(tools.calls) == 2
    # Under the manual clock every event falls in one millisecond: they still list as they happened.
    kinds = [event["type"] for event in history(service, done.run_id)]
    assert kinds == ["tool_call_started", "tool_call_answered"] * 2 + ["run_succeeded"]
    refused = fake.requests_to("/v1/messages")[3].body["messages"][-1]["content"][0]
    assert refused["is_error"] is True
    assert "third call" in json.dumps(refused)


def test_a_model_that_keeps_calling_in_the_last_step_ends_with_no_answer(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    calls = [tool_use(("chat__thread_replies", {"channel": "C1", "ts": str(n)})) for n in range(26)]
    fake.script(MESSAGES, *calls)
    run_id = str(uuid.uuid4())

    problem = rejection(lambda: run("[chat/thread_replies]", run_id=run_id))

    assert (problem.kind, problem.because) == ("tools_unfinished", "no_answer")
    assert len(tools.calls) == 25
    last = fake.requests_to("/v1/messages")[-1].body
    assert "tools" not in last
    assert "TOOL-RESULTS-" in json.dumps(last["messages"])
    again = rejection(lambda: run("[chat/thread_replies]", run_id=run_id))
    assert (again.reason, again.kind, again.because) == ("conflict", "tools_called", "only_read")


def test_a_writing_tool_that_fails_five_times_is_effect_unknown(
    run: Callable[..., Run], fake: FakeProviders, tools: Any
) -> None:
    tools.answer_status("post_message", 500, {})
    fake.script(
        MESSAGES, *[tool_use(("chat__post_message", {"channel": "C1", "text": f"hi {n}"})) for n in range(5)]
    )

    problem = rejection(lambda: run("[chat/post_message]"))

    assert (problem.reason, problem.kind, problem.because) == (
        "effect_unknown",
        "effect_unknown",
        "server_failed",
    )
    assert "chat/post_message" in problem.detail


def test_arguments_over_16_kib_are_refused(run: Callable[..., Run], fake: FakeProviders, tools: Any) -> None:
    fake.script(
        MESSAGES,
        tool_use(("chat__json_text", {"value": "x" * 17_000})),
        Scripted(body=anthropic_text("Fine.")),
    )

    assert run("[chat/json_text]").output == "Fine."
    assert tools.calls == []
    refused = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert "16 KiB" in json.dumps(refused)


def test_a_started_run_of_a_function_with_tools_does_not_run_again(
    service: RunService, run: Callable[..., Run], fake: FakeProviders
) -> None:
    fake.script(MESSAGES, Scripted(body=anthropic_text("Done.")))
    run_id = str(uuid.uuid4())
    first = run("[chat/thread_replies]", run_id=run_id)

    assert first.status == "succeeded"
    assert run("[chat/thread_replies]", run_id=run_id).output == "Done."
    assert len(fake.requests_to("/v1/messages")) == 1


def test_a_429_asking_for_at_most_10_seconds_is_waited_out(
    run: Callable[..., Run], service: RunService, fake: FakeProviders, tools: Any
) -> None:
    tools.answer_status("thread_replies", 429, {"Retry-After": "1"}, times=1)
    fake.script(
        MESSAGES,
        tool_use(("chat__thread_replies", {"channel": "C1", "ts": "1.0"})),
        Scripted(body=anthropic_text("Read after the wait.")),
    )

    done = run("[chat/thread_replies]")

    assert done.output == "Read after the wait."
    assert [name for name, _ in tools.calls] == ["thread_replies"]
    kinds = [event["type"] for event in history(service, done.run_id)]
    assert kinds == ["tool_call_started", "tool_call_answered", "run_succeeded"]


def test_a_slow_call_past_its_bound_is_a_failed_call_the_model_is_told_of(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    from parley.ports.tools import Bounds
    from parley.tools.client import McpToolClient

    service.runtime.tool_client = McpToolClient(Bounds(respond_seconds=1))
    fake.script(
        MESSAGES, tool_use(("chat__slow", {"seconds": 3})), Scripted(body=anthropic_text("It was too slow."))
    )

    done = run("[chat/slow]")

    assert done.output == "It was too slow."
    failed = [e for e in history(service, done.run_id) if e["type"] == "tool_call_failed"]
    assert [event["data"]["because"] for event in failed] == ["timed_out"]
    told = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert told["is_error"] is True


def test_a_large_result_is_cut_to_the_room_of_its_step(
    service: RunService, run: Callable[..., Run], fake: FakeProviders
) -> None:
    models = replace(
        service.runtime.operator.models,
        catalog=(CatalogEntry(id="anthropic/claude-sonnet-4-5", context_window=3000, max_tokens=1000),),
    )
    service.runtime.operator = replace(service.runtime.operator, models=models)
    fake.script(
        MESSAGES,
        tool_use(("chat__repeat", {"text": "abc ", "times": 15_000})),  # 60,000 bytes: kept in the item
        Scripted(body=anthropic_text("A long text.")),
    )

    done = run("[chat/repeat]")

    answered = [e for e in history(service, done.run_id) if e["type"] == "tool_call_answered"]
    (event,) = answered
    read = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    shown = json.dumps(read)
    assert "left out" in shown
    assert event["data"]["shown_bytes"] < 30_000
    assert len(shown) < 30_000


def test_once_the_budget_would_not_cover_another_step_the_last_is_made_without_tools(
    service: RunService, run: Callable[..., Run], fake: FakeProviders, tools: Any
) -> None:
    models = replace(service.runtime.operator.models, reasoning_max_input_tokens=25)
    service.runtime.operator = replace(service.runtime.operator, models=models)
    fake.script(
        MESSAGES,
        tool_use(("chat__thread_replies", {"channel": "C1", "ts": "1.0"})),  # 10 input tokens of 25
        Scripted(body=anthropic_text("Answered from what I have.")),
    )

    done = run("[chat/thread_replies]")

    assert done.output == "Answered from what I have."
    last = fake.requests_to("/v1/messages")[-1].body
    assert "tools" not in last
    assert "TOOL-RESULTS-" in json.dumps(last["messages"])


def test_a_run_that_called_a_writing_tool_and_lost_its_work_ends_effect_unknown(
    service: RunService, run: Callable[..., Run], fake: FakeProviders, scheduler: Any, tools: Any
) -> None:
    from datetime import timedelta

    from parley.executions.entry import build_timer_handler

    service.runtime.scheduler = scheduler
    scheduler.handler = build_timer_handler(service.runtime)
    started_at = service.runtime.clock.now()
    # The reason function is cut off after its call was recorded and sent: the model never answers again.
    fake.script(
        MESSAGES,
        tool_use(("chat__post_message", {"channel": "C1", "text": "hi"})),
        Scripted(status=200, body=anthropic_text("late"), delay=0),
    )
    from parley.reasoning.agent_runs import loop

    original = loop.ToolLoop._model
    steps: list[int] = []

    def cut_off(self: Any, request: Any) -> Any:
        steps.append(1)
        if len(steps) == 2:
            raise SystemExit("the function's time ran out")
        return original(self, request)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop.ToolLoop, "_model", cut_off)
        with pytest.raises(SystemExit):
            run("[chat/post_message]", run_id=(run_id := str(uuid.uuid4())))

    assert [name for name, _ in tools.calls] == ["post_message"]
    assert service.get_run(PLAYBOOK, run_id).status == "started"
    (fired,) = scheduler.fire_due(started_at + timedelta(minutes=11))
    assert fired["outcome"] == "rejected"
    ended = service.get_run(PLAYBOOK, run_id)
    assert ended.rejection is not None
    assert (ended.rejection.reason, ended.rejection.kind, ended.rejection.because) == (
        "conflict",
        "effect_unknown",
        "run_bound",
    )
    again = rejection(lambda: run("[chat/post_message]", run_id=run_id))
    assert (again.kind, again.because) == ("tools_called", None)


ASK = "ask: { to: '{{ input.question }}', expires: P2D, progress: true }\n"


def test_a_tool_the_operator_requires_approval_for_needs_ask(
    run: Callable[..., Run], fake: FakeProviders
) -> None:
    problem = rejection(lambda: run("[guarded/post_message]"))

    assert (problem.reason, problem.kind) == ("conflict", "unworkable")
    assert "guarded/post_message" in problem.detail
    assert fake.requests_to("/v1/messages") == []


def test_report_progress_records_one_activity_and_a_bad_message_is_a_tool_error(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    fake.script(
        MESSAGES,
        tool_use(("report_progress", {"message": "Reading the thread."})),
        tool_use(("report_progress", {"message": ""}), ("report_progress", {"message": "Almost done."})),
        Scripted(body=anthropic_text("Done.")),
    )

    done = run("[chat/thread_replies]", ASK)

    offered = [tool["name"] for tool in fake.requests_to("/v1/messages")[0].body["tools"]]
    assert offered == ["chat__thread_replies", "request_input", "report_progress"]
    activities = [e["data"] for e in history(service, done.run_id) if e["type"] == "activity_updated"]
    assert [a["message"] for a in activities] == ["Reading the thread.", "Almost done."]
    assert {a["activity_id"] for a in activities} == {f"activity-{done.run_id}"}
    refused = fake.requests_to("/v1/messages")[2].body["messages"][-1]["content"][0]
    assert refused["is_error"] is True


def test_parley_reports_a_silent_model_call_from_facts(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    fake.script(MESSAGES, Scripted(body=anthropic_text("Slow answer."), delay=3.6))

    done = run("[chat/thread_replies]", ASK)

    activities = [e["data"] for e in history(service, done.run_id) if e["type"] == "activity_updated"]
    assert [a["by"] for a in activities] == ["parley"]
    assert "anthropic/claude-sonnet-4-5" in activities[0]["message"]
