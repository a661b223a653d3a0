"""The Anthropic Messages adapter against the API's documented request and response shapes."""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from unit.models.providers.provider_doubles import (
    SCHEMA,
    Exchange,
    FakeClock,
    call,
    failure_of,
    model_request,
)

from parley.models.providers import ModelCallFailed, ProviderSettings, list_provider_models

KEY = "sk-ant-api03-secret-key-0123456789"
ANTHROPIC = ProviderSettings("anthropic", "anthropic", api_key=SecretStr(KEY))


def message(
    content: list[dict[str, Any]] | None = None, stop_reason: str = "end_turn", **usage: int
) -> dict[str, Any]:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content if content is not None else [{"type": "text", "text": "Hello!"}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage
        or {
            "input_tokens": 12,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 6,
        },
    }


def error(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> httpx.Response:
    body = {
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    return httpx.Response(status, json=body, headers=headers)


def test_a_text_answer_sends_the_documented_body_and_headers() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    request = model_request(
        "claude-sonnet-4-5", temperature=0.2, top_p=0.9, stop_sequences=("END",), max_output_tokens=800
    )

    answer = call(ANTHROPIC, request, exchange)

    sent = exchange.last
    assert str(sent.url) == "https://api.anthropic.com/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert exchange.body() == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 800,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Say hello."}],
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
    }
    assert answer.text == "Hello!"
    assert answer.finish_reason == "stop"
    assert answer.raw_finish_reason == "end_turn"
    assert answer.response_id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    assert answer.model_answered == "claude-sonnet-4-5-20250929"
    assert answer.warnings == ()
    assert not answer.refused
    assert answer.usage.as_record() == {
        "input": {"uncached": 12, "cache_read": 0, "cache_write": 0},
        "output": {"text": 6, "reasoning": None},
        "total": 18,
    }


def test_no_instructions_sends_no_system_and_a_seed_is_a_warning() -> None:
    exchange = Exchange()
    exchange.answer(body=message())

    answer = call(ANTHROPIC, model_request("claude-sonnet-4-5", instructions=None, seed=7), exchange)

    assert "system" not in exchange.body()
    assert "seed" not in exchange.body()
    assert answer.warnings == ("seed is not sent: Anthropic models take no seed",)


def test_a_base_url_and_an_auth_token_are_used() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    settings = ProviderSettings(
        "anthropic",
        "anthropic",
        base_url="https://proxy.example/anthropic/",
        headers={"Authorization": SecretStr("Bearer token-0123456789")},
    )

    call(settings, model_request("claude-sonnet-4-5"), exchange)

    assert str(exchange.last.url) == "https://proxy.example/anthropic/v1/messages"
    assert exchange.last.headers["authorization"] == "Bearer token-0123456789"
    assert "x-api-key" not in exchange.last.headers


def test_the_resolver_turns_a_reference_into_the_key_at_send_time() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    settings = ProviderSettings(
        "anthropic", "anthropic", api_key=SecretStr("{{resolve:secretsmanager:anthropic}}")
    )

    call(settings, model_request("claude-sonnet-4-5"), exchange, resolve=lambda value: KEY)

    assert exchange.last.headers["x-api-key"] == KEY


