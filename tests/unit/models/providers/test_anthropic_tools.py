"""Tool calls and multi-step conversations in the Anthropic Messages adapter (``anthropic``,
``vertex-anthropic``, ``bedrock-anthropic``), against the shapes of Anthropic's "Tool use" and "Extended
thinking with tool use" documentation."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import Any

import boto3
from botocore.response import StreamingBody
from botocore.stub import Stubber
from pydantic import SecretStr
from unit.models.providers.provider_doubles import SCHEMA, Exchange, FakeClock, call, model_request

from parley.models.providers import ModelRequest, ProviderSettings, call_model
from parley.models.providers.base import ToolCall, ToolResult, ToolSpec, Turn

KEY = "sk-ant-api03-secret-key-0123456789"
ANTHROPIC = ProviderSettings("anthropic", "anthropic", api_key=SecretStr(KEY))

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": 200}},
    "required": ["query"],
}
QUERY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"cypher": {"type": "string"}}}
SEARCH = ToolSpec("graph__search", "Search the graph by words.", SEARCH_SCHEMA)
QUERY = ToolSpec("graph__query", "Run a read-only query.", QUERY_SCHEMA)
SENT_TOOLS: list[dict[str, Any]] = [
    {"name": "graph__search", "description": "Search the graph by words.", "input_schema": SEARCH_SCHEMA},
    {"name": "graph__query", "description": "Run a read-only query.", "input_schema": QUERY_SCHEMA},
]

THINKING: dict[str, Any] = {
    "type": "thinking",
    "thinking": "I should search for the supplier, then query its invoices.",
    "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
}
REDACTED: dict[str, Any] = {
    "type": "redacted_thinking",
    "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
}
TEXT: dict[str, Any] = {"type": "text", "text": "Let me look both up."}
SEARCH_USE: dict[str, Any] = {
    "type": "tool_use",
    "id": "toolu_01A09q90qw90lq917835lq9",
    "name": "graph__search",
    "input": {"query": "Acme supplies"},
}
QUERY_USE: dict[str, Any] = {
    "type": "tool_use",
    "id": "toolu_01B12x45yz78ab90cd12ef34",
    "name": "graph__query",
    "input": {"cypher": "MATCH (i:Invoice) RETURN count(i)"},
}
ASSISTANT_CONTENT: list[dict[str, Any]] = [THINKING, REDACTED, TEXT, SEARCH_USE, QUERY_USE]


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 420,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 96,
        },
    }


def with_tools(request: ModelRequest, *tools: ToolSpec, turns: tuple[Turn, ...] = ()) -> ModelRequest:
    return replace(request, tools=tools, turns=turns)


def earlier_turns(content: list[dict[str, Any]] | None = None) -> tuple[Turn, ...]:
    """The first step's message (as the caller keeps it from the answer) and its results, one an error."""
    first = call_once(content if content is not None else ASSISTANT_CONTENT)
    return (
        Turn("assistant", text=first.text, tool_calls=first.tool_calls, provider_state=first.provider_state),
        Turn(
            "tool",
            results=(
                ToolResult(SEARCH_USE["id"], "graph__search", '{"suppliers": ["Acme Ltd"]}'),
                ToolResult(QUERY_USE["id"], "graph__query", "the query was denied by policy", is_error=True),
            ),
        ),
    )


def call_once(content: list[dict[str, Any]]) -> Any:
    exchange = Exchange()
    exchange.answer(body=message(content, "tool_use"))
    answer = call(ANTHROPIC, with_tools(model_request("claude-sonnet-4-5"), SEARCH, QUERY), exchange)
    # What the runtime keeps between steps goes through JSON (DynamoDB).
    return replace(answer, provider_state=json.loads(json.dumps(answer.provider_state)))


def replayed_messages() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Say hello."},
        {"role": "assistant", "content": ASSISTANT_CONTENT},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": '{"suppliers": ["Acme Ltd"]}',
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B12x45yz78ab90cd12ef34",
                    "content": "the query was denied by policy",
                    "is_error": True,
                },
            ],
        },
    ]


# --- a step with tools --------------------------------------------------------------------------------------


def test_a_step_offers_the_tools_with_tool_choice_auto() -> None:
    exchange = Exchange()
    exchange.answer(body=message([{"type": "text", "text": "Hello!"}]))

    answer = call(ANTHROPIC, with_tools(model_request("claude-sonnet-4-5"), SEARCH, QUERY), exchange)

    assert exchange.body() == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Say hello."}],
        "tools": SENT_TOOLS,
        "tool_choice": {"type": "auto"},
    }
    assert (answer.text, answer.finish_reason, answer.tool_calls, answer.provider_state) == (
        "Hello!",
        "stop",
        (),
        None,
    )


def test_a_tool_without_a_description_is_sent_without_one() -> None:
    exchange = Exchange()
    exchange.answer(body=message([{"type": "text", "text": "Hello!"}]))

    call(ANTHROPIC, with_tools(model_request("claude-sonnet-4-5"), ToolSpec("notes__list", "", {})), exchange)

    assert exchange.body()["tools"] == [{"name": "notes__list", "input_schema": {}}]


