"""The OpenAI adapter (Responses, Chat Completions, Azure, gateways) against the documented shapes."""

from __future__ import annotations

import json
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

KEY = "sk-proj-secret-0123456789abcdef"
OPENAI = ProviderSettings("openai", "openai", api_key=SecretStr(KEY))
OPENAI_CHAT = ProviderSettings("openai", "openai", api_key=SecretStr(KEY), api="chat_completions")
AZURE = ProviderSettings(
    "azure", "azure", api_key=SecretStr("azure-key-0123456789"), base_url="https://acme.openai.azure.com"
)


def response(
    output: list[dict[str, Any]] | None = None,
    status: str = "completed",
    incomplete: str | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        "object": "response",
        "created_at": 1741476542,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "model": "gpt-4.1-2025-04-14",
        "output": output
        if output is not None
        else [
            {
                "type": "message",
                "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e6",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello!", "annotations": []}],
            }
        ],
        "usage": usage
        or {
            "input_tokens": 36,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 87,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 123,
        },
    }


def completion(
    content: str | None = "Hello!", finish: str = "stop", refusal: str | None = None, usage: Any = None
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal, "annotations": []},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": usage
        or {
            "prompt_tokens": 1200,
            "completion_tokens": 300,
            "total_tokens": 1500,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 256, "audio_tokens": 0},
        },
    }


def error(
    status: int,
    message: str,
    code: str | None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> httpx.Response:
    body = {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code, **extra}
    }
    return httpx.Response(status, json=body, headers=headers)


# --- Responses ---------------------------------------------------------------------------------------------


def test_a_text_answer_through_responses() -> None:
    exchange = Exchange()
    exchange.answer(body=response())

    answer = call(
        OPENAI, model_request("gpt-4.1", temperature=0.7, top_p=0.5, max_output_tokens=500), exchange
    )

    assert str(exchange.last.url) == "https://api.openai.com/v1/responses"
    assert exchange.last.headers["authorization"] == f"Bearer {KEY}"
    assert exchange.body() == {
        "model": "gpt-4.1",
        "input": [{"role": "user", "content": "Say hello."}],
        "instructions": "Be brief.",
        "max_output_tokens": 500,
        "store": False,
        "temperature": 0.7,
        "top_p": 0.5,
    }
    assert answer.text == "Hello!"
    assert (answer.finish_reason, answer.raw_finish_reason) == ("stop", "completed")
    assert answer.response_id == "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
    assert answer.model_answered == "gpt-4.1-2025-04-14"
    assert answer.usage.as_record() == {
        "input": {"uncached": 36, "cache_read": 0, "cache_write": None},
        "output": {"text": 87, "reasoning": 0},
        "total": 123,
    }


def test_seed_and_stop_sequences_are_warnings_on_responses() -> None:
    exchange = Exchange()
    exchange.answer(body=response())

    answer = call(OPENAI, model_request("gpt-4.1", seed=3, stop_sequences=("END",)), exchange)

    assert "seed" not in exchange.body()
    assert "stop" not in exchange.body()
    assert answer.warnings == (
        "seed is not sent: the OpenAI Responses API takes no seed",
        "stop_sequences are not sent: the OpenAI Responses API takes no stop sequences",
    )


def test_reasoning_models_take_the_effort_and_no_temperature() -> None:
    exchange = Exchange()
    exchange.answer(body=response())

    answer = call(OPENAI, model_request("gpt-5", reasoning="minimal", temperature=0.2), exchange)

    assert exchange.body()["reasoning"] == {"effort": "minimal"}
    assert "temperature" not in exchange.body()
    assert answer.warnings == ("temperature is not sent: OpenAI's reasoning models take none",)


@pytest.mark.parametrize(
    ("model", "effort", "kept"),
    [
        ("o3", "high", False),
        ("o4-mini", None, False),
        ("gpt-5.1", "none", True),
        ("gpt-5.2", "low", False),
        ("gpt-5-chat-latest", None, True),
        ("gpt-4o", None, True),
        ("gpt-4.1-mini", "low", True),
    ],
)
def test_which_models_keep_the_temperature(model: str, effort: str | None, kept: bool) -> None:
    exchange = Exchange()
    exchange.answer(body=response())
    call(OPENAI, model_request(model, reasoning=effort, temperature=0.4), exchange)
    assert ("temperature" in exchange.body()) is kept


