"""Tool calls and multi-step conversations through Gemini's ``generateContent`` (Gemini API and Vertex AI):
the declarations offered, the ``functionCall`` parts read, the model's content replayed with its thought
signatures and the ``functionResponse`` parts sent back."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pydantic import SecretStr
from unit.models.providers.provider_doubles import SCHEMA, Exchange, call, model_request

from parley.models.providers import ModelAnswer, ModelRequest, ProviderSettings
from parley.models.providers.base import ToolCall, ToolResult, ToolSpec, Turn, Usage

GOOGLE = ProviderSettings("google", "google", api_key=SecretStr("AIzaSyD-secret-0123456789"))
VERTEX = ProviderSettings("vertex", "vertex", project="acme-ai", location="europe-west4")

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": 200}, "limit": {"type": ["integer", "null"]}},
    "required": ["query"],
    "additionalProperties": False,
}
QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"cypher": {"type": "string"}},
    "required": ["cypher"],
    "$defs": {"unused": {"type": "string"}},
}
TOOLS = (
    ToolSpec("graph__search", "Search the graph by words.", SEARCH_SCHEMA),
    ToolSpec("graph__query", "Run a read-only Cypher query.", QUERY_SCHEMA),
)
DECLARED = [
    {
        "functionDeclarations": [
            {
                "name": "graph__search",
                "description": "Search the graph by words.",
                "parametersJsonSchema": SEARCH_SCHEMA,
            },
            {
                "name": "graph__query",
                "description": "Run a read-only Cypher query.",
                "parametersJsonSchema": QUERY_SCHEMA,
            },
        ]
    }
]
USER = {"role": "user", "parts": [{"text": "Say hello."}]}

#: The model's content of a first step: a thought summary, then two calls, the first with the signature.
CALLING: dict[str, Any] = {
    "role": "model",
    "parts": [
        {"text": "I should look the account up.", "thought": True},
        {
            "functionCall": {"name": "graph__search", "args": {"query": "acme", "limit": 3}},
            "thoughtSignature": "CiQBVKhc7vB+signature/first==",
        },
        {"functionCall": {"name": "graph__query", "args": {"cypher": "MATCH (a) RETURN a"}}},
    ],
}
#: The same calls as Vertex or a Gemini 3 model may give them: with ids.
CALLING_WITH_IDS: dict[str, Any] = {
    "role": "model",
    "parts": [
        {
            "functionCall": {"id": "fc-7Hq2", "name": "graph__search", "args": {"query": "acme"}},
            "thoughtSignature": "EjQKMgG+signature/ids==",
        },
        {"functionCall": {"id": "fc-9Zk4", "name": "graph__query", "args": {"cypher": "MATCH (a) RETURN a"}}},
    ],
}


def generated(content: dict[str, Any], finish: str = "STOP") -> dict[str, Any]:
    return {
        "candidates": [{"content": content, "finishReason": finish, "index": 0}],
        "usageMetadata": {
            "promptTokenCount": 120,
            "candidatesTokenCount": 30,
            "thoughtsTokenCount": 40,
            "totalTokenCount": 190,
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-1",
    }


def first_step(model: str = "gemini-2.5-flash", **options: Any) -> ModelRequest:
    return replace(model_request(model, **options), tools=TOOLS)


def later_step(turns: tuple[Turn, ...], model: str = "gemini-2.5-flash", **options: Any) -> ModelRequest:
    return replace(model_request(model, **options), turns=turns, tools=TOOLS)


def turns_of(answer: ModelAnswer, results: tuple[ToolResult, ...]) -> tuple[Turn, ...]:
    """The turns the runtime adds after an answer with calls; the state goes through JSON, as it is kept
    between steps."""
    state = json.loads(json.dumps(answer.provider_state))
    return (
        Turn("assistant", text=answer.text, tool_calls=answer.tool_calls, provider_state=state),
        Turn("tool", results=results),
    )


def test_a_step_offering_two_tools_declares_them_with_their_json_schemas() -> None:
    exchange = Exchange()
    exchange.answer(body=generated({"role": "model", "parts": [{"text": "Hello!"}]}))

    answer = call(GOOGLE, first_step(max_output_tokens=700), exchange)

    assert exchange.body() == {
        "contents": [USER],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"maxOutputTokens": 700},
        "tools": DECLARED,
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    }
    assert (answer.text, answer.finish_reason, answer.tool_calls) == ("Hello!", "stop", ())


def test_an_answer_with_two_calls_gives_the_calls_and_keeps_the_content() -> None:
    exchange = Exchange()
    exchange.answer(body=generated(CALLING))

    answer = call(GOOGLE, first_step(), exchange)

    assert (answer.finish_reason, answer.raw_finish_reason) == ("tool_calls", "STOP")
    assert answer.text == ""
    # Gemini gave no ids: the adapter numbers them by step and by call.
    assert answer.tool_calls == (
        ToolCall("call_1_1", "graph__search", {"query": "acme", "limit": 3}),
        ToolCall("call_1_2", "graph__query", {"cypher": "MATCH (a) RETURN a"}),
    )
    assert answer.provider_state == CALLING
    assert json.loads(json.dumps(answer.provider_state)) == CALLING
    assert answer.usage.as_record() == {
        "input": {"uncached": 120, "cache_read": 0, "cache_write": None},
        "output": {"text": 30, "reasoning": 40},
        "total": 190,
    }


def test_the_ids_gemini_gives_are_kept() -> None:
    exchange = Exchange()
    exchange.answer(body=generated(CALLING_WITH_IDS))
    answer = call(GOOGLE, first_step(), exchange)
    assert [(c.id, c.name) for c in answer.tool_calls] == [
        ("fc-7Hq2", "graph__search"),
        ("fc-9Zk4", "graph__query"),
    ]


def test_arguments_that_are_not_an_object_are_given_as_text_and_missing_ones_as_empty() -> None:
    exchange = Exchange()
    content = {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "graph__search", "args": ["acme"]}},
            {"functionCall": {"name": "graph__stats"}},
        ],
    }
    exchange.answer(body=generated(content))
    answer = call(GOOGLE, first_step(), exchange)
    assert answer.tool_calls == (
        ToolCall("call_1_1", "graph__search", None, '["acme"]'),
        ToolCall("call_1_2", "graph__stats", {}),
    )


def test_the_second_step_replays_the_content_and_sends_the_results() -> None:
    exchange = Exchange()
    exchange.answer(body=generated(CALLING))
    exchange.answer(
        body=generated(
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "graph__search", "args": {"query": "acme corp"}}},
                ],
            }
        )
    )

    first = call(GOOGLE, first_step(), exchange)
    results = (
        ToolResult("call_1_1", "graph__search", '[{"name": "Acme"}]'),
        ToolResult("call_1_2", "graph__query", "The query timed out.", is_error=True),
    )
    second = call(GOOGLE, later_step(turns_of(first, results)), exchange)

    assert exchange.body() == {
        "contents": [
            USER,
            CALLING,
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "graph__search",
                            "response": {"output": '[{"name": "Acme"}]'},
                        }
                    },
                    {
                        "functionResponse": {
                            "name": "graph__query",
                            "response": {"error": "The query timed out."},
                        }
                    },
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"maxOutputTokens": 1024},
        "tools": DECLARED,
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    }
    # The thought signature goes back exactly where it came.
    assert exchange.body()["contents"][1]["parts"][1]["thoughtSignature"] == "CiQBVKhc7vB+signature/first=="
    # A call in the second step gets an id of its own.
    assert [c.id for c in second.tool_calls] == ["call_2_1"]


def test_results_name_the_ids_gemini_gave() -> None:
    exchange = Exchange()
    exchange.answer(body=generated({"role": "model", "parts": [{"text": "Acme has 3 accounts."}]}))
    turns = (
        Turn(
            "assistant",
            tool_calls=(
                ToolCall("fc-7Hq2", "graph__search", {"query": "acme"}),
                ToolCall("fc-9Zk4", "graph__query", {"cypher": "MATCH (a) RETURN a"}),
            ),
            provider_state=CALLING_WITH_IDS,
        ),
        Turn(
            "tool",
            results=(
                ToolResult("fc-7Hq2", "graph__search", "3 accounts"),
                ToolResult("fc-9Zk4", "graph__query", "Refused: a third identical call.", is_error=True),
            ),
        ),
    )

    answer = call(VERTEX, later_step(turns), exchange, google_token=lambda: "ya29.vertex-token")

    assert str(exchange.last.url).endswith("/publishers/google/models/gemini-2.5-flash:generateContent")
    assert exchange.body()["contents"][1:] == [
        CALLING_WITH_IDS,
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "graph__search",
                        "id": "fc-7Hq2",
                        "response": {"output": "3 accounts"},
                    }
                },
                {
                    "functionResponse": {
                        "name": "graph__query",
                        "id": "fc-9Zk4",
                        "response": {"error": "Refused: a third identical call."},
                    }
                },
            ],
        },
    ]
    assert exchange.body()["tools"] == DECLARED
    assert (answer.text, answer.finish_reason, answer.tool_calls) == ("Acme has 3 accounts.", "stop", ())


def test_a_turn_without_state_is_rebuilt_from_its_text_and_calls() -> None:
    exchange = Exchange()
    exchange.answer(body=generated({"role": "model", "parts": [{"text": "Done."}]}))
    turns = (
        Turn(
            "assistant",
            text="Looking.",
            tool_calls=(
                ToolCall("call_1_1", "graph__search", {"query": "acme"}),
                ToolCall("fc-9Zk4", "graph__query", None, "not json"),
            ),
        ),
        Turn(
            "tool",
            results=(
                ToolResult("call_1_1", "graph__search", "3 accounts"),
                ToolResult("fc-9Zk4", "graph__query", "Refused: the arguments are not JSON.", is_error=True),
            ),
        ),
    )

    call(GOOGLE, later_step(turns), exchange)

    assert exchange.body()["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Looking."},
                {"functionCall": {"name": "graph__search", "args": {"query": "acme"}}},
                {"functionCall": {"name": "graph__query", "args": {}, "id": "fc-9Zk4"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "graph__search", "response": {"output": "3 accounts"}}},
                {
                    "functionResponse": {
                        "name": "graph__query",
                        "id": "fc-9Zk4",
                        "response": {"error": "Refused: the arguments are not JSON."},
                    }
                },
            ],
        },
    ]


def test_the_last_step_offers_no_tools() -> None:
    exchange = Exchange()
    exchange.answer(body=generated({"role": "model", "parts": [{"text": "Acme has 3 accounts."}]}))
    turns = turns_of(
        ModelAnswer(
            text="",
            finish_reason="tool_calls",
            raw_finish_reason="STOP",
            usage=Usage(),
            response_id=None,
            model_answered=None,
            warnings=(),
            tool_calls=(ToolCall("call_1_1", "graph__search", {"query": "acme", "limit": 3}),),
            provider_state={"role": "model", "parts": [CALLING["parts"][1]]},
        ),
        (ToolResult("call_1_1", "graph__search", "3 accounts"),),
    )

    answer = call(GOOGLE, replace(later_step(turns), tools=()), exchange)

    body = exchange.body()
    assert "tools" not in body
    assert "toolConfig" not in body
    assert body["contents"][1:] == [
        {"role": "model", "parts": [CALLING["parts"][1]]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "graph__search", "response": {"output": "3 accounts"}}}],
        },
    ]
    assert (answer.text, answer.finish_reason) == ("Acme has 3 accounts.", "stop")


def test_before_gemini_3_a_step_with_tools_asks_for_no_json() -> None:
    exchange = Exchange()
    exchange.answer(body=generated(CALLING))

    answer = call(GOOGLE, first_step(output_format="json", output_schema=SCHEMA), exchange)

    config = exchange.body()["generationConfig"]
    assert "responseMimeType" not in config
    assert "responseJsonSchema" not in config
    assert exchange.body()["tools"] == DECLARED
    assert answer.warnings == (
        "the answer is not asked for as JSON while tools are offered: gemini-2.5-flash cannot call "
        "functions and answer in JSON at once (Gemini 3 can); the last step, without tools, asks for it",
    )


def test_before_gemini_3_the_last_step_asks_for_json_with_the_schema() -> None:
    exchange = Exchange()
    exchange.answer(body=generated({"role": "model", "parts": [{"text": '{"verdict": "ok"}'}]}))

    answer = call(
        GOOGLE, model_request("gemini-2.5-flash", output_format="json", output_schema=SCHEMA), exchange
    )

    body = exchange.body()
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert body["generationConfig"]["responseJsonSchema"] == SCHEMA
    assert "tools" not in body
    assert (answer.text, answer.warnings) == ('{"verdict": "ok"}', ())


def test_gemini_3_answers_in_json_while_it_may_call_tools() -> None:
    exchange = Exchange()
    exchange.answer(body=generated({"role": "model", "parts": [{"text": '{"verdict": "ok"}'}]}))

    answer = call(
        GOOGLE, first_step("gemini-3-pro-preview", output_format="json", output_schema=SCHEMA), exchange
    )

    body = exchange.body()
    assert body["generationConfig"] == {
        "maxOutputTokens": 1024,
        "responseMimeType": "application/json",
        "responseJsonSchema": SCHEMA,
    }
    assert body["tools"] == DECLARED
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert (answer.text, answer.finish_reason, answer.warnings) == ('{"verdict": "ok"}', "stop", ())
