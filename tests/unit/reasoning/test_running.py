"""Reasoning runs in process (``reasoning-format.md``, "How a run works", "How a run ends", "What a run
records"), against a fake provider speaking the Anthropic Messages and OpenAI Chat Completions APIs on
127.0.0.1: the page's example, JSON answers, each ending, aliases and allowed models, the record,
retrying under a run id, and no secret in any answer, record or event."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_providers import (
    CHAT_COMPLETIONS,
    MESSAGES,
    FakeProviders,
    Scripted,
    anthropic_error,
    anthropic_text,
    openai_error,
    openai_text,
)

from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.errors import Problem
from parley.executions.entry import build_timer_handler
from parley.ports.runtime import Runtime
from parley.ports.waiting import RunKey
from parley.runs.kinds import check_source
from parley.runs.model import Run
from parley.runs.service import RunService, run_service

PLAYBOOK = PlaybookRef("acme", "campaigns")
KEY = "sk-ant-secret-key-123456"

#: The page's example, with the model the tests' provider serves.
EXAMPLE = (
    (Path(__file__).resolve().parents[3] / "examples" / "definitions" / "reasoning" / "review-brief.md")
    .read_text(encoding="utf-8")
    .replace("model: demo/echo", "model: anthropic/claude-sonnet-4-5")
)

JSON_FUNCTION = """---
model: internal/llama
output:
  format: json
  schema:
    type: object
    additionalProperties: false
    required: [verdict, score]
    properties:
      verdict: { type: string, enum: [approve, revise] }
      score: { type: integer, minimum: 0, maximum: 10 }
---
Judge: {{ input.text }}
"""

SERIES_FUNCTION = """---
model: internal/llama
output:
  shape: series
---
Plot {{ input.what }}
"""

BRIEF = {"brief": "Launch in May.", "criteria": "Evidence for every claim."}


def operator_config(base_url: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
models:
  allowed: [anthropic/*, internal/*, fast]
  aliases:
    fast: anthropic/claude-haiku-4-5
    team/*: anthropic/claude-*
  gateways:
    - name: internal
      base_url: {base_url}/v1
      api_key: gw-secret-key-987
      structured_outputs: true
"""


@pytest.fixture
def service(dynamodb: tuple[Any, str], manual_clock: ManualClock, fake: FakeProviders) -> RunService:
    client, table = dynamodb
    runtime = Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(operator_config(fake.url), "test", environ={}),
        check_document=check_source,
        environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url},
        run_wait_seconds=5,
    )
    definitions = runtime.definition_service()
    definitions.create_definition(PLAYBOOK, "reasoning", "review-brief", EXAMPLE)
    definitions.create_definition(PLAYBOOK, "reasoning", "judge", JSON_FUNCTION)
    definitions.create_definition(PLAYBOOK, "reasoning", "plot", SERIES_FUNCTION)
    return run_service(runtime)


@pytest.fixture
def run(service: RunService) -> Callable[..., Run]:
    def running(name: str = "review-brief", input_value: Any = None, run_id: str | None = None) -> Run:
        value = BRIEF if input_value is None else input_value
        return service.run_definition(
            PLAYBOOK, "reasoning", name, input_value=value, run_id=run_id, started_by="dev"
        )

    return running


def rejection(call: Callable[[], Any]) -> Problem:
    with pytest.raises(Problem) as raised:
        call()
    return raised.value