def test_a_json_answer_is_the_input_of_the_forced_answer_tool() -> None:
    exchange = Exchange()
    tool_use = {"type": "tool_use", "id": "toolu_01", "name": "answer", "input": {"verdict": "fine"}}
    exchange.answer(body=message([tool_use], stop_reason="tool_use"))

    answer = call(
        ANTHROPIC, model_request("claude-sonnet-4-5", output_format="json", output_schema=SCHEMA), exchange
    )

    body = exchange.body()
    assert body["tools"] == [
        {
            "name": "answer",
            "description": "Write your whole answer as this tool's input.",
            "input_schema": SCHEMA,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert json.loads(answer.text) == {"verdict": "fine"}
    assert answer.finish_reason == "stop"
    assert answer.raw_finish_reason == "tool_use"


def test_another_tool_than_the_answer_is_a_tool_call() -> None:
    exchange = Exchange()
    tool_use = {"type": "tool_use", "id": "toolu_01", "name": "search", "input": {}}
    exchange.answer(
        body=message([{"type": "text", "text": "Let me look."}, tool_use], stop_reason="tool_use")
    )

    answer = call(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)

    assert answer.finish_reason == "tool_calls"
    assert answer.text == "Let me look."


@pytest.mark.parametrize(
    ("stop_reason", "finish", "refused"),
    [
        ("end_turn", "stop", False),
        ("stop_sequence", "stop", False),
        ("max_tokens", "length", False),
        ("model_context_window_exceeded", "length", False),
        ("refusal", "content_filter", True),
        ("pause_turn", "other", False),
        ("something_new", "other", False),
    ],
)
def test_each_stop_reason_maps_to_a_finish_reason(stop_reason: str, finish: str, refused: bool) -> None:
    exchange = Exchange()
    exchange.answer(body=message(stop_reason=stop_reason))

    answer = call(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)

    assert (answer.finish_reason, answer.raw_finish_reason, answer.refused) == (finish, stop_reason, refused)


def test_usage_keeps_cache_reads_and_writes_and_unknowns_as_none() -> None:
    exchange = Exchange()
    exchange.answer(
        body=message(
            input_tokens=5, cache_read_input_tokens=2000, cache_creation_input_tokens=300, output_tokens=40
        )
    )
    answer = call(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)
    assert answer.usage.as_record() == {
        "input": {"uncached": 5, "cache_read": 2000, "cache_write": 300},
        "output": {"text": 40, "reasoning": None},
        "total": 2345,
    }

    exchange.answer(body={**message(), "usage": {"output_tokens": 3}})
    answer = call(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)
    assert answer.usage.as_record() == {
        "input": {"uncached": None, "cache_read": None, "cache_write": None},
        "output": {"text": 3, "reasoning": None},
        "total": 3,
    }


# --- reasoning ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("effort", "budget"),
    [("minimal", 1024), ("low", 1024), ("medium", 4096), ("high", 16384), ("xhigh", 32000)],
)
def test_an_effort_is_a_thinking_budget_on_older_models(effort: str, budget: int) -> None:
    exchange = Exchange()
    exchange.answer(body=message())

    call(ANTHROPIC, model_request("claude-sonnet-4-5", reasoning=effort, max_output_tokens=64000), exchange)

    assert exchange.body()["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert "output_config" not in exchange.body()


def test_the_budget_is_cut_below_max_tokens_or_left_out_when_there_is_no_room() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    answer = call(
        ANTHROPIC,
        model_request("claude-3-7-sonnet-20250219", reasoning="high", max_output_tokens=5000),
        exchange,
    )
    assert exchange.body()["thinking"] == {"type": "enabled", "budget_tokens": 4999}
    assert answer.warnings == (
        "the thinking budget for reasoning high is cut to 4999 tokens, below max_output_tokens",
    )

    exchange.answer(body=message())
    answer = call(
        ANTHROPIC, model_request("claude-sonnet-4-5", reasoning="low", max_output_tokens=800), exchange
    )
    assert "thinking" not in exchange.body()
    assert answer.warnings == (
        "reasoning is not sent: max_output_tokens 800 leaves no room for Anthropic's "
        "1024-token minimum thinking budget",
    )


def test_effort_none_sends_no_thinking() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    call(ANTHROPIC, model_request("claude-opus-4-7", reasoning="none", temperature=0.5), exchange)
    assert "thinking" not in exchange.body()
    assert "output_config" not in exchange.body()
    assert exchange.body()["temperature"] == 0.5


@pytest.mark.parametrize(
    ("model", "effort", "sent", "warned"),
    [
        ("claude-opus-4-7", "high", "high", False),
        ("claude-opus-4-7", "xhigh", "xhigh", False),
        ("claude-opus-4-6", "xhigh", "max", True),
        ("claude-sonnet-4-6", "minimal", "low", True),
        ("claude-opus-4-6@20260101", "medium", "medium", False),
    ],
)
def test_adaptive_models_take_the_effort_in_output_config(
    model: str, effort: str, sent: str, warned: bool
) -> None:
    exchange = Exchange()
    exchange.answer(body=message())

    answer = call(ANTHROPIC, model_request(model, reasoning=effort, max_output_tokens=16000), exchange)

    assert exchange.body()["thinking"] == {"type": "adaptive"}
    assert exchange.body()["output_config"] == {"effort": sent}
    assert bool(answer.warnings) is warned


def test_thinking_drops_temperature_and_top_p_with_warnings() -> None:
    exchange = Exchange()
    exchange.answer(body=message())

    answer = call(
        ANTHROPIC,
        model_request(
            "claude-sonnet-4-5", reasoning="medium", temperature=0.3, top_p=0.8, max_output_tokens=8000
        ),
        exchange,
    )

    assert "temperature" not in exchange.body()
    assert "top_p" not in exchange.body()
    assert answer.warnings == (
        "temperature is not sent: Anthropic models take none while they think",
        "top_p is not sent: Anthropic models take none while they think",
    )


def test_the_thinking_option_wins_over_the_effort_and_is_renamed() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    options = {"thinking": {"type": "enabled", "budgetTokens": 2000, "display": "summarized"}}

    answer = call(
        ANTHROPIC,
        model_request(
            "claude-sonnet-4-5", reasoning="high", provider_options=options, max_output_tokens=32000
        ),
        exchange,
    )

    assert exchange.body()["thinking"] == {"type": "enabled", "budget_tokens": 2000, "display": "summarized"}
    assert answer.warnings == (
        "the reasoning effort is not sent as a thinking budget: provider_options thinking sets it",
    )


def test_a_json_answer_is_written_without_thinking() -> None:
    exchange = Exchange()
    exchange.answer(
        body=message(
            [{"type": "tool_use", "id": "t", "name": "answer", "input": {"verdict": "ok"}}], "tool_use"
        )
    )

    answer = call(
        ANTHROPIC,
        model_request(
            "claude-sonnet-4-5",
            reasoning="high",
            output_format="json",
            output_schema=SCHEMA,
            max_output_tokens=32000,
        ),
        exchange,
    )

    assert "thinking" not in exchange.body()
    assert answer.warnings == (
        "thinking is not sent: Anthropic models cannot think while they write a JSON answer as a tool",
    )


# --- errors ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "kind", "status"),
    [
        (error(401, "authentication_error", "invalid x-api-key"), "credentials_rejected", 401),
        (
            error(403, "permission_error", "Your API key does not have permission"),
            "credentials_rejected",
            403,
        ),
        (error(404, "not_found_error", "model: claude-nope"), "rejected", 404),
        (error(400, "invalid_request_error", "temperature: range: 0..1"), "rejected", 400),
        (
            error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
            "too_long",
            400,
        ),
        (
            error(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."),
            "too_long",
            413,
        ),
    ],
)
def test_errors_that_are_not_retried(response: httpx.Response, kind: str, status: int) -> None:
    exchange = Exchange()
    exchange.answers.append(response)

    failure = failure_of(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)

    assert (failure.kind, failure.status, failure.provider) == (kind, status, "anthropic")
    assert len(exchange.requests) == 1
    assert failure.detail.startswith(f"anthropic answered HTTP {status}")


def test_a_rejection_quotes_the_provider_cut_to_300_characters() -> None:
    exchange = Exchange()
    exchange.answers.append(error(400, "invalid_request_error", "max_tokens: " + "x" * 500))

    failure = failure_of(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)

    quoted = failure.detail.split(': "', 1)[1].rstrip('"')
    assert quoted.startswith("max_tokens: xxx")
    assert len(quoted) == 300
    assert quoted.endswith("…")


def test_credentials_are_never_quoted() -> None:
    exchange = Exchange()
    exchange.answers.append(error(401, "authentication_error", f"invalid x-api-key {KEY}"))

    failure = failure_of(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)

    assert failure.detail == "anthropic answered HTTP 401: it rejected the credentials"


def test_overloaded_and_rate_limited_calls_are_retried_with_the_waits_asked() -> None:
    exchange = Exchange()
    clock = FakeClock()
    exchange.answers.append(error(529, "overloaded_error", "Overloaded"))
    exchange.answers.append(error(429, "rate_limit_error", "slow down", {"retry-after": "7"}))
    exchange.answer(body=message())

    answer = call(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange, clock)

    assert answer.text == "Hello!"
    assert clock.waits == [0.5, 7.0]
    assert len(exchange.requests) == 3


def test_a_rate_limit_that_outlasts_the_retries_says_the_seconds() -> None:
    exchange = Exchange()
    for _ in range(3):
        exchange.answers.append(error(429, "rate_limit_error", "slow down", {"retry-after": "3"}))

    failure = failure_of(ANTHROPIC, model_request("claude-sonnet-4-5"), exchange)

    assert (failure.kind, failure.status, failure.retry_after_seconds) == ("rate_limited", 429, 3.0)
    assert (
        failure.detail
        == "anthropic answered HTTP 429: it limits the rate of requests; it asks to wait 3 seconds"
    )
    assert len(exchange.requests) == 3


# --- on Vertex ---------------------------------------------------------------------------------------------


def test_vertex_anthropic_uses_raw_predict_with_a_bearer_token() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    settings = ProviderSettings(
        "vertex-anthropic", "vertex-anthropic", project="acme-ai", location="us-east5"
    )

    answer = call(
        settings, model_request("claude-sonnet-4-5@20250929"), exchange, google_token=lambda: "ya29.token"
    )

    assert str(exchange.last.url) == (
        "https://us-east5-aiplatform.googleapis.com/v1/projects/acme-ai/locations/us-east5"
        "/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
    )
    assert exchange.last.headers["authorization"] == "Bearer ya29.token"
    body = exchange.body()
    assert body["anthropic_version"] == "vertex-2023-10-16"
    assert "model" not in body
    assert body["messages"] == [{"role": "user", "content": "Say hello."}]
    assert answer.text == "Hello!"


def test_vertex_anthropic_on_the_global_location_uses_the_global_host() -> None:
    exchange = Exchange()
    exchange.answer(body=message())
    settings = ProviderSettings("vertex-anthropic", "vertex-anthropic", project="acme-ai", location="global")

    call(settings, model_request("claude-opus-4-7"), exchange, google_token=lambda: "ya29.token")

    assert str(exchange.last.url).startswith(
        "https://aiplatform.googleapis.com/v1/projects/acme-ai/locations/global/"
    )


def test_vertex_without_google_auth_is_unavailable_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.auth", None)
    settings = ProviderSettings("vertex-anthropic", "vertex-anthropic", project="acme-ai", location="global")

    failure = failure_of(settings, model_request("claude-opus-4-7"), Exchange())

    assert failure.kind == "unavailable"
    assert "google-auth" in failure.detail


# --- the list of models ------------------------------------------------------------------------------------


def test_the_list_of_models_reads_every_page() -> None:
    exchange = Exchange()
    exchange.answer(
        body={
            "data": [
                {
                    "type": "model",
                    "id": "claude-sonnet-4-5-20250929",
                    "display_name": "Claude Sonnet 4.5",
                    "created_at": "2025-09-29T00:00:00Z",
                }
            ],
            "has_more": True,
            "first_id": "claude-sonnet-4-5-20250929",
            "last_id": "claude-sonnet-4-5-20250929",
        }
    )
    exchange.answer(
        body={
            "data": [
                {
                    "type": "model",
                    "id": "claude-haiku-4-5",
                    "display_name": "Claude Haiku 4.5",
                    "created_at": "x",
                }
            ],
            "has_more": False,
            "first_id": "claude-haiku-4-5",
            "last_id": "claude-haiku-4-5",
        }
    )

    with exchange.client() as http:
        listed = list_provider_models(ANTHROPIC, http=http)

    assert [str(request.url) for request in exchange.requests] == [
        "https://api.anthropic.com/v1/models?limit=1000",
        "https://api.anthropic.com/v1/models?limit=1000&after_id=claude-sonnet-4-5-20250929",
    ]
    assert exchange.requests[0].headers["x-api-key"] == KEY
    assert listed[0].id == "claude-sonnet-4-5-20250929"
    assert listed[0].name == "Claude Sonnet 4.5"
    assert listed[0].created == 1759104000
    assert listed[0].owned_by == "anthropic"
    assert listed[1].created is None


def test_a_list_that_fails_raises() -> None:
    exchange = Exchange()
    exchange.answers.append(error(401, "authentication_error", "invalid x-api-key"))
    with exchange.client() as http, pytest.raises(ModelCallFailed) as raised:
        list_provider_models(ANTHROPIC, http=http)
    assert raised.value.kind == "credentials_rejected"
