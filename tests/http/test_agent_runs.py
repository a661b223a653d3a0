"""Agent runs through ``parley serve --clock manual`` (``agent-runs.md``): a reasoning run that asks a
person and waits on its execution's task token (the state machine ``cdk deploy`` ships, run by moto's
executor), taken up again by the reason function after an answer, an expiry or a cancel. A fake
provider scripts the model's steps; a real MCP server serves the tools (one asks, one previews)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from fake_providers import MESSAGES, FakeProviders, Scripted, anthropic_text
from fake_providers import anthropic_tool_steps as tool_use
from mcp_servers import running_tool_server
from tool_serving import serving_with

pytestmark = pytest.mark.http

BASE = "/v1/orgs/acme/playbooks/campaigns"
TWO_DAYS = 2 * 24 * 3600


def function(tools: str, extra: str = "") -> str:
    return f"""---
model: anthropic/claude-sonnet-4-5
tools: {tools}
ask: {{ to: '{{{{ input.owner }}}}', expires: P3D }}
{extra}---
Do this: {{{{ input.task }}}}
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeProviders, Any]]:
    tmp = tmp_path_factory.mktemp("serve-agent-runs")
    with ExitStack() as stack:
        fake = stack.enter_context(FakeProviders())
        tools = stack.enter_context(running_tool_server())
        operator = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - {{ name: chat, url: "{tools.url}", orgs: [acme] }}