def test_the_pages_example_runs_and_records_its_call(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    fake.script(
        MESSAGES, Scripted(body=anthropic_text("The brief lacks evidence.", model="claude-sonnet-4-5-x"))
    )

    done = run()

    assert done.status == "succeeded"
    assert done.output == "The brief lacks evidence."
    assert "record" not in done.as_json()
    sent = fake.requests_to("/v1/messages")[-1]
    assert sent.headers["x-api-key"] == KEY
    assert sent.body["model"] == "claude-sonnet-4-5"
    assert sent.body["max_tokens"] == 800
    assert sent.body["system"].startswith("Review the brief using the supplied criteria.")
    assert sent.body["messages"][0]["content"].strip().startswith("Brief: Launch in May.")
    shown = service.get_run(PLAYBOOK, done.run_id).as_json()
    record = shown["record"]
    assert record["model"] == {
        "requested": "anthropic/claude-sonnet-4-5",
        "resolved": "anthropic/claude-sonnet-4-5",
        "answered": "claude-sonnet-4-5-x",
    }
    assert record["settings"] == {"max_output_tokens": 800}
    assert record["output_format"] == "text"
    assert (record["finish_reason"], record["raw_finish_reason"]) == ("stop", "end_turn")
    assert record["usage"]["input"]["uncached"] == 10
    assert record["usage"]["output"]["text"] == 5
    assert record["response_id"] == "msg_fake"
    assert record["prompt"]["instructions"].startswith("Review the brief")
    assert record["prompt"]["truncated"] is False
    assert isinstance(record["duration_ms"], int)
    text = json.dumps(shown) + json.dumps(service.get_run_history(PLAYBOOK, done.run_id).items)
    assert KEY not in text


def test_a_json_answer_is_checked_and_becomes_the_output(
    run: Callable[..., Run], fake: FakeProviders
) -> None:
    fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text('{"verdict": "approve", "score": 8}')))

    done = run("judge", {"text": "fine"})

    assert done.output == {"verdict": "approve", "score": 8}
    sent = fake.requests_to("/v1/chat/completions")[-1]
    assert sent.headers["authorization"] == "Bearer gw-secret-key-987"
    assert sent.body["response_format"]["type"] == "json_schema"
    assert sent.body["model"] == "llama"


def test_an_answer_that_breaks_the_schema_is_unavailable_and_keeps_its_usage(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text('{"verdict": "ship", "score": 80}')))
    run_id = str(uuid.uuid4())

    problem = rejection(lambda: run("judge", {"text": "x"}, run_id))

    assert (problem.reason, problem.kind) == ("unavailable", "output_invalid")
    assert {entry.pointer for entry in problem.errors} == {"/output/verdict", "/output/score"}
    kept = service.get_run(PLAYBOOK, run_id)
    assert kept.status == "rejected"
    assert kept.record is not None and set(kept.record) == {"usage", "duration_ms"}
    # After unavailable, the same id and input run the definition again.
    fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text('{"verdict": "revise", "score": 3}')))
    assert run("judge", {"text": "x"}, run_id).output == {"verdict": "revise", "score": 3}


def test_a_shape_is_checked_with_its_rules(run: Callable[..., Run], fake: FakeProviders) -> None:
    points = {
        "title": None,
        "unit": None,
        "x_label": None,
        "y_label": None,
        "points": [{"x": 2, "y": 1}, {"x": 1, "y": 2}],
    }
    fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text(json.dumps(points))))

    problem = rejection(lambda: run("plot", {"what": "sign-ups"}))

    assert problem.kind == "output_invalid"
    sent = fake.requests_to("/v1/chat/completions")[-1]
    assert sent.body["response_format"]["json_schema"]["schema"]["required"]


def test_a_json_answer_cut_off_is_unworkable(run: Callable[..., Run], fake: FakeProviders) -> None:
    fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text('{"verdict": "appr', finish_reason="length")))

    problem = rejection(lambda: run("judge", {"text": "x"}))

    assert (problem.reason, problem.kind) == ("conflict", "unworkable")
    assert "max_output_tokens" in problem.detail


def test_a_text_answer_cut_off_succeeds_with_length(
    run: Callable[..., Run], service: RunService, fake: FakeProviders
) -> None:
    fake.script(MESSAGES, Scripted(body=anthropic_text("Partial", stop_reason="max_tokens")))

    done = run()

    record = service.get_run(PLAYBOOK, done.run_id).record
    assert record is not None and record["finish_reason"] == "length"


def test_a_refusal_is_invalid_input(run: Callable[..., Run], fake: FakeProviders) -> None:
    fake.script(MESSAGES, Scripted(body=anthropic_text("", stop_reason="refusal")))

    assert rejection(run).reason == "invalid_input"