def test_xhigh_and_none_are_sent_as_named() -> None:
    exchange = Exchange()
    for effort in ("xhigh", "none"):
        exchange.answer(body=response())
        call(OPENAI, model_request("gpt-5.2", reasoning=effort), exchange)
        assert exchange.body()["reasoning"] == {"effort": effort}


def test_a_json_answer_asks_for_strict_structured_output() -> None:
    exchange = Exchange()
    output = [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": '{"verdict":"ok"}'}],
        }
    ]
    exchange.answer(body=response(output))
    options = {"textVerbosity": "low", "reasoningMode": "pro", "logitBias": {"50256": -100}}

    answer = call(
        OPENAI,
        model_request(
            "gpt-5.6", output_format="json", output_schema=SCHEMA, reasoning="high", provider_options=options
        ),
        exchange,
    )

    body = exchange.body()
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True},
        "verbosity": "low",
    }
    assert body["reasoning"] == {"effort": "high", "mode": "pro"}
    assert "logit_bias" not in body
    assert answer.warnings == ("logitBias is not sent: the OpenAI Responses API takes no logit bias",)
    assert json.loads(answer.text) == {"verdict": "ok"}


@pytest.mark.parametrize(
    ("status", "incomplete", "finish", "raw"),
    [
        ("completed", None, "stop", "completed"),
        ("incomplete", "max_output_tokens", "length", "max_output_tokens"),
        ("incomplete", "content_filter", "content_filter", "content_filter"),
        ("failed", None, "error", "failed"),
        ("cancelled", None, "other", "cancelled"),
    ],
)
def test_each_status_maps_to_a_finish_reason(
    status: str, incomplete: str | None, finish: str, raw: str
) -> None:
    exchange = Exchange()
    exchange.answer(body=response(status=status, incomplete=incomplete))
    answer = call(OPENAI, model_request("gpt-4.1"), exchange)
    assert (answer.finish_reason, answer.raw_finish_reason, answer.refused) == (finish, raw, False)


def test_a_refusal_part_is_a_refusal() -> None:
    exchange = Exchange()
    refusal = {"type": "refusal", "refusal": "I'm sorry, I cannot assist with that request."}
    exchange.answer(body=response([{"type": "message", "role": "assistant", "content": [refusal]}]))

    answer = call(OPENAI, model_request("gpt-4.1", output_format="json", output_schema=SCHEMA), exchange)

    assert answer.refused
    assert answer.finish_reason == "content_filter"
    assert answer.text == ""


def test_reasoning_and_cached_tokens_are_kept_apart() -> None:
    exchange = Exchange()
    usage = {
        "input_tokens": 2000,
        "input_tokens_details": {"cached_tokens": 1536},
        "output_tokens": 900,
        "output_tokens_details": {"reasoning_tokens": 640},
        "total_tokens": 2900,
    }
    exchange.answer(body=response(usage=usage))
    answer = call(OPENAI, model_request("o3"), exchange)
    assert answer.usage.as_record() == {
        "input": {"uncached": 464, "cache_read": 1536, "cache_write": None},
        "output": {"text": 260, "reasoning": 640},
        "total": 2900,
    }

    exchange.answer(body={**response(), "usage": None})
    answer = call(OPENAI, model_request("o3"), exchange)
    assert answer.usage.as_record()["total"] is None


# --- Chat Completions --------------------------------------------------------------------------------------


