"""``parley demo-model``: the deterministic model (``parley.demo.model``), its JSON values, its answers and
its two APIs over real HTTP."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest

from parley.cli import build_parser, main
from parley.demo.model import DemoModel, DemoModelOptions, running, serve
from parley.demo.model_answers import Conversation, Tool, ToolResult, answer, count_tokens, schema_in
from parley.demo.model_schema import UnsatisfiableSchema, example_value

# --- JSON values -----------------------------------------------------------------------------------

NODE = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
    },
    "required": ["name", "children"],
    "additionalProperties": False,
}
SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 20, "maxLength": 40},
            "score": {"type": "integer", "minimum": 5, "maximum": 7},
            "note": {"type": ["string", "null"]},
            "tone": {"enum": ["warm", "formal"]},
            "version": {"const": 3},
            "ok": {"type": "boolean"},
            "nothing": {"type": "null"},
        },
        "required": ["title", "score", "note", "tone", "version", "ok", "nothing"],
        "additionalProperties": False,
    },
    {"type": "array", "items": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 3}, "minItems": 4},
    {"type": "array", "items": {"type": "integer", "maximum": -5}, "minItems": 3, "uniqueItems": True},
    {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 3, "uniqueItems": True},
    {"type": "array", "items": {"type": "string", "maxLength": 2}, "minItems": 3, "uniqueItems": True},
    {
        "type": "array",
        "items": {"type": "number", "minimum": 0, "maximum": 1},
        "minItems": 3,
        "uniqueItems": True,
    },
    {"type": "array", "items": False, "prefixItems": [{"type": "string"}, {"type": "boolean"}]},
    {"type": "array", "maxItems": 0},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    {"type": "number", "multipleOf": 0.1, "minimum": 0.25},
    {"type": "number", "maximum": -2.5},
    {"type": "integer", "minimum": 1.5, "maximum": 2.5},
    {"$defs": {"node": NODE}, "$ref": "#/$defs/node"},
    {
        "anyOf": [
            {"type": "null"},
            {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}},
        ]
    },
    {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]},
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
        ]
    },
    {"type": "object", "minProperties": 3, "additionalProperties": {"type": "number"}},
    {"type": "object", "maxProperties": 1, "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
    {"type": "object", "required": ["extra"], "additionalProperties": {"type": "integer"}},
    {
        "type": "object",
        "properties": {
            fmt: {"type": "string", "format": fmt}
            for fmt in (
                "date-time",
                "date",
                "time",
                "email",
                "hostname",
                "uri",
                "ipv4",
                "ipv6",
                "uuid",
                "duration",
            )
        },
        "required": ["date", "uuid"],
    },
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"mail": {"type": "string", "format": "email"}},
        "type": "object",
        "properties": {
            "to": {"$ref": "#/definitions/mail"},
            "cc": {"type": "array", "items": {"$ref": "#/definitions/mail"}},
        },
        "required": ["to", "cc"],
    },
    # The shape of a series answer (output-shapes.md) as a function would send it.
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "points": {
                "type": "array",
                "minItems": 2,
                "items": {
                    "type": "object",
                    "properties": {"x": {"type": "string", "format": "date"}, "y": {"type": "number"}},
                    "required": ["x", "y"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["title", "points"],
        "additionalProperties": False,
    },
    {},
    {"description": "anything"},
]


def assert_matches(value: Any, schema: dict[str, Any]) -> None:
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator(schema, format_checker=validator.FORMAT_CHECKER).validate(value)


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_a_value_matches_its_schema(schema: dict[str, Any]) -> None:
    value = example_value(schema)

    assert_matches(value, schema)
    assert example_value(schema) == value  # the same every time


def test_what_the_values_look_like() -> None:
    assert example_value(SCHEMAS[0]) == {
        "title": "example title.......",
        "score": 5,
        "note": "example note",
        "tone": "warm",
        "version": 3,
        "ok": True,
        "nothing": None,
    }
    assert example_value(SCHEMAS[1]) == [3, 6, 9, 12]
    tree = example_value(SCHEMAS[12])
    depth = 0
    while tree["children"]:
        tree, depth = tree["children"][0], depth + 1
    assert 0 < depth < 10  # a recursive schema ends


@pytest.mark.parametrize(
    "schema",
    [
        False,
        {"$ref": "https://example.com/schema"},
        {"$ref": "#/$defs/missing"},
        {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
    ],
)
def test_a_schema_without_a_value(schema: Any) -> None:
    with pytest.raises(UnsatisfiableSchema):
        example_value(schema)


# --- answers -----------------------------------------------------------------------------------

POST = Tool(
    "chat__post_message",
    {
        "type": "object",
        "properties": {"channel": {"type": "string"}, "text": {"type": "string"}},
        "required": ["channel", "text"],
    },
)
LIST = Tool("chat__list_channels", {"type": "object", "properties": {}})


def test_text_restates_the_message_and_the_first_line_of_the_instructions() -> None:
    result = answer(
        Conversation(message="Draft  a\npost", instructions="\n  Be brief.  \nThen more.", prompt="x")
    )

    assert result.text == "You said: Draft a post\n(Instructions: Be brief.)"
    assert (result.finish, result.tool_call, result.output_tokens) == (
        "stop",
        None,
        count_tokens(result.text),
    )
    assert answer(Conversation(message="")).text == "You said nothing."


def test_tokens_are_words_and_marks() -> None:
    assert count_tokens("You said: hello, world") == 6
    assert count_tokens('{"a": 1}') == 7
    assert (
        answer(Conversation(message="one two three", prompt="one two three\nsystem words")).input_tokens == 5
    )


def test_a_text_answer_is_cut_at_max_tokens() -> None:
    result = answer(Conversation(message="one two three four five", max_tokens=4))

    assert (result.text, result.finish, result.output_tokens) == ("You said: one", "length", 4)


def test_a_stop_sequence_ends_the_text() -> None:
    result = answer(Conversation(message="alpha STOP beta", stop=("STOP",)))

    assert (result.text, result.finish, result.stop_sequence) == ("You said: alpha ", "stop", "STOP")


def test_json_matches_the_requested_schema() -> None:
    result = answer(Conversation(message="hi", json_schema=SCHEMAS[0]))

    assert result.text is not None
    assert_matches(json.loads(result.text), SCHEMAS[0])
    plain = answer(Conversation(message="hi", json_schema={}))
    assert plain.text is not None and json.loads(plain.text) == {"answer": "You said: hi"}


def test_a_json_answer_cut_at_max_tokens_is_not_json() -> None:
    result = answer(Conversation(message="hi", json_schema=SCHEMAS[0], max_tokens=5))

    assert result.finish == "length"
    assert result.text is not None
    with pytest.raises(ValueError):
        json.loads(result.text)


def test_the_schema_in_the_instructions() -> None:
    text = (
        'Answer as JSON. Example {not json} then the schema: {"type": "object", "properties": {"n": '
        '{"type": "integer"}}}'
    )

    assert schema_in(text) == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert schema_in("no schema {here}") is None


def test_a_tool_named_without_the_arguments_it_requires_is_answered_in_words() -> None:
    result = answer(Conversation(message="Please call post_message to say hello", tools=(POST, LIST)))

    assert (result.finish, result.tool_call) == ("stop", None)
    assert result.text == (
        "I cannot tell what post_message needs: it requires channel, text, and the message does not say. "
        "Write the arguments as a JSON object right after the tool's name, such as post_message "
        '{"channel": "…", "text": "…"}.'
    )


def test_a_tool_named_with_some_of_its_required_arguments_is_answered_in_words() -> None:
    message = 'post_message {"channel": "maria"}'

    result = answer(Conversation(message=message, tools=(POST,)))

    assert (result.finish, result.tool_call) == ("stop", None)
    assert result.text == (
        "I cannot tell what post_message needs: it requires channel, text, and the message leaves out "
        "text. Write the arguments as a JSON object right after the tool's name, such as post_message "
        '{"channel": "maria", "text": "…"}.'
    )


def test_a_forced_tool_still_gets_arguments_made_from_its_schema() -> None:
    result = answer(Conversation(message="post_message", tools=(POST,), tool_choice="chat__post_message"))

    assert result.tool_call is not None
    assert result.tool_call.arguments == {"channel": "example channel", "text": "example text"}


def test_a_tool_that_requires_nothing_is_called_with_no_arguments() -> None:
    result = answer(Conversation(message="Please call list_channels", tools=(POST, LIST)))

    assert result.finish == "tool_calls"
    assert result.tool_call is not None
    assert (result.tool_call.name, result.tool_call.arguments) == ("chat__list_channels", {})
    assert result.text is None


def test_the_arguments_written_after_the_name_are_used() -> None:
    message = 'call chat__post_message {"channel": "maria", "text": "Draft ready"} please'

    result = answer(Conversation(message=message, tools=(POST,)))

    assert result.tool_call is not None
    assert result.tool_call.arguments == {"channel": "maria", "text": "Draft ready"}


def test_each_named_tool_is_called_once_in_order_then_the_results_are_quoted() -> None:
    message = 'First list_channels, then post_message {"channel": "maria", "text": "hi"}.'
    first = answer(Conversation(message=message, tools=(POST, LIST)))
    second = answer(Conversation(message=message, tools=(POST, LIST), called=("chat__list_channels",)))
    last = answer(
        Conversation(
            message=message,
            tools=(POST, LIST),
            called=("chat__list_channels", "chat__post_message"),
            results=(ToolResult("chat__post_message", '{"ts": "1.000002"}'),),
        )
    )

    assert first.tool_call is not None and first.tool_call.name == "chat__list_channels"
    assert second.tool_call is not None and second.tool_call.name == "chat__post_message"
    assert (last.text, last.finish) == ('The tool chat__post_message answered: {"ts": "1.000002"}', "stop")
    failed = answer(Conversation(message="x", results=(ToolResult("t", "denied", is_error=True),)))
    assert failed.text == "The tool t failed: denied"


def test_a_tool_is_called_only_when_named_offered_and_not_turned_off() -> None:
    assert answer(Conversation(message="say hello", tools=(POST,))).tool_call is None
    assert (
        answer(Conversation(message="call post_message", tools=(POST,), tool_choice="none")).tool_call is None
    )
    assert answer(Conversation(message="call post_message")).tool_call is None
    assert answer(Conversation(message="call repost_message_now", tools=(POST,))).tool_call is None


def test_a_forced_tool_and_a_required_one() -> None:
    schema = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}
    forced = answer(Conversation(message="hi", tools=(Tool("answer", schema),), tool_choice="answer"))
    required = answer(Conversation(message="hi", tools=(LIST, POST), tool_choice="required"))

    assert forced.tool_call is not None
    assert (forced.tool_call.name, forced.tool_call.arguments) == ("answer", {"total": 1.5})
    assert required.tool_call is not None and required.tool_call.name == "chat__list_channels"


def test_the_same_conversation_gives_the_same_answer() -> None:
    conversation = Conversation(message="call post_message", tools=(POST,))

    assert answer(conversation) == answer(conversation)


# --- over HTTP ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoModel]:
    with running(DemoModelOptions(port=0)) as model:
        yield model


def chat(demo: DemoModel, **body: Any) -> httpx.Response:
    return httpx.post(f"{demo.openai_base_url}/chat/completions", json={"model": "echo", **body})


def messages(demo: DemoModel, base: str | None = None, **body: Any) -> httpx.Response:
    headers = {"x-api-key": "anything", "anthropic-version": "2023-06-01"}
    url = f"{base or demo.anthropic_base_url}/v1/messages"
    return httpx.post(url, json={"model": "echo", "max_tokens": 1024, **body}, headers=headers)


def test_base_urls(demo: DemoModel) -> None:
    assert demo.url == f"http://127.0.0.1:{demo.port}"
    assert demo.openai_base_url == demo.url + "/v1"
    assert demo.anthropic_base_url == demo.url + "/anthropic"


def test_openai_text(demo: DemoModel) -> None:
    conversation = [
        {"role": "system", "content": "Review the brief.\nBe kind."},
        {"role": "user", "content": [{"type": "text", "text": "Here is the brief"}]},
    ]
    response = chat(demo, messages=conversation)

    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert body["model"] == "echo"
    assert isinstance(body["created"], int)
    (choice,) = body["choices"]
    assert choice["message"] == {
        "role": "assistant",
        "content": "You said: Here is the brief\n(Instructions: Review the brief.)",
        "refusal": None,
    }
    assert choice["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 11, "completion_tokens": 15, "total_tokens": 26}
    assert chat(demo, messages=conversation).json()["id"] == body["id"]  # the same request, the same id


def test_openai_json_schema(demo: DemoModel) -> None:
    schema = SCHEMAS[-3]
    response = chat(
        demo,
        messages=[{"role": "user", "content": "A series, please"}],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "series", "schema": schema, "strict": True},
        },
    )

    assert_matches(json.loads(response.json()["choices"][0]["message"]["content"]), schema)


def test_openai_json_object_reads_the_schema_in_the_instructions(demo: DemoModel) -> None:
    schema = {
        "type": "object",
        "properties": {"verdict": {"enum": ["approve", "revise"]}},
        "required": ["verdict"],
    }
    response = chat(
        demo,
        messages=[
            {"role": "developer", "content": f"Answer with JSON matching this schema: {json.dumps(schema)}"},
            {"role": "user", "content": "Review it"},
        ],
        response_format={"type": "json_object"},
    )

    assert json.loads(response.json()["choices"][0]["message"]["content"]) == {"verdict": "approve"}


def test_openai_tool_call_then_the_result(demo: DemoModel) -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": POST.name, "description": "Post", "parameters": POST.schema},
        }
    ]
    conversation: list[dict[str, Any]] = [
        {"role": "user", "content": 'Please call post_message {"channel": "maria", "text": "hi"}'}
    ]

    called = chat(demo, messages=conversation, tools=tools).json()["choices"][0]

    assert called["finish_reason"] == "tool_calls"
    (call,) = called["message"]["tool_calls"]
    assert call["id"].startswith("call_")
    assert call["type"] == "function"
    assert call["function"]["name"] == "chat__post_message"
    assert json.loads(call["function"]["arguments"]) == {"channel": "maria", "text": "hi"}
    conversation += [
        called["message"],
        {"role": "tool", "tool_call_id": call["id"], "content": '{"ts": "1.5"}'},
    ]
    done = chat(demo, messages=conversation, tools=tools).json()["choices"][0]
    assert done["message"]["content"] == 'The tool chat__post_message answered: {"ts": "1.5"}'
    assert done["finish_reason"] == "stop"


def test_openai_max_tokens_cuts_the_answer(demo: DemoModel) -> None:
    response = chat(demo, messages=[{"role": "user", "content": "one two three"}], max_completion_tokens=3)

    choice = response.json()["choices"][0]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("You said:", "length")
    assert response.json()["usage"]["completion_tokens"] == 3


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"messages": [{"role": "user", "content": "hi"}], "stream": True}, "stream", "does not stream"),
        ({"messages": []}, "messages", "messages is a non-empty list"),
        ({"messages": [{"role": "system", "content": "x"}]}, "messages", "no user message"),
        ({"model": "", "messages": [{"role": "user", "content": "hi"}]}, "model", "model is required"),
        ({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}, "max_tokens", "at least 1"),
        ({"messages": [{"role": "user", "content": "hi"}], "n": 2}, "n", "one choice"),
    ],
)
def test_openai_refusals(demo: DemoModel, body: dict[str, Any], param: str, words: str) -> None:
    response = chat(demo, **body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["param"]) == ("invalid_request_error", param)
    assert words in error["message"]


def test_a_body_that_is_not_json_or_not_the_shape(demo: DemoModel) -> None:
    not_json = httpx.post(f"{demo.openai_base_url}/chat/completions", content=b"{")
    odd = chat(demo, messages=[{"role": "user", "content": "hi", "tool_calls": [5]}])

    assert (not_json.status_code, not_json.json()["error"]["message"]) == (400, "the body is not JSON")
    assert odd.status_code == 400
    anthropic = httpx.post(f"{demo.anthropic_base_url}/v1/messages", content=b"[")
    assert anthropic.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "the body is not JSON"},
    }


def test_the_model_lists(demo: DemoModel) -> None:
    openai = httpx.get(f"{demo.openai_base_url}/models").json()
    anthropic = httpx.get(f"{demo.anthropic_base_url}/v1/models").json()
    anthropic_at_the_root = httpx.get(
        f"{demo.url}/v1/models", headers={"anthropic-version": "2023-06-01"}
    ).json()

    assert openai == {
        "object": "list",
        "data": [{"id": "echo", "object": "model", "created": 1_767_225_600, "owned_by": "parley-demo"}],
    }
    assert anthropic == anthropic_at_the_root
    assert anthropic["data"] == [
        {
            "type": "model",
            "id": "echo",
            "display_name": "Parley demo echo",
            "created_at": "2026-01-01T00:00:00Z",
        }
    ]
    assert (anthropic["has_more"], anthropic["first_id"], anthropic["last_id"]) == (False, "echo", "echo")


def test_an_unknown_path(demo: DemoModel) -> None:
    response = httpx.post(f"{demo.url}/v1/completions", json={})

    assert response.status_code == 404
    assert "/v1/chat/completions" in response.json()["error"]["message"]


def test_anthropic_text(demo: DemoModel) -> None:
    response = messages(
        demo,
        system=[{"type": "text", "text": "You review briefs."}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "Here is the brief"}]}],
    )

    body = response.json()
    assert body["id"].startswith("msg_")
    assert (body["type"], body["role"], body["model"]) == ("message", "assistant", "echo")
    assert body["content"] == [
        {"type": "text", "text": "You said: Here is the brief\n(Instructions: You review briefs.)"}
    ]
    assert (body["stop_reason"], body["stop_sequence"]) == ("end_turn", None)
    assert body["usage"] == {
        "input_tokens": 8,
        "output_tokens": 15,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    at_the_root = messages(demo, demo.url, messages=[{"role": "user", "content": "hi"}])
    assert at_the_root.json()["content"][0]["text"] == "You said: hi"


def test_anthropic_json_through_a_forced_tool(demo: DemoModel) -> None:
    schema = SCHEMAS[0]
    response = messages(
        demo,
        messages=[{"role": "user", "content": "Review it"}],
        tools=[{"name": "answer", "description": "The answer", "input_schema": schema}],
        tool_choice={"type": "tool", "name": "answer"},
    )

    body = response.json()
    assert body["stop_reason"] == "tool_use"
    (block,) = body["content"]
    assert (block["type"], block["name"]) == ("tool_use", "answer")
    assert block["id"].startswith("toolu_")
    assert_matches(block["input"], schema)


@pytest.mark.parametrize("where", ["output_format", "output_config"])
def test_anthropic_structured_outputs(demo: DemoModel, where: str) -> None:
    schema = SCHEMAS[12]
    form = {"type": "json_schema", "schema": schema}
    extra = {"output_format": form} if where == "output_format" else {"output_config": {"format": form}}

    response = messages(demo, messages=[{"role": "user", "content": "A tree"}], **extra)

    assert_matches(json.loads(response.json()["content"][0]["text"]), schema)


def test_anthropic_tool_use_then_the_result(demo: DemoModel) -> None:
    tools = [
        {"name": LIST.name, "input_schema": LIST.schema},
        {"name": POST.name, "input_schema": POST.schema},
    ]
    conversation: list[dict[str, Any]] = [{"role": "user", "content": "Which channels? Use list_channels."}]

    called = messages(demo, messages=conversation, tools=tools).json()

    assert called["stop_reason"] == "tool_use"
    (use,) = called["content"]
    assert (use["name"], use["input"]) == ("chat__list_channels", {})
    conversation += [
        {"role": "assistant", "content": called["content"]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": use["id"],
                    "content": [{"type": "text", "text": "maria"}],
                }
            ],
        },
    ]
    done = messages(demo, messages=conversation, tools=tools).json()
    assert done["content"] == [{"type": "text", "text": "The tool chat__list_channels answered: maria"}]
    assert done["stop_reason"] == "end_turn"


def test_anthropic_max_tokens_and_stop_sequences(demo: DemoModel) -> None:
    cut = messages(demo, max_tokens=4, messages=[{"role": "user", "content": "one two three"}]).json()
    stopped = messages(
        demo, stop_sequences=["two"], messages=[{"role": "user", "content": "one two three"}]
    ).json()

    assert (cut["content"][0]["text"], cut["stop_reason"]) == ("You said: one", "max_tokens")
    assert (stopped["content"][0]["text"], stopped["stop_reason"], stopped["stop_sequence"]) == (
        "You said: one ", "stop_sequence", "two"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"max_tokens": None}, "max_tokens"),
        ({"stream": True}, "does not stream"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "assistant", "content": "hi"}]}, "no user message"),
    ],
)
def test_anthropic_refusals(demo: DemoModel, body: dict[str, Any], words: str) -> None:
    response = messages(demo, **{"messages": [{"role": "user", "content": "hi"}], **body})

    assert response.status_code == 400
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert words in response.json()["error"]["message"]


# --- the command -------------------------------------------------------------------------------


def test_demo_model_options_and_defaults() -> None:
    args = build_parser().parse_args(["demo-model"])
    assert (args.command, args.host, args.port) == ("demo-model", "127.0.0.1", 9100)
    assert build_parser().parse_args(["demo-model", "--host", "::1", "--port", "0"]).port == 0


def test_demo_model_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["demo-model", "--help"])

    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "usage: parley demo-model [-h] [--host HOST] [--port PORT]" in out
    assert "http://HOST:PORT/v1" in out and "http://HOST:PORT/anthropic" in out
    assert "demo-model" in build_parser().format_help()


def test_serving_on_a_busy_port_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]

        code = serve(DemoModelOptions(port=port))

    assert code == 1
    said = capsys.readouterr().err
    assert said.startswith(f"parley demo-model: port {port} on 127.0.0.1 is in use")
    assert "--port" in said