def test_two_parallel_calls_are_two_tool_calls_and_the_content_is_the_state() -> None:
    exchange = Exchange()
    exchange.answer(body=message(ASSISTANT_CONTENT, "tool_use"))

    answer = call(ANTHROPIC, with_tools(model_request("claude-sonnet-4-5"), SEARCH, QUERY), exchange)

    assert answer.finish_reason == "tool_calls"
    assert answer.raw_finish_reason == "tool_use"
    assert answer.text == "Let me look both up."
    assert answer.tool_calls == (
        ToolCall("toolu_01A09q90qw90lq917835lq9", "graph__search", {"query": "Acme supplies"}),
        ToolCall(
            "toolu_01B12x45yz78ab90cd12ef34", "graph__query", {"cypher": "MATCH (i:Invoice) RETURN count(i)"}
        ),
    )
    assert answer.provider_state == ASSISTANT_CONTENT
    assert json.loads(json.dumps(answer.provider_state)) == ASSISTANT_CONTENT
    assert answer.usage.as_record()["total"] == 516


def test_the_next_step_replays_the_message_with_its_thinking_and_the_results() -> None:
    exchange = Exchange()
    exchange.answer(body=message([{"type": "text", "text": "Acme has 12 invoices."}]))
    request = with_tools(
        model_request("claude-sonnet-4-5", reasoning="medium", max_output_tokens=8000),
        SEARCH,
        QUERY,
        turns=earlier_turns(),
    )

    answer = call(ANTHROPIC, request, exchange)

    assert exchange.body() == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8000,
        "system": "Be brief.",
        "messages": replayed_messages(),
        "thinking": {"type": "enabled", "budget_tokens": 4096},
        "tools": SENT_TOOLS,
        "tool_choice": {"type": "auto"},
    }
    assert (answer.text, answer.finish_reason, answer.tool_calls) == ("Acme has 12 invoices.", "stop", ())