models:
  allowed: [anthropic/*]
"""
        with pytest.MonkeyPatch.context() as env:
            env.setenv("ANTHROPIC_API_KEY", "sk-ant-agent-runs")
            env.setenv("ANTHROPIC_BASE_URL", fake.url)
            url = stack.enter_context(serving_with(tmp, operator))
        yield url, fake, tools


@pytest.fixture
def http(setup: tuple[str, FakeProviders, Any]) -> Iterator[httpx.Client]:
    url, fake, tools = setup
    fake.reset()
    tools.reset()
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer dev-token"}, timeout=60) as client:
        yield client


def start(http: httpx.Client, source: str, task: str = "post hi") -> dict[str, Any]:
    name = "agent-" + uuid.uuid4().hex[:10]
    saved = http.post(f"{BASE}/definitions/reasoning", json={"name": name, "source": source})
    assert saved.status_code == 201, saved.text
    reply = http.post(
        f"{BASE}/definitions/reasoning/{name}/run", json={"input": {"owner": "maria", "task": task}}
    )
    assert reply.status_code == 200, reply.text
    run: dict[str, Any] = reply.json()
    return run


def advance(http: httpx.Client, seconds: float) -> None:
    assert http.post("/_local/clock/advance", json={"seconds": seconds}).status_code == 200


def listed(http: httpx.Client, run_id: str) -> dict[str, Any] | None:
    found = [
        item for item in http.get(f"{BASE}/interactions").json()["interactions"] if item["run_id"] == run_id
    ]
    return found[0] if found else None


def history(http: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = http.get(f"{BASE}/runs/{run_id}/history").json()["events"]
    return events


def answer(http: httpx.Client, run_id: str, value: Any) -> httpx.Response:
    return http.post(f"{BASE}/runs/{run_id}/answer", json={"answer": value})


def test_a_question_answered_after_two_days_goes_on_in_a_new_invocation(
    http: httpx.Client, setup: tuple[str, FakeProviders, Any]
) -> None:
    _, fake, tools = setup
    fake.script(
        MESSAGES,
        tool_use(("request_input", {"kind": "text", "prompt": "Which channel?"})),
        tool_use(("chat__thread_replies", {"channel": "C1", "ts": "1.0"})),
        Scripted(body=anthropic_text("Read C1.")),
    )
    run = start(http, function("[chat/thread_replies]"))
    assert run["status"] == "started"
    assert run["waiting"]["for"] == "input"
    request = listed(http, run["run_id"])
    assert request is not None
    assert (request["type"], request["to"], request["message"]) == ("reasoning", "maria", "Which channel?")
    assert request["question"]["kind"] == "text" and request["standing"] == "in_inbox"

    advance(http, TWO_DAYS)
    assert http.get(f"{BASE}/runs/{run['run_id']}").json()["status"] == "started"
    refused = answer(http, run["run_id"], "   ")
    assert refused.status_code == 422 and refused.json()["errors"][0]["pointer"] == "/answer"
    assert answer(http, run["run_id"], "C1").status_code == 200

    done = http.get(f"{BASE}/runs/{run['run_id']}").json()
    assert (done["status"], done.get("output")) == ("succeeded", "Read C1."), (
        done,
        history(http, run["run_id"]),
    )
    assert "waiting" not in done
    assert tools.metas[-1]["parley/interaction_response"]["answer"] == "C1"
    types = [event["type"] for event in history(http, run["run_id"])]
    assert types == [
        "input_requested",
        "request_answered",
        "tool_call_started",
        "tool_call_answered",
        "run_succeeded",
    ]
    again = answer(http, run["run_id"], "C2")
    assert again.status_code == 409


def test_an_approval_refused_sends_nothing_and_one_approved_sends_the_frozen_call(
    http: httpx.Client, setup: tuple[str, FakeProviders, Any]
) -> None:
    _, fake, tools = setup
    approve = "approve: [{ tool: chat/post_message, preview: chat/preview_post }]\n"
    fake.script(
        MESSAGES,
        tool_use(
            ("chat__post_message", {"channel": "C1", "text": "first"}),
            ("chat__post_message", {"channel": "C2", "text": "second"}),
        ),
        Scripted(body=anthropic_text("One posted.")),
    )
    run = start(http, function("[chat/post_message]", approve))
    assert run["waiting"]["for"] == "approval"
    first = listed(http, run["run_id"])
    assert first is not None
    assert first["approval"] == {
        "server": "chat",
        "tool": "post_message",
        "arguments": {"channel": "C1", "text": "first"},
    }
    assert first["message"].startswith('Post "first" to C1?')

    assert answer(http, run["run_id"], {"approved": False, "note": "Not that one."}).status_code == 200
    second = listed(http, run["run_id"])
    assert second is not None and second["approval"]["arguments"]["text"] == "second"
    assert answer(http, run["run_id"], {"approved": True}).status_code == 200

    done = http.get(f"{BASE}/runs/{run['run_id']}").json()
    assert done["output"] == "One posted."
    assert [(name, args["text"]) for name, args in tools.calls if name == "post_message"] == [
        ("post_message", "second")
    ]
    results = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"]
    assert json.loads(results[0]["content"]) == {"approved": False, "note": "Not that one."}
    assert "preview_post" in [name for name, _ in tools.calls]


def test_a_question_that_expires_is_told_to_the_model_and_the_run_goes_on(
    http: httpx.Client, setup: tuple[str, FakeProviders, Any]
) -> None:
    _, fake, _ = setup
    fake.script(
        MESSAGES,
        tool_use(("request_input", {"kind": "text", "prompt": "Anyone?"})),
        Scripted(body=anthropic_text("Nobody answered; went on.")),
    )
    run = start(http, function("[chat/thread_replies]"))

    advance(http, 3 * 24 * 3600 + 1)

    done = http.get(f"{BASE}/runs/{run['run_id']}").json()
    assert (done["status"], done["output"]) == ("succeeded", "Nobody answered; went on.")
    types = [event["type"] for event in history(http, run["run_id"])]
    assert types == ["input_requested", "request_expired", "run_succeeded"]
    told = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]["content"]
    assert "Nobody answered" in told
    assert answer(http, run["run_id"], "late").status_code == 409


def test_a_cancel_while_waiting_ends_the_run_and_empties_the_inbox(
    http: httpx.Client, setup: tuple[str, FakeProviders, Any]
) -> None:
    _, fake, _ = setup
    fake.script(MESSAGES, tool_use(("request_input", {"kind": "text", "prompt": "Wait for me?"})))
    run = start(http, function("[chat/thread_replies]"))

    cancelled = http.post(f"{BASE}/runs/{run['run_id']}/cancel", json={"reason": "No longer needed."})

    assert cancelled.status_code == 200, cancelled.text
    assert http.get(f"{BASE}/runs/{run['run_id']}").json()["rejection"]["reason"] == "cancelled"
    assert listed(http, run["run_id"]) is None
    assert answer(http, run["run_id"], "too late").status_code == 409


def test_two_answers_racing_exactly_one_is_taken(
    http: httpx.Client, setup: tuple[str, FakeProviders, Any]
) -> None:
    _, fake, _ = setup
    fake.script(
        MESSAGES,
        tool_use(("request_input", {"kind": "text", "prompt": "Which?"})),
        Scripted(body=anthropic_text("Done once.")),
    )
    run = start(http, function("[chat/thread_replies]"))
    statuses: list[int] = []

    def send(value: str) -> None:
        statuses.append(answer(http, run["run_id"], value).status_code)

    racers = [threading.Thread(target=send, args=(value,)) for value in ("one", "two")]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()

    assert sorted(statuses) == [200, 409]
    assert http.get(f"{BASE}/runs/{run['run_id']}").json()["output"] == "Done once."
    assert len(fake.requests_to("/v1/messages")) == 2


def test_a_tool_that_asks_is_continued_with_the_answer_in_its_meta(
    http: httpx.Client, setup: tuple[str, FakeProviders, Any]
) -> None:
    _, fake, tools = setup
    fake.script(
        MESSAGES,
        tool_use(("chat__ask_place", {"query": "twice"})),
        Scripted(body=anthropic_text("Resolved.")),
    )
    run = start(http, function("[chat/ask_place]"))
    first = listed(http, run["run_id"])
    assert first is not None and first["question"]["kind"] == "choice"
    assert answer(http, run["run_id"], {"selected": [], "skipped": True}).status_code == 200
    second = listed(http, run["run_id"])
    assert second is not None and second["question"]["kind"] == "text"
    assert answer(http, run["run_id"], "Gate B").status_code == 200

    done = http.get(f"{BASE}/runs/{run['run_id']}").json()
    assert done["output"] == "Resolved."
    assert [name for name, _ in tools.calls] == ["ask_place", "resolve_place", "resolve_place"]
    result = fake.requests_to("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert "Resolved twice" in result["content"] and "Gate B" in result["content"]
    types = [event["type"] for event in history(http, run["run_id"])]
    assert types.count("input_requested") == 2 and types.count("request_answered") == 2
