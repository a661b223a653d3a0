"""Tool calls and multi-step conversations in the OpenAI adapter: Chat Completions (``openai`` with
``chat_completions``, Azure, gateways) and Responses (``openai``, ``azure``), against the shapes of
OpenAI's "Function calling" guide and API reference."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pydantic import SecretStr
from unit.models.providers.provider_doubles import SCHEMA, Exchange, call, model_request

from parley.models.providers import ModelAnswer, ModelRequest, ProviderSettings
from parley.models.providers.base import ToolCall, ToolResult, ToolSpec, Turn

KEY = "sk-proj-secret-0123456789abcdef"
OPENAI = ProviderSettings("openai", "openai", api_key=SecretStr(KEY))
OPENAI_CHAT = ProviderSettings("openai", "openai", api_key=SecretStr(KEY), api="chat_completions")
AZURE = ProviderSettings(
    "azure", "azure", api_key=SecretStr("azure-key-0123456789"), base_url="https://acme.openai.azure.com"
)
GATEWAY = ProviderSettings("router", "gateway", base_url="https://router.example/v1", structured_outputs=True)

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": 200}},
    "required": ["query"],
}
QUERY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"cypher": {"type": "string"}}}
SEARCH = ToolSpec("graph__search", "Search the graph by words.", SEARCH_SCHEMA)
QUERY = ToolSpec("graph__query", "Run a read-only query.", QUERY_SCHEMA)
RESULTS = (
    ToolResult("call_search", "graph__search", '{"suppliers": ["Acme Ltd"]}'),
    ToolResult("call_query", "graph__query", "the query was denied by policy", is_error=True),
)
EXPECTED_CALLS = (
    ToolCall("call_search", "graph__search", {"query": "Acme supplies"}),
    ToolCall("call_query", "graph__query", {"cypher": "MATCH (i:Invoice) RETURN count(i)"}),
)


def with_tools(request: ModelRequest, *tools: ToolSpec, turns: tuple[Turn, ...] = ()) -> ModelRequest:
    return replace(request, tools=tools, turns=turns)


def kept(answer: ModelAnswer) -> tuple[Turn, ...]:
    """The turns the runtime keeps after a step (its state through JSON, as DynamoDB holds it)."""
    state = json.loads(json.dumps(answer.provider_state))
    return (
        Turn("assistant", text=answer.text, tool_calls=answer.tool_calls, provider_state=state),
        Turn("tool", results=RESULTS),
    )


# --- Chat Completions ---------------------------------------------------------------------------------------

CHAT_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "graph__search",
            "description": "Search the graph by words.",
            "parameters": SEARCH_SCHEMA,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "graph__query",
            "description": "Run a read-only query.",
            "parameters": QUERY_SCHEMA,
        },
    },
]
CHAT_CALLS: list[dict[str, Any]] = [
    {
        "id": "call_search",
        "type": "function",
        "function": {"name": "graph__search", "arguments": '{"query": "Acme supplies"}'},
    },
    {
        "id": "call_query",
        "type": "function",
        "function": {"name": "graph__query", "arguments": '{"cypher":"MATCH (i:Invoice) RETURN count(i)"}'},
    },
]


def completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish: str = "tool_calls",
    **extra: Any,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": [],
        **extra,
    }
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340},
    }


def chat_step(settings: ProviderSettings = OPENAI_CHAT, **extra: Any) -> ModelAnswer:
    exchange = Exchange()
    exchange.answer(body=completion(tool_calls=CHAT_CALLS, **extra))
    return call(settings, with_tools(model_request("gpt-4.1"), SEARCH, QUERY), exchange)


CHAT_REPLAYED: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Say hello."},
    {"role": "assistant", "content": None, "tool_calls": CHAT_CALLS},
    {"role": "tool", "tool_call_id": "call_search", "content": '{"suppliers": ["Acme Ltd"]}'},
    {"role": "tool", "tool_call_id": "call_query", "content": "Tool error: the query was denied by policy"},
]


def test_chat_offers_the_tools_and_reads_two_parallel_calls() -> None:
    exchange = Exchange()
    exchange.answer(body=completion(tool_calls=CHAT_CALLS))

    answer = call(OPENAI_CHAT, with_tools(model_request("gpt-4.1"), SEARCH, QUERY), exchange)

    assert str(exchange.last.url) == "https://api.openai.com/v1/chat/completions"
    assert exchange.body() == {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}],
        "max_completion_tokens": 1024,
        "tools": CHAT_TOOLS,
    }
    assert (answer.finish_reason, answer.raw_finish_reason, answer.text) == ("tool_calls", "tool_calls", "")
    assert answer.tool_calls == EXPECTED_CALLS
    assert answer.provider_state == {"role": "assistant", "content": None, "tool_calls": CHAT_CALLS}
    assert answer.usage.total == 340


def test_chat_replays_the_assistant_message_and_each_result_as_a_tool_message() -> None:
    exchange = Exchange()
    exchange.answer(body=completion("Acme has 12 invoices.", finish="stop"))

    answer = call(
        OPENAI_CHAT, with_tools(model_request("gpt-4.1"), SEARCH, QUERY, turns=kept(chat_step())), exchange
    )

    assert exchange.body() == {
        "model": "gpt-4.1",
        "messages": CHAT_REPLAYED,
        "max_completion_tokens": 1024,
        "tools": CHAT_TOOLS,
    }
    assert (answer.text, answer.finish_reason, answer.tool_calls, answer.provider_state) == (
        "Acme has 12 invoices.",
        "stop",
        (),
        None,
    )


def test_chat_keeps_arguments_that_are_not_a_json_object_as_text() -> None:
    exchange = Exchange()
    odd = [
        {"id": "c1", "type": "function", "function": {"name": "graph__search", "arguments": '{"query": "Ac'}},
        {"id": "c2", "type": "function", "function": {"name": "graph__search", "arguments": '["Acme"]'}},
        {"id": "c3", "type": "function", "function": {"name": "graph__query", "arguments": ""}},
    ]
    exchange.answer(body=completion(tool_calls=odd))

    answer = call(OPENAI_CHAT, with_tools(model_request("gpt-4.1"), SEARCH, QUERY), exchange)

    assert answer.tool_calls == (
        ToolCall("c1", "graph__search", None, arguments_text='{"query": "Ac'),
        ToolCall("c2", "graph__search", None, arguments_text='["Acme"]'),
        ToolCall("c3", "graph__query", {}),
    )


def test_chat_json_output_with_tools_sends_the_schema_and_the_tools() -> None:
    exchange = Exchange()
    exchange.answer(body=completion('{"verdict": "fine"}', finish="stop"))
    request = model_request("gpt-4.1", output_format="json", output_schema=SCHEMA)

    answer = call(OPENAI_CHAT, with_tools(request, SEARCH, QUERY), exchange)

    body = exchange.body()
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    assert body["tools"] == CHAT_TOOLS
    assert "tool_choice" not in body
    assert (answer.text, answer.finish_reason) == ('{"verdict": "fine"}', "stop")


def test_chat_last_step_sends_no_tools_but_replays_the_calls_and_results() -> None:
    exchange = Exchange()
    exchange.answer(body=completion("Acme has 12 invoices.", finish="stop"))

    call(OPENAI_CHAT, replace(model_request("gpt-4.1"), turns=kept(chat_step())), exchange)

    assert exchange.body() == {"model": "gpt-4.1", "messages": CHAT_REPLAYED, "max_completion_tokens": 1024}


def test_azure_chat_sends_the_same_tools() -> None:
    exchange = Exchange()
    exchange.answer(body=completion(tool_calls=CHAT_CALLS))
    azure_chat = replace(AZURE, api="chat_completions")

    answer = call(azure_chat, with_tools(model_request("gpt-4.1"), SEARCH, QUERY), exchange)

    assert str(exchange.last.url) == "https://acme.openai.azure.com/openai/v1/chat/completions"
    assert exchange.body()["tools"] == CHAT_TOOLS
    assert answer.tool_calls == EXPECTED_CALLS


def test_a_gateway_that_says_stop_beside_calls_is_read_as_tool_calls_and_its_reasoning_is_kept() -> None:
    answer = chat_step(GATEWAY, finish="stop", reasoning_content="The user wants Acme's invoices.")

    assert (answer.finish_reason, answer.raw_finish_reason) == ("tool_calls", "stop")
    assert answer.tool_calls == EXPECTED_CALLS
    assert answer.provider_state == {
        "role": "assistant",
        "content": None,
        "tool_calls": CHAT_CALLS,
        "reasoning_content": "The user wants Acme's invoices.",
    }
    exchange = Exchange()
    exchange.answer(body=completion("Done.", finish="stop"))

    call(GATEWAY, with_tools(model_request("deepseek-reasoner"), SEARCH, turns=kept(answer)), exchange)

    assert exchange.body()["messages"][2] == answer.provider_state


def test_chat_calls_cut_off_by_the_length_are_not_calls() -> None:
    exchange = Exchange()
    cut = [{"id": "c1", "type": "function", "function": {"name": "graph__search", "arguments": '{"que'}}]
    exchange.answer(body=completion(tool_calls=cut, finish="length"))

    answer = call(OPENAI_CHAT, with_tools(model_request("gpt-4.1"), SEARCH), exchange)

    assert (answer.finish_reason, answer.tool_calls, answer.provider_state) == ("length", (), None)


def test_chat_rebuilds_a_turn_kept_without_its_state() -> None:
    exchange = Exchange()
    exchange.answer(body=completion("Done.", finish="stop"))
    turns = (
        Turn(
            "assistant", text="", tool_calls=(ToolCall("c9", "graph__search", None, arguments_text="{bad"),)
        ),
        Turn("tool", results=(ToolResult("c9", "graph__search", "arguments are not JSON", is_error=True),)),
    )

    call(OPENAI_CHAT, with_tools(model_request("gpt-4.1"), SEARCH, turns=turns), exchange)

    assert exchange.body()["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c9", "type": "function", "function": {"name": "graph__search", "arguments": "{bad"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c9", "content": "Tool error: arguments are not JSON"},
    ]


# --- Responses ----------------------------------------------------------------------------------------------

RESPONSES_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "graph__search",
        "description": "Search the graph by words.",
        "parameters": SEARCH_SCHEMA,
        "strict": False,
    },
    {
        "type": "function",
        "name": "graph__query",
        "description": "Run a read-only query.",
        "parameters": QUERY_SCHEMA,
        "strict": False,
    },
]
REASONING_ITEM: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7",
    "summary": [],
    "encrypted_content": "gAAAAABoIPOEuV3rdxNJ4vFzHlNKL7nkK0-0kpYmyGIDHl2y",
}
SEARCH_ITEM: dict[str, Any] = {
    "type": "function_call",
    "id": "fc_12345xyz",
    "call_id": "call_search",
    "name": "graph__search",
    "arguments": '{"query": "Acme supplies"}',
    "status": "completed",
}
QUERY_ITEM: dict[str, Any] = {
    "type": "function_call",
    "id": "fc_67890abc",
    "call_id": "call_query",
    "name": "graph__query",
    "arguments": '{"cypher":"MATCH (i:Invoice) RETURN count(i)"}',
    "status": "completed",
}
OUTPUT: list[dict[str, Any]] = [REASONING_ITEM, SEARCH_ITEM, QUERY_ITEM]
OUTPUTS_SENT: list[dict[str, Any]] = [
    {"type": "function_call_output", "call_id": "call_search", "output": '{"suppliers": ["Acme Ltd"]}'},
    {
        "type": "function_call_output",
        "call_id": "call_query",
        "output": "Tool error: the query was denied by policy",
    },
]


def response(
    output: list[dict[str, Any]], status: str = "completed", incomplete: str | None = None
) -> dict[str, Any]:
    return {
        "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        "object": "response",
        "created_at": 1741476542,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "model": "gpt-5-2025-08-07",
        "output": output,
        "usage": {
            "input_tokens": 300,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 140,
            "output_tokens_details": {"reasoning_tokens": 100},
            "total_tokens": 440,
        },
    }


def text_output(text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "message",
            "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e6",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    ]


def responses_step(output: list[dict[str, Any]] | None = None, model: str = "gpt-5") -> ModelAnswer:
    exchange = Exchange()
    exchange.answer(body=response(output if output is not None else OUTPUT))
    return call(OPENAI, with_tools(model_request(model), SEARCH, QUERY), exchange)


def test_responses_offers_the_tools_and_asks_a_reasoning_model_for_encrypted_reasoning() -> None:
    exchange = Exchange()
    exchange.answer(body=response(OUTPUT))

    answer = call(OPENAI, with_tools(model_request("gpt-5"), SEARCH, QUERY), exchange)

    assert str(exchange.last.url) == "https://api.openai.com/v1/responses"
    assert exchange.body() == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "Say hello."}],
        "max_output_tokens": 1024,
        "store": False,
        "instructions": "Be brief.",
        "tools": RESPONSES_TOOLS,
        "include": ["reasoning.encrypted_content"],
    }
    assert (answer.finish_reason, answer.raw_finish_reason) == ("tool_calls", "completed")
    assert answer.tool_calls == EXPECTED_CALLS
    assert answer.provider_state == OUTPUT
    assert answer.usage.as_record()["output"] == {"text": 40, "reasoning": 100}


def test_responses_replays_the_output_items_then_each_result() -> None:
    exchange = Exchange()
    exchange.answer(body=response(text_output("Acme has 12 invoices.")))

    answer = call(
        OPENAI, with_tools(model_request("gpt-5"), SEARCH, QUERY, turns=kept(responses_step())), exchange
    )

    assert exchange.body() == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "Say hello."}, *OUTPUT, *OUTPUTS_SENT],
        "max_output_tokens": 1024,
        "store": False,
        "instructions": "Be brief.",
        "tools": RESPONSES_TOOLS,
        "include": ["reasoning.encrypted_content"],
    }
    assert (answer.text, answer.finish_reason, answer.tool_calls, answer.provider_state) == (
        "Acme has 12 invoices.",
        "stop",
        (),
        None,
    )


def test_a_model_that_does_not_reason_is_not_asked_for_encrypted_reasoning() -> None:
    exchange = Exchange()
    exchange.answer(body=response([SEARCH_ITEM]))

    answer = call(OPENAI, with_tools(model_request("gpt-4.1"), SEARCH), exchange)

    assert "include" not in exchange.body()
    assert answer.tool_calls == EXPECTED_CALLS[:1]


def test_an_effort_asks_an_unknown_deployment_for_encrypted_reasoning() -> None:
    exchange = Exchange()
    exchange.answer(body=response(OUTPUT))

    call(AZURE, with_tools(model_request("prod-reasoner", reasoning="low"), SEARCH), exchange)

    assert str(exchange.last.url) == "https://acme.openai.azure.com/openai/v1/responses"
    body = exchange.body()
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["tools"] == RESPONSES_TOOLS[:1]


def test_a_reasoning_item_without_encrypted_content_is_left_out_with_the_ids() -> None:
    exchange = Exchange()
    exchange.answer(body=response(text_output("Done.")))
    bare = {key: value for key, value in REASONING_ITEM.items() if key != "encrypted_content"}
    first = responses_step([bare, SEARCH_ITEM, QUERY_ITEM], model="prod-deployment")

    call(OPENAI, with_tools(model_request("prod-deployment"), SEARCH, turns=kept(first)), exchange)

    assert exchange.body()["input"] == [
        {"role": "user", "content": "Say hello."},
        {key: value for key, value in SEARCH_ITEM.items() if key != "id"},
        {key: value for key, value in QUERY_ITEM.items() if key != "id"},
        *OUTPUTS_SENT,
    ]


def test_responses_keeps_arguments_that_are_not_a_json_object_as_text() -> None:
    answer = responses_step([{**SEARCH_ITEM, "arguments": "query=Acme"}, {**QUERY_ITEM, "arguments": "42"}])

    assert answer.tool_calls == (
        ToolCall("call_search", "graph__search", None, arguments_text="query=Acme"),
        ToolCall("call_query", "graph__query", None, arguments_text="42"),
    )


def test_responses_json_output_with_tools_sends_the_format_and_the_tools() -> None:
    exchange = Exchange()
    exchange.answer(body=response(text_output('{"verdict": "fine"}')))
    request = model_request("gpt-4.1", output_format="json", output_schema=SCHEMA)

    answer = call(OPENAI, with_tools(request, SEARCH, QUERY), exchange)

    body = exchange.body()
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True}
    }
    assert body["tools"] == RESPONSES_TOOLS
    assert "tool_choice" not in body
    assert (answer.text, answer.finish_reason) == ('{"verdict": "fine"}', "stop")


def test_responses_last_step_sends_no_tools_but_replays_the_calls_and_results() -> None:
    exchange = Exchange()
    exchange.answer(body=response(text_output("Acme has 12 invoices.")))

    call(OPENAI, replace(model_request("gpt-5"), turns=kept(responses_step())), exchange)

    body = exchange.body()
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["input"] == [{"role": "user", "content": "Say hello."}, *OUTPUT, *OUTPUTS_SENT]


def test_responses_calls_of_an_incomplete_response_are_not_calls() -> None:
    exchange = Exchange()
    exchange.answer(body=response([REASONING_ITEM, SEARCH_ITEM], "incomplete", "max_output_tokens"))

    answer = call(OPENAI, with_tools(model_request("gpt-5"), SEARCH), exchange)

    assert (answer.finish_reason, answer.tool_calls, answer.provider_state) == ("length", (), None)


def test_responses_rebuilds_a_turn_kept_without_its_state() -> None:
    exchange = Exchange()
    exchange.answer(body=response(text_output("Done.")))
    turns = (
        Turn("assistant", text="Looking.", tool_calls=(ToolCall("c9", "graph__search", {"query": "x"}),)),
        Turn("tool", results=(ToolResult("c9", "graph__search", "[]"),)),
    )

    call(OPENAI, with_tools(model_request("gpt-4.1"), SEARCH, turns=turns), exchange)

    assert exchange.body()["input"][1:] == [
        {"role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "c9", "name": "graph__search", "arguments": '{"query": "x"}'},
        {"type": "function_call_output", "call_id": "c9", "output": "[]"},
    ]