def test_chat_completions_sends_every_setting() -> None:
    exchange = Exchange()
    exchange.answer(body=completion())
    options = {"textVerbosity": "high", "logitBias": {"1234": 5}}

    answer = call(
        OPENAI_CHAT,
        model_request(
            "gpt-4.1",
            temperature=0,
            top_p=1,
            seed=42,
            stop_sequences=("###",),
            reasoning="low",
            max_output_tokens=300,
            provider_options=options,
        ),
        exchange,
    )

    assert str(exchange.last.url) == "https://api.openai.com/v1/chat/completions"
    assert exchange.body() == {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}],
        "max_completion_tokens": 300,
        "temperature": 0,
        "top_p": 1,
        "seed": 42,
        "stop": ["###"],
        "reasoning_effort": "low",
        "verbosity": "high",
        "logit_bias": {"1234": 5},
    }
    assert answer.text == "Hello!"
    assert answer.response_id == "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"
    assert answer.usage.as_record() == {
        "input": {"uncached": 176, "cache_read": 1024, "cache_write": None},
        "output": {"text": 44, "reasoning": 256},
        "total": 1500,
    }


def test_chat_completions_json_and_reasoning_mode() -> None:
    exchange = Exchange()
    exchange.answer(body=completion('{"verdict": "ok"}'))

    answer = call(
        OPENAI_CHAT,
        model_request(
            "gpt-4.1", output_format="json", output_schema=SCHEMA, provider_options={"reasoningMode": "pro"}
        ),
        exchange,
    )

    assert exchange.body()["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    assert answer.warnings == (
        "reasoningMode is not sent: Chat Completions takes no reasoning mode; use the Responses API",
    )


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("tool_calls", "tool_calls"),
        ("function_call", "tool_calls"),
        ("weird", "other"),
    ],
)
def test_each_chat_finish_reason_maps(finish: str, expected: str) -> None:
    exchange = Exchange()
    exchange.answer(body=completion(finish=finish))
    answer = call(OPENAI_CHAT, model_request("gpt-4.1"), exchange)
    assert (answer.finish_reason, answer.raw_finish_reason) == (expected, finish)


def test_a_chat_refusal_is_a_refusal() -> None:
    exchange = Exchange()
    exchange.answer(body=completion(None, refusal="I can't help with that."))
    answer = call(OPENAI_CHAT, model_request("gpt-4.1"), exchange)
    assert answer.refused
    assert answer.finish_reason == "content_filter"
    assert answer.raw_finish_reason == "stop"


# --- Azure -------------------------------------------------------------------------------------------------


def test_azure_uses_the_v1_path_and_the_api_key_header() -> None:
    exchange = Exchange()
    exchange.answer(body=response())

    call(AZURE, model_request("my-gpt-4o-deployment"), exchange)

    assert str(exchange.last.url) == "https://acme.openai.azure.com/openai/v1/responses"
    assert exchange.last.headers["api-key"] == "azure-key-0123456789"
    assert "authorization" not in exchange.last.headers
    assert exchange.body()["model"] == "my-gpt-4o-deployment"


@pytest.mark.parametrize(
    ("base_url", "version", "url"),
    [
        (
            "https://acme.openai.azure.com/",
            "preview",
            "https://acme.openai.azure.com/openai/v1/responses?api-version=preview",
        ),
        ("https://acme.openai.azure.com/openai", None, "https://acme.openai.azure.com/openai/v1/responses"),
        (
            "https://acme.openai.azure.com/openai/v1",
            "2024-10-21",
            "https://acme.openai.azure.com/openai/v1/responses",
        ),
    ],
)
def test_azure_endpoints_and_versions(base_url: str, version: str | None, url: str) -> None:
    exchange = Exchange()
    exchange.answer(body=response())
    settings = ProviderSettings(
        "azure", "azure", api_key=SecretStr("k" * 10), base_url=base_url, api_version=version
    )
    call(settings, model_request("dep"), exchange)
    assert str(exchange.last.url) == url


def test_azure_content_filter_on_the_prompt_is_a_refused_answer() -> None:
    exchange = Exchange()
    exchange.answers.append(
        error(
            400,
            "The response was filtered due to the prompt triggering Azure OpenAI's content management "
            "policy.",
            "content_filter",
            "prompt",
            innererror={
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": {"hate": {"filtered": True}},
            },
        )
    )

    answer = call(AZURE, model_request("dep", seed=1), exchange)

    assert answer.refused
    assert answer.finish_reason == "content_filter"
    assert answer.raw_finish_reason == "ResponsibleAIPolicyViolation"
    assert answer.usage.total is None
    assert answer.warnings == ("seed is not sent: the OpenAI Responses API takes no seed",)
    assert len(exchange.requests) == 1


