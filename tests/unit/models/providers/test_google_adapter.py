"""The Gemini adapter (Gemini API and Vertex AI) against the documented request and response shapes."""

from __future__ import annotations

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

from parley.models.providers import ProviderSettings, list_provider_models
from parley.models.providers.base import ModelCallFailed

KEY = "AIzaSyD-secret-0123456789"
GOOGLE = ProviderSettings("google", "google", api_key=SecretStr(KEY))
VERTEX = ProviderSettings("vertex", "vertex", project="acme-ai", location="europe-west4")


def generated(
    parts: list[dict[str, Any]] | None = None, finish: str = "STOP", usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"parts": parts if parts is not None else [{"text": "Hello!"}], "role": "model"},
                "finishReason": finish,
                "index": 0,
            }
        ],
        "usageMetadata": usage
        or {
            "promptTokenCount": 8,
            "candidatesTokenCount": 2,
            "totalTokenCount": 35,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
            "thoughtsTokenCount": 25,
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mpOjaK2sJtKRz7IPnNPQmQM",
    }


def error(
    status: int, state: str, message: str, details: list[dict[str, Any]] | None = None
) -> httpx.Response:
    body = {"error": {"code": status, "message": message, "status": state, "details": details or []}}
    return httpx.Response(status, json=body)