@pytest.mark.parametrize(
    ("scripted", "reason", "words"),
    [
        (anthropic_error(401, "authentication_error", "invalid x-api-key"), "unavailable", "401"),
        (anthropic_error(400, "invalid_request_error", "model: not found"), "conflict", "400"),
        (
            anthropic_error(400, "invalid_request_error", "prompt is too long: 300000 tokens"),
            "conflict",
            "long",
        ),
    ],
)
def test_provider_failures_end_the_run(
    run: Callable[..., Run], fake: FakeProviders, scripted: Scripted, reason: str, words: str
) -> None:
    fake.script(MESSAGES, scripted)

    problem = rejection(run)

    assert problem.reason == reason
    assert words in problem.detail
    assert KEY not in problem.detail


def test_a_rate_limit_is_retried_within_the_bound(run: Callable[..., Run], fake: FakeProviders) -> None:
    fake.script(
        MESSAGES,
        anthropic_error(429, "rate_limit_error", "slow down", **{"retry-after": "0"}),
        Scripted(body=anthropic_text("Done")),
    )

    assert run().output == "Done"
    assert len(fake.requests_to("/v1/messages")) == 2


def test_a_gateway_failing_with_its_own_words_names_the_status(
    run: Callable[..., Run], fake: FakeProviders
) -> None:
    fake.script(CHAT_COMPLETIONS, openai_error(401, "bad key", kind="invalid_api_key"))

    problem = rejection(lambda: run("judge", {"text": "x"}))

    assert problem.reason == "unavailable"
    assert "gw-secret-key-987" not in problem.detail


def test_the_input_is_checked_before_anything_is_sent(run: Callable[..., Run], fake: FakeProviders) -> None:
    problem = rejection(lambda: run(input_value={"brief": "only"}))

    assert problem.reason == "invalid_input"
    assert [entry.pointer for entry in problem.errors] == ["/input"]
    assert "criteria" in problem.errors[0].detail
    assert fake.requests_to("/v1/messages") == []


def test_a_model_outside_allowed_is_not_offered(service: RunService, fake: FakeProviders) -> None:
    source = EXAMPLE.replace("anthropic/claude-sonnet-4-5", "openai/gpt-5")
    service.runtime.definition_service().create_definition(PLAYBOOK, "reasoning", "other-model", source)

    problem = rejection(
        lambda: service.run_definition(
            PLAYBOOK, "reasoning", "other-model", input_value=BRIEF, run_id=None, started_by="dev"
        )
    )

    assert (problem.reason, problem.kind, problem.because) == (
        "unavailable",
        "model_not_offered",
        "model_not_allowed",
    )
    assert fake.requests == []


def test_an_alias_resolves_and_is_recorded(service: RunService, fake: FakeProviders) -> None:
    source = EXAMPLE.replace("anthropic/claude-sonnet-4-5", "team/sonnet-4-5")
    service.runtime.definition_service().create_definition(PLAYBOOK, "reasoning", "aliased", source)

    done = service.run_definition(
        PLAYBOOK, "reasoning", "aliased", input_value=BRIEF, run_id=None, started_by="dev"
    )

    record = service.get_run(PLAYBOOK, done.run_id).record
    assert record is not None
    assert record["model"]["requested"] == "team/sonnet-4-5"
    assert record["model"]["resolved"] == "anthropic/claude-sonnet-4-5"
    assert fake.requests_to("/v1/messages")[-1].body["model"] == "claude-sonnet-4-5"


def test_a_retry_under_a_succeeded_run_id_does_not_call_again(
    run: Callable[..., Run], fake: FakeProviders
) -> None:
    run_id = str(uuid.uuid4())
    first = run(run_id=run_id)
    calls = len(fake.requests_to("/v1/messages"))

    again = run(run_id=run_id)

    assert again.output == first.output
    assert len(fake.requests_to("/v1/messages")) == calls
    assert rejection(lambda: run(input_value={**BRIEF, "brief": "other"}, run_id=run_id)).reason == "conflict"