# --- gateways ----------------------------------------------------------------------------------------------


def gateway(**overrides: Any) -> ProviderSettings:
    values: dict[str, Any] = {
        "api_key": SecretStr("gw-key-0123456789"),
        "base_url": "http://127.0.0.1:9100/v1",
        "headers": {"x-tenant": SecretStr("acme-tenant-secret")},
        "structured_outputs": True,
        "allowed_provider_options": ("user",),
    }
    values.update(overrides)
    return ProviderSettings("internal", "gateway", **values)


def test_a_gateway_takes_chat_completions_with_its_headers_and_options() -> None:
    exchange = Exchange()
    exchange.answer(body=completion('{"verdict": "ok"}'))

    call(
        gateway(),
        model_request(
            "llama-3.3-70b",
            output_format="json",
            output_schema=SCHEMA,
            temperature=1.5,
            provider_options={"user": "u-1"},
        ),
        exchange,
    )

    assert str(exchange.last.url) == "http://127.0.0.1:9100/v1/chat/completions"
    assert exchange.last.headers["authorization"] == "Bearer gw-key-0123456789"
    assert exchange.last.headers["x-tenant"] == "acme-tenant-secret"
    body = exchange.body()
    assert body["response_format"]["type"] == "json_schema"
    assert body["temperature"] == 1.5
    assert body["user"] == "u-1"


def test_a_gateway_without_structured_outputs_gets_the_schema_in_words() -> None:
    exchange = Exchange()
    exchange.answer(body=completion('{"verdict": "ok"}'))

    call(
        gateway(structured_outputs=False, api_key=None),
        model_request("m", output_format="json", output_schema=SCHEMA),
        exchange,
    )

    body = exchange.body()
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]["content"]
    assert system.startswith("Be brief.\n\nAnswer with one JSON object")
    assert json.dumps(SCHEMA, separators=(",", ":")) in system
    assert "authorization" not in exchange.last.headers


@pytest.mark.parametrize(
    "field", ["messages", "model", "max_tokens", "max_completion_tokens", "response_format", "temperature"]
)
def test_a_gateway_option_never_overrides_what_the_runtime_sets(field: str) -> None:
    exchange = Exchange()

    failure = failure_of(gateway(), model_request("m", provider_options={field: "x"}), exchange)

    assert failure.kind == "rejected"
    assert field in failure.detail
    assert exchange.requests == []


def test_a_gateway_option_outside_the_allowed_list_is_refused() -> None:
    exchange = Exchange()

    failure = failure_of(gateway(), model_request("m", provider_options={"fallbacks": ["x"]}), exchange)

    assert failure.kind == "rejected"
    assert (
        failure.detail
        == "the provider options fallbacks are not sent: the gateway internal does not allow them"
    )
    assert exchange.requests == []


def test_a_json_answer_without_a_schema_asks_for_a_json_object() -> None:
    exchange = Exchange()
    exchange.answer(body=response())
    call(OPENAI, model_request("gpt-4.1", output_format="json"), exchange)
    assert exchange.body()["text"] == {"format": {"type": "json_object"}}

    exchange.answer(body=completion())
    call(OPENAI_CHAT, model_request("gpt-4.1", output_format="json"), exchange)
    assert exchange.body()["response_format"] == {"type": "json_object"}


def test_402_is_unavailable_and_not_retried() -> None:
    exchange = Exchange()
    exchange.answers.append(error(402, "Insufficient credits", "payment_required"))
    failure = failure_of(gateway(), model_request("m"), exchange)
    assert (failure.kind, failure.status) == ("unavailable", 402)
    assert len(exchange.requests) == 1


# --- errors ------------------------------------------------------------------------------------------------