def test_a_text_answer_sends_the_documented_body() -> None:
    exchange = Exchange()
    exchange.answer(body=generated())

    answer = call(
        GOOGLE,
        model_request(
            "gemini-2.5-flash",
            temperature=0.1,
            top_p=0.95,
            seed=11,
            stop_sequences=("END",),
            max_output_tokens=700,
        ),
        exchange,
    )

    assert str(exchange.last.url) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    )
    assert exchange.last.headers["x-goog-api-key"] == KEY
    assert "key=" not in str(exchange.last.url)
    assert exchange.body() == {
        "contents": [{"role": "user", "parts": [{"text": "Say hello."}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {
            "maxOutputTokens": 700,
            "temperature": 0.1,
            "topP": 0.95,
            "seed": 11,
            "stopSequences": ["END"],
        },
    }
    assert answer.text == "Hello!"
    assert (answer.finish_reason, answer.raw_finish_reason) == ("stop", "STOP")
    assert answer.response_id == "mpOjaK2sJtKRz7IPnNPQmQM"
    assert answer.model_answered == "gemini-2.5-flash"
    assert answer.usage.as_record() == {
        "input": {"uncached": 8, "cache_read": 0, "cache_write": None},
        "output": {"text": 2, "reasoning": 25},
        "total": 35,
    }


def test_thoughts_are_not_part_of_the_text_and_cached_tokens_are_apart() -> None:
    exchange = Exchange()
    usage = {
        "promptTokenCount": 5000,
        "cachedContentTokenCount": 4096,
        "candidatesTokenCount": 10,
        "totalTokenCount": 5010,
    }
    exchange.answer(
        body=generated(
            [{"text": "thinking…", "thought": True}, {"text": "Hi"}, {"text": " there"}], usage=usage
        )
    )

    answer = call(GOOGLE, model_request("gemini-2.5-pro"), exchange)

    assert answer.text == "Hi there"
    assert answer.usage.as_record() == {
        "input": {"uncached": 904, "cache_read": 4096, "cache_write": None},
        "output": {"text": 10, "reasoning": None},
        "total": 5010,
    }


def test_a_json_answer_asks_for_json_with_the_schema() -> None:
    exchange = Exchange()
    exchange.answer(body=generated([{"text": '{"verdict": "ok"}'}]))

    answer = call(
        GOOGLE, model_request("gemini-2.5-flash", output_format="json", output_schema=SCHEMA), exchange
    )

    config = exchange.body()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == SCHEMA
    assert answer.text == '{"verdict": "ok"}'


def test_a_json_answer_without_a_schema_asks_for_json_only() -> None:
    exchange = Exchange()
    exchange.answer(body=generated([{"text": "{}"}]))
    call(GOOGLE, model_request("gemini-2.5-flash", output_format="json"), exchange)
    config = exchange.body()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert "responseJsonSchema" not in config


@pytest.mark.parametrize(
    ("model", "effort", "thinking", "warned"),
    [
        ("gemini-2.5-flash", "none", {"thinkingBudget": 0}, False),
        ("gemini-2.5-pro", "none", {"thinkingBudget": 128}, True),
        ("gemini-2.5-flash", "minimal", {"thinkingBudget": 512}, False),
        ("gemini-2.5-flash", "low", {"thinkingBudget": 1024}, False),
        ("gemini-2.5-flash", "medium", {"thinkingBudget": 8192}, False),
        ("gemini-2.5-flash", "high", {"thinkingBudget": 24576}, False),
        ("gemini-2.5-flash", "xhigh", {"thinkingBudget": 24576}, True),
        ("gemini-2.5-pro", "xhigh", {"thinkingBudget": 32768}, False),
        ("gemini-3-pro-preview", "low", {"thinkingLevel": "low"}, False),
        ("gemini-3-flash", "none", {"thinkingLevel": "minimal"}, True),
        ("gemini-3-pro-preview", "xhigh", {"thinkingLevel": "high"}, True),
        ("gemini-flash-latest", "medium", {"thinkingBudget": 8192}, False),
    ],
)
def test_the_effort_becomes_a_thinking_config(
    model: str, effort: str, thinking: dict[str, Any], warned: bool
) -> None:
    exchange = Exchange()
    exchange.answer(body=generated())

    answer = call(GOOGLE, model_request(model, reasoning=effort), exchange)

    assert exchange.body()["generationConfig"]["thinkingConfig"] == thinking
    assert bool(answer.warnings) is warned


def test_models_that_do_not_think_get_no_thinking_config() -> None:
    exchange = Exchange()
    exchange.answer(body=generated())
    answer = call(GOOGLE, model_request("gemini-2.0-flash", reasoning="high"), exchange)
    assert "thinkingConfig" not in exchange.body()["generationConfig"]
    assert answer.warnings == ("reasoning is not sent: gemini-2.0-flash does not think",)


def test_provider_options_set_thinking_and_safety() -> None:
    exchange = Exchange()
    exchange.answer(body=generated())
    options = {
        "thinkingConfig": {"thinkingBudget": 2048, "includeThoughts": False},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
        "threshold": "BLOCK_ONLY_HIGH",
    }

    answer = call(
        GOOGLE, model_request("gemini-2.5-flash", reasoning="high", provider_options=options), exchange
    )

    body = exchange.body()
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 2048, "includeThoughts": False}
    assert body["safetySettings"] == [
        {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"},
        {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_ONLY_HIGH"},
        {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "threshold": "BLOCK_ONLY_HIGH"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_ONLY_HIGH"},
    ]
    assert answer.warnings == ("the reasoning effort is not sent: provider_options thinkingConfig sets it",)


@pytest.mark.parametrize(
    ("reason", "finish", "refused"),
    [
        ("STOP", "stop", False),
        ("MAX_TOKENS", "length", False),
        ("SAFETY", "content_filter", True),
        ("PROHIBITED_CONTENT", "content_filter", True),
        ("BLOCKLIST", "content_filter", True),
        ("SPII", "content_filter", True),
        ("RECITATION", "content_filter", False),
        ("MALFORMED_FUNCTION_CALL", "error", False),
        ("OTHER", "other", False),
        ("FINISH_REASON_UNSPECIFIED", "other", False),
    ],
)
def test_each_finish_reason_maps(reason: str, finish: str, refused: bool) -> None:
    exchange = Exchange()
    exchange.answer(body=generated(finish=reason))
    answer = call(GOOGLE, model_request("gemini-2.5-flash"), exchange)
    assert (answer.finish_reason, answer.raw_finish_reason, answer.refused) == (finish, reason, refused)


def test_a_blocked_prompt_is_refused() -> None:
    exchange = Exchange()
    exchange.answer(
        body={
            "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
            "modelVersion": "gemini-2.5-flash",
            "responseId": "abc",
        }
    )
    answer = call(GOOGLE, model_request("gemini-2.5-flash"), exchange)
    assert answer.refused
    assert (answer.finish_reason, answer.raw_finish_reason) == ("content_filter", "PROHIBITED_CONTENT")
    assert answer.usage.input_uncached == 9
    assert answer.usage.output_text is None


# --- errors ------------------------------------------------------------------------------------------------


def test_an_invalid_api_key_is_the_credentials_though_it_comes_as_400() -> None:
    exchange = Exchange()
    exchange.answers.append(
        error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"},
                }
            ],
        )
    )
    failure = failure_of(GOOGLE, model_request("gemini-2.5-flash"), exchange)
    assert (failure.kind, failure.status) == ("credentials_rejected", 400)


def test_too_many_input_tokens_is_too_long() -> None:
    exchange = Exchange()
    exchange.answers.append(
        error(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        )
    )
    failure = failure_of(GOOGLE, model_request("gemini-2.5-flash"), exchange)
    assert failure.kind == "too_long"


def test_an_unknown_model_is_rejected() -> None:
    exchange = Exchange()
    exchange.answers.append(
        error(
            404,
            "NOT_FOUND",
            "models/gemini-9 is not found for API version v1beta, or is not supported for generateContent.",
        )
    )
    failure = failure_of(GOOGLE, model_request("gemini-9"), exchange)
    assert (failure.kind, failure.status) == ("rejected", 404)
    assert "models/gemini-9 is not found" in failure.detail


def test_retry_info_gives_the_wait() -> None:
    exchange = Exchange()
    clock = FakeClock()
    retry = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
    ]
    exchange.answers.append(error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", retry))
    exchange.answers.append(error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."))
    exchange.answer(body=generated())

    answer = call(GOOGLE, model_request("gemini-2.5-flash"), exchange, clock)

    assert answer.text == "Hello!"
    assert clock.waits == [37.0, 1.0]


def test_a_wait_beyond_the_budget_ends_with_the_rate_limit() -> None:
    exchange = Exchange()
    clock = FakeClock()
    retry = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "120s"}]
    exchange.answers.append(error(429, "RESOURCE_EXHAUSTED", "quota", retry))
    exchange.answer(body=generated())

    with pytest.raises(ModelCallFailed) as failed:
        call(GOOGLE, model_request("gemini-2.5-flash", timeout_seconds=60), exchange, clock)

    # The provider asked for 120 s and the call has 60: retrying sooner would meet the same answer.
    assert (failed.value.kind, failed.value.retry_after_seconds) == ("rate_limited", 120)
    assert clock.waits == []


# --- Vertex ------------------------------------------------------------------------------------------------


def test_vertex_uses_the_regional_publisher_url_and_a_bearer_token() -> None:
    exchange = Exchange()
    exchange.answer(body=generated())

    call(
        VERTEX,
        model_request("gemini-2.5-pro", reasoning="low"),
        exchange,
        google_token=lambda: "ya29.vertex-token",
    )

    assert str(exchange.last.url) == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/acme-ai/locations/europe-west4"
        "/publishers/google/models/gemini-2.5-pro:generateContent"
    )
    assert exchange.last.headers["authorization"] == "Bearer ya29.vertex-token"
    assert "x-goog-api-key" not in exchange.last.headers
    assert exchange.body()["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 1024}


def test_vertex_global_uses_the_global_host() -> None:
    exchange = Exchange()
    exchange.answer(body=generated())
    settings = ProviderSettings("vertex", "vertex", project="acme-ai", location="global")
    call(settings, model_request("gemini-2.5-flash"), exchange, google_token=lambda: "tok-0123456789")
    assert str(exchange.last.url).startswith(
        "https://aiplatform.googleapis.com/v1/projects/acme-ai/locations/global/"
    )


def test_the_vertex_token_never_shows_in_a_failure() -> None:
    exchange = Exchange()
    exchange.answers.append(error(400, "INVALID_ARGUMENT", "bad token ya29.vertex-token-0123 in request"))
    failure = failure_of(
        VERTEX, model_request("gemini-2.5-flash"), exchange, google_token=lambda: "ya29.vertex-token-0123"
    )
    assert "ya29.vertex-token-0123" not in failure.detail
    assert "[secret]" in failure.detail


# --- the list of models ------------------------------------------------------------------------------------


def test_the_list_keeps_the_models_that_generate_content() -> None:
    exchange = Exchange()
    exchange.answer(
        body={
            "models": [
                {
                    "name": "models/gemini-2.5-flash",
                    "version": "001",
                    "displayName": "Gemini 2.5 Flash",
                    "inputTokenLimit": 1048576,
                    "outputTokenLimit": 65536,
                    "supportedGenerationMethods": ["generateContent", "countTokens"],
                },
                {
                    "name": "models/text-embedding-004",
                    "displayName": "Text Embedding 004",
                    "supportedGenerationMethods": ["embedContent"],
                },
            ],
            "nextPageToken": "page-2",
        }
    )
    exchange.answer(
        body={
            "models": [{"name": "models/gemini-2.5-pro", "supportedGenerationMethods": ["generateContent"]}]
        }
    )

    with exchange.client() as http:
        listed = list_provider_models(GOOGLE, http=http)

    assert [str(r.url) for r in exchange.requests] == [
        "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000",
        "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000&pageToken=page-2",
    ]
    assert [(m.id, m.name, m.context_window, m.max_tokens, m.owned_by) for m in listed] == [
        ("gemini-2.5-flash", "Gemini 2.5 Flash", 1048576, 65536, "google"),
        ("gemini-2.5-pro", None, None, None, "google"),
    ]


def test_vertex_lists_nothing() -> None:
    exchange = Exchange()
    with exchange.client() as http:
        assert list_provider_models(VERTEX, http=http) == []
    assert exchange.requests == []
