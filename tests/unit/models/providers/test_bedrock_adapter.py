"""The Bedrock adapters — Converse (``bedrock``) and InvokeModel (``bedrock-anthropic``) — against
botocore's Stubber, which checks each request against the service model."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import Stubber
from unit.models.providers.provider_doubles import SCHEMA, FakeClock, model_request

from parley.models.providers import (
    ModelAnswer,
    ModelCallFailed,
    ModelRequest,
    ProviderSettings,
    call_model,
    list_provider_models,
)
from parley.models.providers.bedrock_runtime import runtime_client
from parley.models.providers.context import CallContext

BEDROCK = ProviderSettings("bedrock", "bedrock", region="us-east-1")
BEDROCK_ANTHROPIC = ProviderSettings("bedrock-anthropic", "bedrock-anthropic", region="us-east-1")
METADATA = {"RequestId": "5f0b5c4a-7b1e-4d8e-9d6e-1c2f3a4b5c6d", "HTTPStatusCode": 200}


def aws_client(service: str) -> Any:
    return boto3.client(
        service,
        region_name="us-east-1",
        aws_access_key_id="AKIAEXAMPLE",
        aws_secret_access_key="secret-example",
    )


@pytest.fixture
def runtime() -> Iterator[tuple[Any, Stubber]]:
    client = aws_client("bedrock-runtime")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def converse_response(
    content: list[dict[str, Any]] | None = None, stop: str = "end_turn", usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content or [{"text": "Hello!"}]}},
        "stopReason": stop,
        "usage": usage or {"inputTokens": 12, "outputTokens": 6, "totalTokens": 18},
        "metrics": {"latencyMs": 412},
        "ResponseMetadata": METADATA,
    }


def run(
    client: Any, request: ModelRequest, settings: ProviderSettings = BEDROCK, clock: FakeClock | None = None
) -> ModelAnswer:
    clock = clock or FakeClock()
    return call_model(settings, request, bedrock_client=client, sleep=clock.sleep, clock=clock)


def failure_of(client: Any, request: ModelRequest, settings: ProviderSettings = BEDROCK) -> ModelCallFailed:
    with pytest.raises(ModelCallFailed) as raised:
        run(client, request, settings)
    return raised.value


# --- Converse ----------------------------------------------------------------------------------------------


def test_a_text_answer_through_converse(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response(
        "converse",
        converse_response(),
        {
            "modelId": "amazon.nova-pro-v1:0",
            "system": [{"text": "Be brief."}],
            "messages": [{"role": "user", "content": [{"text": "Say hello."}]}],
            "inferenceConfig": {"maxTokens": 512, "temperature": 0.3, "topP": 0.9, "stopSequences": ["END"]},
        },
    )

    answer = run(
        client,
        model_request(
            "amazon.nova-pro-v1:0",
            max_output_tokens=512,
            temperature=0.3,
            top_p=0.9,
            stop_sequences=("END",),
            seed=5,
        ),
    )

    assert answer.text == "Hello!"
    assert (answer.finish_reason, answer.raw_finish_reason) == ("stop", "end_turn")
    assert answer.response_id == METADATA["RequestId"]
    assert answer.model_answered is None
    assert answer.warnings == ("seed is not sent: Bedrock Converse takes no seed",)
    assert answer.usage.as_record() == {
        "input": {"uncached": 12, "cache_read": None, "cache_write": None},
        "output": {"text": 6, "reasoning": None},
        "total": 18,
    }


def test_cache_reads_and_writes_are_kept(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    usage = {
        "inputTokens": 10,
        "outputTokens": 20,
        "totalTokens": 1530,
        "cacheReadInputTokens": 1000,
        "cacheWriteInputTokens": 500,
    }
    stubber.add_response("converse", converse_response(usage=usage))
    answer = run(client, model_request("anthropic.claude-3-5-haiku-20241022-v1:0"))
    assert answer.usage.as_record() == {
        "input": {"uncached": 10, "cache_read": 1000, "cache_write": 500},
        "output": {"text": 20, "reasoning": None},
        "total": 1530,
    }


def test_a_json_answer_is_a_forced_tool(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    tool_use = {"toolUse": {"toolUseId": "tooluse_1", "name": "answer", "input": {"verdict": "ok"}}}
    stubber.add_response(
        "converse",
        converse_response([tool_use], stop="tool_use"),
        {
            "modelId": "amazon.nova-pro-v1:0",
            "system": [{"text": "Be brief."}],
            "messages": [{"role": "user", "content": [{"text": "Say hello."}]}],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": "answer",
                            "description": "Write your whole answer as this tool's input.",
                            "inputSchema": {"json": SCHEMA},
                        }
                    }
                ],
                "toolChoice": {"tool": {"name": "answer"}},
            },
        },
    )

    answer = run(client, model_request("amazon.nova-pro-v1:0", output_format="json", output_schema=SCHEMA))

    assert json.loads(answer.text) == {"verdict": "ok"}
    assert answer.finish_reason == "stop"


@pytest.mark.parametrize(
    ("stop", "finish", "refused"),
    [
        ("end_turn", "stop", False),
        ("stop_sequence", "stop", False),
        ("max_tokens", "length", False),
        ("model_context_window_exceeded", "length", False),
        ("content_filtered", "content_filter", True),
        ("guardrail_intervened", "content_filter", True),
        ("tool_use", "tool_calls", False),
        ("malformed_model_output", "error", False),
        ("malformed_tool_use", "error", False),
    ],
)
def test_each_stop_reason_maps(runtime: tuple[Any, Stubber], stop: str, finish: str, refused: bool) -> None:
    client, stubber = runtime
    stubber.add_response("converse", converse_response(stop=stop))
    answer = run(client, model_request("amazon.nova-lite-v1:0"))
    assert (answer.finish_reason, answer.raw_finish_reason, answer.refused) == (finish, stop, refused)


@pytest.mark.parametrize(
    ("model", "effort", "fields"),
    [
        (
            "us.amazon.nova-2-lite-v1:0",
            "medium",
            {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "medium"}},
        ),
        ("us.amazon.nova-2-lite-v1:0", "none", {"reasoningConfig": {"type": "disabled"}}),
        ("openai.gpt-oss-120b-1:0", "high", {"reasoning_effort": "high"}),
        (
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "medium",
            {"thinking": {"type": "enabled", "budget_tokens": 4096}},
        ),
    ],
)
def test_the_effort_goes_where_the_model_family_takes_it(
    runtime: tuple[Any, Stubber], model: str, effort: str, fields: dict[str, Any]
) -> None:
    client, stubber = runtime
    stubber.add_response(
        "converse",
        converse_response(),
        {
            "modelId": model,
            "system": [{"text": "Be brief."}],
            "messages": [{"role": "user", "content": [{"text": "Say hello."}]}],
            "inferenceConfig": {"maxTokens": 8000},
            "additionalModelRequestFields": fields,
        },
    )
    run(client, model_request(model, reasoning=effort, max_output_tokens=8000))


def test_a_model_without_reasoning_gets_none_with_a_warning(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response("converse", converse_response())
    answer = run(client, model_request("meta.llama3-70b-instruct-v1:0", reasoning="high"))
    assert answer.warnings == (
        "reasoning is not sent: Converse takes no reasoning effort for meta.llama3-70b-instruct-v1:0",
    )


def test_the_reasoning_config_option_wins(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    config = {"type": "enabled", "maxReasoningEffort": "low"}
    stubber.add_response(
        "converse",
        converse_response(),
        {
            "modelId": "us.amazon.nova-2-lite-v1:0",
            "messages": [{"role": "user", "content": [{"text": "Say hello."}]}],
            "inferenceConfig": {"maxTokens": 1024},
            "additionalModelRequestFields": {"reasoningConfig": config},
        },
    )
    answer = run(
        client,
        model_request(
            "us.amazon.nova-2-lite-v1:0",
            instructions=None,
            reasoning="high",
            provider_options={"reasoningConfig": config},
        ),
    )
    assert answer.warnings == ("the reasoning effort is not sent: provider_options reasoningConfig sets it",)


# --- errors ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "message", "status", "kind"),
    [
        (
            "AccessDeniedException",
            "You don't have access to the model with the specified model ID.",
            403,
            "credentials_rejected",
        ),
        (
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
            403,
            "credentials_rejected",
        ),
        ("ValidationException", "The provided model identifier is invalid.", 400, "rejected"),
        ("ValidationException", "Input is too long for requested model.", 400, "too_long"),
        ("ResourceNotFoundException", "Model not found.", 404, "rejected"),
        ("ModelErrorException", "The model failed to process the request.", 424, "unavailable"),
    ],
)
def test_errors_that_are_not_retried(
    runtime: tuple[Any, Stubber], code: str, message: str, status: int, kind: str
) -> None:
    client, stubber = runtime
    stubber.add_client_error("converse", code, message, http_status_code=status)
    failure = failure_of(client, model_request("amazon.nova-pro-v1:0"))
    assert (failure.kind, failure.status) == (kind, status)
    if kind in ("rejected", "too_long"):
        assert message in failure.detail


def test_throttling_and_unavailable_are_retried(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    clock = FakeClock()
    stubber.add_client_error(
        "converse", "ThrottlingException", "Too many requests, please wait.", http_status_code=429
    )
    stubber.add_client_error(
        "converse", "ServiceUnavailableException", "Service unavailable.", http_status_code=503
    )
    stubber.add_response("converse", converse_response())

    answer = run(client, model_request("amazon.nova-pro-v1:0"), clock=clock)

    assert answer.text == "Hello!"
    assert clock.waits == [0.5, 1.0]


def test_throttling_that_lasts_is_rate_limited(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    for _ in range(3):
        stubber.add_client_error(
            "converse", "ThrottlingException", "Too many requests.", http_status_code=429
        )
    failure = failure_of(client, model_request("amazon.nova-pro-v1:0"))
    assert (failure.kind, failure.status) == ("rate_limited", 429)


class Broken:
    """A client whose calls fail before any answer."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def converse(self, **_: Any) -> Any:
        self.calls += 1
        raise self.error