def test_context_length_exceeded_is_too_long() -> None:
    exchange = Exchange()
    exchange.answers.append(
        error(
            400,
            "This model's maximum context length is 128000 tokens. "
            "However, your messages resulted in 130512 tokens.",
            "context_length_exceeded",
            "messages",
        )
    )
    failure = failure_of(OPENAI_CHAT, model_request("gpt-4o"), exchange)
    assert (failure.kind, failure.status) == ("too_long", 400)
    assert "130512 tokens" in failure.detail


def test_an_effort_the_model_does_not_take_is_rejected_with_a_hint() -> None:
    exchange = Exchange()
    exchange.answers.append(
        error(
            400,
            "Unsupported value: 'reasoning.effort' does not support 'xhigh' with this model. "
            "Supported values are: 'low', 'medium', and 'high'.",
            "unsupported_value",
            "reasoning.effort",
        )
    )
    failure = failure_of(OPENAI, model_request("o3", reasoning="xhigh"), exchange)
    assert failure.kind == "rejected"
    assert "does not support 'xhigh'" in failure.detail
    assert "the o-series low, medium and high" in failure.detail


def test_the_key_in_an_error_message_is_scrubbed() -> None:
    exchange = Exchange()
    exchange.answers.append(
        error(404, f"The model `gpt-9` does not exist (key {KEY})", "model_not_found", "model")
    )
    failure = failure_of(OPENAI, model_request("gpt-9"), exchange)
    assert failure.kind == "rejected"
    assert KEY not in failure.detail
    assert "[secret]" in failure.detail
    assert KEY not in repr(failure)


def test_retry_after_ms_is_honoured() -> None:
    exchange = Exchange()
    clock = FakeClock()
    exchange.answers.append(
        error(429, "Rate limit reached", "rate_limit_exceeded", headers={"retry-after-ms": "1250"})
    )
    exchange.answers.append(httpx.Response(503, text="upstream connect error"))
    exchange.answer(body=response())

    answer = call(OPENAI, model_request("gpt-4.1"), exchange, clock)

    assert answer.text == "Hello!"
    assert clock.waits == [1.25, 1.0]


def test_401_is_the_credentials() -> None:
    exchange = Exchange()
    exchange.answers.append(error(401, "Incorrect API key provided: sk-proj-****cdef.", "invalid_api_key"))
    failure = failure_of(OPENAI, model_request("gpt-4.1"), exchange)
    assert (failure.kind, failure.status) == ("credentials_rejected", 401)
    assert failure.detail == "openai answered HTTP 401: it rejected the credentials"


def test_a_success_that_is_not_json_is_unavailable() -> None:
    exchange = Exchange()
    exchange.answers.append(httpx.Response(200, text="<html>proxy</html>"))
    failure = failure_of(OPENAI, model_request("gpt-4.1"), exchange)
    assert (failure.kind, failure.status) == ("unavailable", 200)


# --- the list of models ------------------------------------------------------------------------------------


def test_the_list_of_models() -> None:
    exchange = Exchange()
    exchange.answer(
        body={
            "object": "list",
            "data": [
                {"id": "gpt-4.1", "object": "model", "created": 1744316542, "owned_by": "system"},
                {"id": "o3", "object": "model", "created": 1744225308, "owned_by": "system"},
            ],
        }
    )
    with exchange.client() as http:
        listed = list_provider_models(OPENAI, http=http)
    assert str(exchange.last.url) == "https://api.openai.com/v1/models"
    assert [(m.id, m.created, m.owned_by) for m in listed] == [
        ("gpt-4.1", 1744316542, "system"),
        ("o3", 1744225308, "system"),
    ]


def test_a_gateway_list_without_owner_is_owned_by_the_gateway() -> None:
    exchange = Exchange()
    exchange.answer(body={"data": [{"id": "llama-3.3-70b"}]})
    with exchange.client() as http:
        listed = list_provider_models(gateway(), http=http)
    assert str(exchange.last.url) == "http://127.0.0.1:9100/v1/models"
    assert listed[0].owned_by == "internal"
    assert listed[0].created is None