def test_a_provider_not_configured_names_the_configured_ones(
    service: RunService, fake: FakeProviders
) -> None:
    service.runtime.environ = {}  # no Anthropic key: only the gateway is configured
    service.runtime.definition_service().create_definition(PLAYBOOK, "reasoning", "needs-anthropic", EXAMPLE)

    problem = rejection(
        lambda: service.run_definition(
            PLAYBOOK, "reasoning", "needs-anthropic", input_value=BRIEF, run_id=None, started_by="dev"
        )
    )

    assert (problem.reason, problem.kind, problem.because) == (
        "unavailable",
        "model_not_offered",
        "provider_not_configured",
    )
    assert "internal" in problem.detail
    assert "ANTHROPIC_API_KEY" not in problem.detail


class LostReasoner:
    """A reasoner whose invocation never does the work (a reason function cut off)."""

    def __init__(self) -> None:
        self.started: list[RunKey] = []

    def start(self, run: RunKey) -> None:
        self.started.append(run)


def test_a_run_whose_work_is_lost_ends_a_minute_after_its_bound(
    service: RunService, scheduler: Any, fake: FakeProviders
) -> None:
    reasoner = LostReasoner()
    service.runtime.reasoner = reasoner
    service.runtime.scheduler = scheduler
    service.runtime.run_wait_seconds = 0.05
    scheduler.handler = build_timer_handler(service.runtime)
    started_at = service.runtime.clock.now()

    waiting = service.run_definition(
        PLAYBOOK, "reasoning", "review-brief", input_value=BRIEF, run_id=None, started_by="dev"
    )

    assert waiting.status == "started"
    assert [key.run_id for key in reasoner.started] == [waiting.run_id]
    assert fake.requests_to("/v1/messages") == []
    # max_output_tokens 800: the bound is 10 minutes (longer than 60 s + 20 s), checked a minute after.
    assert scheduler.fire_due(started_at + timedelta(seconds=659)) == []
    (fired,) = scheduler.fire_due(started_at + timedelta(seconds=660))
    assert fired["outcome"] == "rejected"
    ended = service.get_run(PLAYBOOK, waiting.run_id)
    assert ended.rejection is not None
    assert (ended.rejection.reason, ended.rejection.because) == ("unavailable", "run_bound")


def test_the_backstop_leaves_a_run_that_ended(service: RunService, scheduler: Any) -> None:
    service.runtime.scheduler = scheduler
    scheduler.handler = build_timer_handler(service.runtime)
    started_at = service.runtime.clock.now()

    done = service.run_definition(
        PLAYBOOK, "reasoning", "review-brief", input_value=BRIEF, run_id=None, started_by="dev"
    )

    (fired,) = scheduler.fire_due(started_at + timedelta(minutes=12))
    assert fired["outcome"] == "unchanged"
    assert service.get_run(PLAYBOOK, done.run_id).status == "succeeded"


def test_a_run_at_work_may_be_cancelled_and_its_work_then_writes_nothing(
    service: RunService, fake: FakeProviders
) -> None:
    from parley.reasoning.running import Reasoning

    reasoner = LostReasoner()
    service.runtime.reasoner = reasoner
    service.runtime.run_wait_seconds = 0.05
    waiting = service.run_definition(
        PLAYBOOK, "reasoning", "review-brief", input_value=BRIEF, run_id=None, started_by="dev"
    )

    cancelled = service.cancel_run(PLAYBOOK, waiting.run_id, reason="Not needed now.", cancelled_by="dev")

    assert cancelled.rejection is not None and cancelled.rejection.reason == "cancelled"
    reasoning = service.kind("reasoning")
    assert isinstance(reasoning, Reasoning)
    assert reasoning.work(reasoner.started[0]) == "unchanged"
    assert fake.requests_to("/v1/messages") == []
    assert service.get_run(PLAYBOOK, waiting.run_id).status == "rejected"
    assert (
        rejection(
            lambda: service.cancel_run(PLAYBOOK, waiting.run_id, reason=None, cancelled_by="dev")
        ).reason
        == "conflict"
    )