def test_no_connection_is_unreachable_after_the_retries() -> None:
    client = Broken(
        EndpointConnectionError(
            endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse"
        )
    )
    failure = failure_of(client, model_request("amazon.nova-pro-v1:0"))
    assert failure.kind == "unreachable"
    assert client.calls == 3


def test_a_read_timeout_is_timed_out() -> None:
    client = Broken(ReadTimeoutError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com"))
    failure = failure_of(client, model_request("amazon.nova-pro-v1:0"))
    assert failure.kind == "timed_out"
    assert client.calls == 1


def test_the_client_is_made_with_one_attempt_and_the_budget() -> None:
    client = runtime_client(BEDROCK, CallContext(), 85.6)
    assert client.meta.region_name == "us-east-1"
    assert client.meta.config.retries == {"total_max_attempts": 1, "mode": "standard"}
    assert client.meta.config.read_timeout == 86


# --- Anthropic through InvokeModel -------------------------------------------------------------------------


def invoke_response(body: dict[str, Any]) -> dict[str, Any]:
    data = json.dumps(body).encode()
    return {
        "body": StreamingBody(io.BytesIO(data), len(data)),
        "contentType": "application/json",
        "ResponseMetadata": METADATA,
    }


def test_anthropic_on_bedrock_sends_the_messages_body_through_invoke_model(
    runtime: tuple[Any, Stubber],
) -> None:
    client, stubber = runtime
    expected = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 900,
        "messages": [{"role": "user", "content": "Say hello."}],
        "system": "Be brief.",
        "temperature": 0.4,
    }
    stubber.add_response(
        "invoke_model",
        invoke_response(
            {
                "id": "msg_bdrk_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": "Hello!"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 3},
            }
        ),
        {
            "modelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "body": json.dumps(expected).encode(),
            "contentType": "application/json",
            "accept": "application/json",
        },
    )

    answer = run(
        client,
        model_request("us.anthropic.claude-sonnet-4-5-20250929-v1:0", max_output_tokens=900, temperature=0.4),
        BEDROCK_ANTHROPIC,
    )

    assert answer.text == "Hello!"
    assert answer.response_id == METADATA["RequestId"]
    assert answer.model_answered == "claude-sonnet-4-5-20250929"
    assert answer.usage.total == 13


