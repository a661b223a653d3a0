"""Tool calls and multi-step conversations through Bedrock's Converse, against botocore's Stubber (which
checks each request against the service model): the tools offered, the ``toolUse`` blocks read, the
assistant message replayed with its reasoning and the ``toolResult`` blocks sent back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from unit.models.providers.provider_doubles import SCHEMA, FakeClock, model_request

from parley.models.providers import ModelAnswer, ModelRequest, ProviderSettings, call_model
from parley.models.providers.base import ToolCall, ToolResult, ToolSpec, Turn

BEDROCK = ProviderSettings("bedrock", "bedrock", region="us-east-1")
METADATA = {"RequestId": "5f0b5c4a-7b1e-4d8e-9d6e-1c2f3a4b5c6d", "HTTPStatusCode": 200}
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA = "amazon.nova-pro-v1:0"
MISTRAL = "mistral.mistral-large-2407-v1:0"

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": 200}},
    "required": ["query"],
    "additionalProperties": False,
}
QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"cypher": {"type": "string"}},
    "required": ["cypher"],
}
TOOLS = (
    ToolSpec("graph__search", "Search the graph by words.", SEARCH_SCHEMA),
    ToolSpec("graph__query", "Run a read-only Cypher query.", QUERY_SCHEMA),
)
OFFERED = [
    {
        "toolSpec": {
            "name": "graph__search",
            "description": "Search the graph by words.",
            "inputSchema": {"json": SEARCH_SCHEMA},
        }
    },
    {
        "toolSpec": {
            "name": "graph__query",
            "description": "Run a read-only Cypher query.",
            "inputSchema": {"json": QUERY_SCHEMA},
        }
    },
]
ANSWER_AMONG = {
    "toolSpec": {
        "name": "answer",
        "description": (
            "When you no longer need the other tools, write your whole answer as this tool's input."
        ),
        "inputSchema": {"json": SCHEMA},
    }
}
USER = {"role": "user", "content": [{"text": "Say hello."}]}
NOT_TAKEN = (
    "The answer was not taken: it was written alongside other tool calls. Call answer alone once you have "
    "what you need."
)
SYSTEM = [{"text": "Be brief."}]
REDACTED = b"\x00\x9f encrypted thinking \xff"

#: Claude's message of a first step: its thinking (signed, then redacted), a text, two calls.
CALLING: list[dict[str, Any]] = [
    {
        "reasoningContent": {
            "reasoningText": {"text": "I should look the account up.", "signature": "EqQBCkYIBxgCKkBsig=="}
        }
    },
    {"reasoningContent": {"redactedContent": REDACTED}},
    {"text": "Let me look."},
    {
        "toolUse": {
            "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
            "name": "graph__search",
            "input": {"query": "acme"},
        }
    },
    {
        "toolUse": {
            "toolUseId": "tooluse_Qm9vYmFyMTIzNDU2Nzg5MA",
            "name": "graph__query",
            "input": {"cypher": "MATCH (a) RETURN a"},
        }
    },
]
#: The same message as ``provider_state`` keeps it: JSON, the bytes as base64.
CALLING_STATE: list[dict[str, Any]] = [
    CALLING[0],
    {"reasoningContent": {"redactedContent": {"$base64": "AJ8gZW5jcnlwdGVkIHRoaW5raW5nIP8="}}},
    *CALLING[2:],
]
RESULTS = (
    ToolResult("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "graph__search", '[{"name": "Acme"}]'),
    ToolResult("tooluse_Qm9vYmFyMTIzNDU2Nzg5MA", "graph__query", "The query timed out.", is_error=True),
)


@pytest.fixture
def runtime() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIAEXAMPLE",
        aws_secret_access_key="secret-example",
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def converse_response(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 310, "outputTokens": 95, "totalTokens": 405, "cacheReadInputTokens": 0},
        "metrics": {"latencyMs": 812},
        "ResponseMetadata": METADATA,
    }


def run(client: Any, request: ModelRequest) -> ModelAnswer:
    clock = FakeClock()
    return call_model(BEDROCK, request, bedrock_client=client, sleep=clock.sleep, clock=clock)


def step(
    model: str, turns: tuple[Turn, ...] = (), tools: tuple[ToolSpec, ...] = TOOLS, **options: Any
) -> Any:
    return replace(model_request(model, **options), turns=turns, tools=tools)


def turns_of(answer: ModelAnswer, results: tuple[ToolResult, ...]) -> tuple[Turn, ...]:
    """The turns the runtime adds after an answer with calls; the state goes through JSON, as it is kept
    between steps."""
    state = json.loads(json.dumps(answer.provider_state))
    return (
        Turn("assistant", text=answer.text, tool_calls=answer.tool_calls, provider_state=state),
        Turn("tool", results=results),
    )


def test_a_step_offering_two_tools(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response(
        "converse",
        converse_response([{"text": "Hello!"}]),
        {
            "modelId": NOVA,
            "system": SYSTEM,
            "messages": [USER],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {"tools": OFFERED, "toolChoice": {"auto": {}}},
        },
    )

    answer = run(client, step(NOVA))

    assert (answer.text, answer.finish_reason, answer.tool_calls) == ("Hello!", "stop", ())
    assert answer.provider_state == [{"text": "Hello!"}]


def test_an_answer_with_two_calls_and_its_reasoning(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response("converse", converse_response(CALLING, stop="tool_use"))

    answer = run(client, step(CLAUDE, reasoning="low", max_output_tokens=4000))

    assert (answer.finish_reason, answer.raw_finish_reason) == ("tool_calls", "tool_use")
    assert answer.text == "Let me look."
    assert answer.tool_calls == (
        ToolCall("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "graph__search", {"query": "acme"}),
        ToolCall("tooluse_Qm9vYmFyMTIzNDU2Nzg5MA", "graph__query", {"cypher": "MATCH (a) RETURN a"}),
    )
    assert answer.provider_state == CALLING_STATE
    assert json.loads(json.dumps(answer.provider_state)) == CALLING_STATE
    assert answer.usage.as_record() == {
        "input": {"uncached": 310, "cache_read": 0, "cache_write": None},
        "output": {"text": 95, "reasoning": None},
        "total": 405,
    }


def test_the_second_step_replays_the_message_and_sends_the_results(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    thinking = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    stubber.add_response("converse", converse_response(CALLING, stop="tool_use"))
    stubber.add_response(
        "converse",
        converse_response([{"text": "Acme has 3 accounts."}]),
        {
            "modelId": CLAUDE,
            "system": SYSTEM,
            "messages": [
                USER,
                # Decoded back to bytes, the reasoning exactly as it came.
                {"role": "assistant", "content": CALLING},
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                                "content": [{"text": '[{"name": "Acme"}]'}],
                                "status": "success",
                            }
                        },
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_Qm9vYmFyMTIzNDU2Nzg5MA",
                                "content": [{"text": "The query timed out."}],
                                "status": "error",
                            }
                        },
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 4000},
            "additionalModelRequestFields": thinking,
            "toolConfig": {"tools": OFFERED, "toolChoice": {"auto": {}}},
        },
    )

    first = run(client, step(CLAUDE, reasoning="low", max_output_tokens=4000))
    second = run(client, step(CLAUDE, turns_of(first, RESULTS), reasoning="low", max_output_tokens=4000))

    assert (second.text, second.finish_reason, second.tool_calls) == ("Acme has 3 accounts.", "stop", ())


def test_models_without_a_result_status_read_the_error_in_the_text(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    message = [
        {"text": " "},
        {"toolUse": {"toolUseId": "tooluse_1", "name": "graph__search", "input": {"query": "acme"}}},
        {"toolUse": {"toolUseId": "tooluse_2", "name": "graph__query", "input": {"cypher": "MATCH (a)"}}},
    ]
    stubber.add_response(
        "converse",
        converse_response([{"text": "Done."}]),
        {
            "modelId": MISTRAL,
            "system": SYSTEM,
            "messages": [
                USER,
                # The blank text block is left out: Converse refuses it.
                {"role": "assistant", "content": message[1:]},
                {
                    "role": "user",
                    "content": [
                        {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "(empty result)"}]}},
                        {"toolResult": {"toolUseId": "tooluse_2", "content": [{"text": "Error: Refused."}]}},
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {"tools": OFFERED, "toolChoice": {"auto": {}}},
        },
    )
    turns = (
        Turn("assistant", provider_state=message),
        Turn(
            "tool",
            results=(
                ToolResult("tooluse_1", "graph__search", ""),
                ToolResult("tooluse_2", "graph__query", "Refused.", is_error=True),
            ),
        ),
    )

    run(client, step(MISTRAL, turns))


def test_a_turn_without_state_is_rebuilt_from_its_text_and_calls(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response(
        "converse",
        converse_response([{"text": "Done."}]),
        {
            "modelId": NOVA,
            "system": SYSTEM,
            "messages": [
                USER,
                {
                    "role": "assistant",
                    "content": [
                        {"text": "Looking."},
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_1",
                                "name": "graph__search",
                                "input": {"query": "a"},
                            }
                        },
                        {"toolUse": {"toolUseId": "tooluse_2", "name": "graph__query", "input": {}}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_1",
                                "content": [{"text": "3"}],
                                "status": "success",
                            }
                        },
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_2",
                                "content": [{"text": "No."}],
                                "status": "error",
                            }
                        },
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {"tools": OFFERED, "toolChoice": {"auto": {}}},
        },
    )
    turns = (
        Turn(
            "assistant",
            text="Looking.",
            tool_calls=(
                ToolCall("tooluse_1", "graph__search", {"query": "a"}),
                ToolCall("tooluse_2", "graph__query", None, "MATCH"),
            ),
        ),
        Turn(
            "tool",
            results=(
                ToolResult("tooluse_1", "graph__search", "3"),
                ToolResult("tooluse_2", "graph__query", "No.", is_error=True),
            ),
        ),
    )

    run(client, step(NOVA, turns))


def test_input_that_is_not_an_object_is_given_as_text(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response(
        "converse",
        converse_response(
            [{"toolUse": {"toolUseId": "tooluse_1", "name": "graph__search", "input": "acme"}}],
            stop="tool_use",
        ),
    )
    answer = run(client, step(NOVA))
    assert answer.tool_calls == (ToolCall("tooluse_1", "graph__search", None, "acme"),)


GONE = {
    "description": "No longer available: answer from the results you have.",
    "inputSchema": {"json": {"type": "object", "properties": {}}},
}


def test_a_last_step_without_tools_still_declares_the_tools_called(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response(
        "converse",
        converse_response([{"text": "Acme has 3 accounts."}]),
        {
            "modelId": NOVA,
            "system": SYSTEM,
            "messages": [
                USER,
                {"role": "assistant", "content": CALLING[2:]},
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                                "content": [{"text": '[{"name": "Acme"}]'}],
                                "status": "success",
                            }
                        },
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_Qm9vYmFyMTIzNDU2Nzg5MA",
                                "content": [{"text": "The query timed out."}],
                                "status": "error",
                            }
                        },
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {
                "tools": [
                    {"toolSpec": {"name": "graph__search", **GONE}},
                    {"toolSpec": {"name": "graph__query", **GONE}},
                ],
                "toolChoice": {"auto": {}},
            },
        },
    )
    turns = (Turn("assistant", provider_state=CALLING_STATE[2:]), Turn("tool", results=RESULTS))

    answer = run(client, step(NOVA, turns, tools=()))

    assert (answer.text, answer.finish_reason) == ("Acme has 3 accounts.", "stop")


def test_a_last_step_without_tools_forces_the_json_answer(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    answer_use = {"toolUse": {"toolUseId": "tooluse_9", "name": "answer", "input": {"verdict": "ok"}}}
    stubber.add_response(
        "converse",
        converse_response([answer_use], stop="tool_use"),
        {
            "modelId": NOVA,
            "system": SYSTEM,
            "messages": [
                USER,
                {"role": "assistant", "content": CALLING[3:4]},
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                                "content": [{"text": '[{"name": "Acme"}]'}],
                                "status": "success",
                            }
                        }
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {
                "tools": [
                    {"toolSpec": {"name": "graph__search", **GONE}},
                    {
                        "toolSpec": {
                            "name": "answer",
                            "description": "Write your whole answer as this tool's input.",
                            "inputSchema": {"json": SCHEMA},
                        }
                    },
                ],
                "toolChoice": {"tool": {"name": "answer"}},
            },
        },
    )
    turns = (Turn("assistant", provider_state=CALLING_STATE[3:4]), Turn("tool", results=RESULTS[:1]))

    answer = run(client, step(NOVA, turns, tools=(), output_format="json", output_schema=SCHEMA))

    assert json.loads(answer.text) == {"verdict": "ok"}
    assert (answer.finish_reason, answer.tool_calls) == ("stop", ())


def test_json_with_tools_offers_the_answer_among_them(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    answer_use = {"toolUse": {"toolUseId": "tooluse_9", "name": "answer", "input": {"verdict": "ok"}}}
    stubber.add_response(
        "converse",
        converse_response([answer_use], stop="tool_use"),
        {
            "modelId": CLAUDE,
            "system": SYSTEM,
            "messages": [USER],
            "inferenceConfig": {"maxTokens": 4000},
            "toolConfig": {"tools": [*OFFERED, ANSWER_AMONG], "toolChoice": {"any": {}}},
        },
    )

    answer = run(
        client,
        step(CLAUDE, output_format="json", output_schema=SCHEMA, reasoning="low", max_output_tokens=4000),
    )

    assert json.loads(answer.text) == {"verdict": "ok"}
    assert (answer.finish_reason, answer.tool_calls) == ("stop", ())
    # Claude cannot think while a tool call is required.
    assert answer.warnings == (
        "thinking is not sent: Anthropic models cannot think while they write a JSON answer as a tool",
    )


def test_an_answer_called_alongside_other_tools_waits_for_their_results(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    calling = [
        {"toolUse": {"toolUseId": "tooluse_1", "name": "graph__search", "input": {"query": "acme"}}},
        {"toolUse": {"toolUseId": "tooluse_2", "name": "answer", "input": {"verdict": "too soon"}}},
    ]
    stubber.add_response("converse", converse_response(calling, stop="tool_use"))
    answer_use = {"toolUse": {"toolUseId": "tooluse_3", "name": "answer", "input": {"verdict": "ok"}}}
    stubber.add_response(
        "converse",
        converse_response([answer_use], stop="tool_use"),
        {
            "modelId": NOVA,
            "system": SYSTEM,
            "messages": [
                USER,
                {"role": "assistant", "content": calling},
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_1",
                                "content": [{"text": "3"}],
                                "status": "success",
                            }
                        },
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_2",
                                "content": [{"text": NOT_TAKEN}],
                                "status": "error",
                            }
                        },
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {"tools": [*OFFERED, ANSWER_AMONG], "toolChoice": {"any": {}}},
        },
    )

    first = run(client, step(NOVA, output_format="json", output_schema=SCHEMA))
    assert (first.finish_reason, first.text) == ("tool_calls", "")
    assert first.tool_calls == (ToolCall("tooluse_1", "graph__search", {"query": "acme"}),)

    results = (ToolResult("tooluse_1", "graph__search", "3"),)
    second = run(client, step(NOVA, turns_of(first, results), output_format="json", output_schema=SCHEMA))

    assert json.loads(second.text) == {"verdict": "ok"}
    assert (second.finish_reason, second.tool_calls) == ("stop", ())


def test_a_tool_without_a_description_is_declared_without_one(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response(
        "converse",
        converse_response([{"text": "Hi"}]),
        {
            "modelId": NOVA,
            "system": SYSTEM,
            "messages": [USER],
            "inferenceConfig": {"maxTokens": 1024},
            "toolConfig": {
                "tools": [{"toolSpec": {"name": "notes__list", "inputSchema": {"json": {"type": "object"}}}}],
                "toolChoice": {"auto": {}},
            },
        },
    )
    run(client, step(NOVA, tools=(ToolSpec("notes__list", "", {"type": "object"}),)))