def test_a_turn_kept_without_its_state_is_rebuilt_from_its_text_and_calls() -> None:
    exchange = Exchange()
    exchange.answer(body=message([{"type": "text", "text": "Done."}]))
    turns = (
        Turn(
            "assistant", text="Looking.", tool_calls=(ToolCall("toolu_9", "graph__search", {"query": "x"}),)
        ),
        Turn("tool", results=(ToolResult("toolu_9", "graph__search", ""),)),
    )

    call(ANTHROPIC, with_tools(model_request("claude-sonnet-4-5"), SEARCH, turns=turns), exchange)

    assert exchange.body()["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_9", "name": "graph__search", "input": {"query": "x"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9"}]},
    ]


def test_input_that_is_not_an_object_is_kept_as_text() -> None:
    exchange = Exchange()
    odd = {"type": "tool_use", "id": "toolu_2", "name": "graph__search", "input": ["Acme"]}
    exchange.answer(body=message([odd], "tool_use"))

    answer = call(ANTHROPIC, with_tools(model_request("claude-sonnet-4-5"), SEARCH), exchange)

    assert answer.tool_calls == (ToolCall("toolu_2", "graph__search", None, arguments_text='["Acme"]'),)


def test_calls_cut_off_at_max_tokens_are_not_calls() -> None:
    exchange = Exchange()
    exchange.answer(body=message([TEXT, {**SEARCH_USE, "input": {}}], "max_tokens"))

    answer = call(ANTHROPIC, with_tools(model_request("claude-sonnet-4-5"), SEARCH), exchange)

    assert (answer.finish_reason, answer.tool_calls, answer.provider_state) == ("length", (), None)


# --- a JSON answer with tools -------------------------------------------------------------------------------


def json_request(**settings: Any) -> ModelRequest:
    return model_request("claude-sonnet-4-5", output_format="json", output_schema=SCHEMA, **settings)


def test_a_json_answer_with_tools_offers_the_answer_among_them_with_tool_choice_any() -> None:
    exchange = Exchange()
    exchange.answer(body=message([SEARCH_USE], "tool_use"))

    answer = call(
        ANTHROPIC,
        with_tools(json_request(reasoning="high", max_output_tokens=20000), SEARCH, QUERY),
        exchange,
    )

    body = exchange.body()
    assert body["tools"] == [
        *SENT_TOOLS,
        {
            "name": "answer",
            "description": (
                "Call this tool to give your answer, once you need no other tool: write your whole answer as "
                "its input."
            ),
            "input_schema": SCHEMA,
        },
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert "thinking" not in body
    assert answer.warnings == (
        "thinking is not sent: Anthropic models cannot think while they write a JSON answer as a tool",
    )
    assert answer.finish_reason == "tool_calls"
    assert answer.tool_calls == (ToolCall(SEARCH_USE["id"], "graph__search", {"query": "Acme supplies"}),)
    assert answer.provider_state == [SEARCH_USE]


def test_an_answer_call_ends_the_step_as_the_json_answer() -> None:
    exchange = Exchange()
    answer_use = {"type": "tool_use", "id": "toolu_3", "name": "answer", "input": {"verdict": "fine"}}
    exchange.answer(body=message([answer_use], "tool_use"))

    answer = call(ANTHROPIC, with_tools(json_request(), SEARCH, QUERY, turns=earlier_turns()), exchange)

    assert exchange.body()["messages"] == replayed_messages()
    assert json.loads(answer.text) == {"verdict": "fine"}
    assert (answer.finish_reason, answer.raw_finish_reason) == ("stop", "tool_use")
    assert (answer.tool_calls, answer.provider_state) == ((), None)


def test_calls_beside_the_answer_are_dropped_with_a_warning() -> None:
    exchange = Exchange()
    answer_use = {"type": "tool_use", "id": "toolu_3", "name": "answer", "input": {"verdict": "fine"}}
    exchange.answer(body=message([SEARCH_USE, answer_use], "tool_use"))

    answer = call(ANTHROPIC, with_tools(json_request(), SEARCH), exchange)

    assert (answer.finish_reason, answer.tool_calls) == ("stop", ())
    assert json.loads(answer.text) == {"verdict": "fine"}
    assert answer.warnings == (
        "the model called graph__search beside its answer: the answer ends the run, the calls are not made",
    )


# --- the last step, without tools ---------------------------------------------------------------------------


def test_a_last_step_without_tools_sends_none_but_replays_the_calls_and_results() -> None:
    exchange = Exchange()
    exchange.answer(body=message([{"type": "text", "text": "Acme has 12 invoices."}]))

    answer = call(ANTHROPIC, replace(model_request("claude-sonnet-4-5"), turns=earlier_turns()), exchange)

    assert exchange.body() == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "Be brief.",
        "messages": replayed_messages(),
    }
    assert answer.text == "Acme has 12 invoices."


def test_a_json_last_step_forces_the_answer_tool_alone() -> None:
    exchange = Exchange()
    exchange.answer(
        body=message(
            [{"type": "tool_use", "id": "t", "name": "answer", "input": {"verdict": "ok"}}], "tool_use"
        )
    )

    answer = call(ANTHROPIC, replace(json_request(), turns=earlier_turns()), exchange)

    body = exchange.body()
    assert body["messages"] == replayed_messages()
    assert body["tools"] == [
        {
            "name": "answer",
            "description": "Write your whole answer as this tool's input.",
            "input_schema": SCHEMA,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert answer.text == '{"verdict": "ok"}'


# --- Vertex and Bedrock share the body ---------------------------------------------------------------------


def test_vertex_anthropic_sends_the_tools_and_the_replay() -> None:
    exchange = Exchange()
    exchange.answer(body=message(ASSISTANT_CONTENT, "tool_use"))
    settings = ProviderSettings(
        "vertex-anthropic", "vertex-anthropic", project="acme-ai", location="us-east5"
    )
    request = with_tools(model_request("claude-sonnet-4-5@20250929"), SEARCH, QUERY, turns=earlier_turns())

    answer = call(settings, request, exchange, google_token=lambda: "ya29.token")

    body = exchange.body()
    assert body["anthropic_version"] == "vertex-2023-10-16"
    assert (body["messages"], body["tools"], body["tool_choice"]) == (
        replayed_messages(),
        SENT_TOOLS,
        {"type": "auto"},
    )
    assert len(answer.tool_calls) == 2


def test_bedrock_anthropic_sends_the_tools_and_the_replay_through_invoke_model() -> None:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIAEXAMPLE",
        aws_secret_access_key="secret-example",
    )
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    expected = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 1024,
        "messages": replayed_messages(),
        "system": "Be brief.",
        "tools": SENT_TOOLS,
        "tool_choice": {"type": "auto"},
    }
    data = json.dumps(message(ASSISTANT_CONTENT, "tool_use")).encode()
    clock = FakeClock()
    with Stubber(client) as stubber:
        stubber.add_response(
            "invoke_model",
            {
                "body": StreamingBody(io.BytesIO(data), len(data)),
                "contentType": "application/json",
                "ResponseMetadata": {"RequestId": "5f0b5c4a-7b1e", "HTTPStatusCode": 200},
            },
            {
                "modelId": model,
                "body": json.dumps(expected).encode(),
                "contentType": "application/json",
                "accept": "application/json",
            },
        )
        answer = call_model(
            ProviderSettings("bedrock-anthropic", "bedrock-anthropic", region="us-east-1"),
            with_tools(model_request(model), SEARCH, QUERY, turns=earlier_turns()),
            bedrock_client=client,
            sleep=clock.sleep,
            clock=clock,
        )
        stubber.assert_no_pending_responses()

    assert [call.id for call in answer.tool_calls] == [SEARCH_USE["id"], QUERY_USE["id"]]
    assert answer.provider_state == ASSISTANT_CONTENT
    assert answer.response_id == "5f0b5c4a-7b1e"