def test_anthropic_on_bedrock_maps_its_errors(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_client_error(
        "invoke_model", "ValidationException", "prompt is too long: 250000 tokens", http_status_code=400
    )
    failure = failure_of(client, model_request("anthropic.claude-3-haiku-20240307-v1:0"), BEDROCK_ANTHROPIC)
    assert failure.kind == "too_long"


# --- the list of models ------------------------------------------------------------------------------------


HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"


def test_the_list_of_foundation_models() -> None:
    client = aws_client("bedrock")
    summaries = [
        {
            "modelArn": f"arn:aws:bedrock:us-east-1::foundation-model/{HAIKU}",
            "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
            "modelName": "Claude 3.5 Haiku",
            "providerName": "Anthropic",
            "outputModalities": ["TEXT"],
        },
        {
            "modelArn": "arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0",
            "modelId": "amazon.nova-pro-v1:0",
            "modelName": "Nova Pro",
            "providerName": "Amazon",
            "outputModalities": ["TEXT"],
        },
    ]
    with Stubber(client) as stubber:
        stubber.add_response(
            "list_foundation_models", {"modelSummaries": summaries}, {"byOutputModality": "TEXT"}
        )
        stubber.add_response(
            "list_foundation_models", {"modelSummaries": summaries}, {"byOutputModality": "TEXT"}
        )
        every = list_provider_models(BEDROCK, bedrock_client=client)
        anthropic = list_provider_models(BEDROCK_ANTHROPIC, bedrock_client=client)

    assert [(m.id, m.name, m.owned_by) for m in every] == [
        ("anthropic.claude-3-5-haiku-20241022-v1:0", "Claude 3.5 Haiku", "Anthropic"),
        ("amazon.nova-pro-v1:0", "Nova Pro", "Amazon"),
    ]
    assert [m.id for m in anthropic] == ["anthropic.claude-3-5-haiku-20241022-v1:0"]
