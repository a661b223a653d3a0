"""The demo model's OpenAI Chat Completions side: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Reads a request into a :class:`~parley.demo.model_answers.Conversation` and writes the answer as a
``chat.completion``. What it does not do (streaming, several choices) is refused as a ``400`` in
OpenAI's error shape, so a client sees why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from parley.demo.model_answers import Answer, Conversation, Tool, ToolResult, schema_in, words
from parley.errors import ParleyError

MODELS: Final = ("echo",)
#: ``created`` of the listed models: a fixed time, so the list is the same on every run.
LISTED_CREATED: Final = 1_767_225_600  # 2026-01-01T00:00:00Z


class BadRequest(ParleyError, ValueError):
    """A request the demo model cannot read; the message says why, for a ``400``."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def error_body(message: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}


def model_list() -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": model, "object": "model", "created": LISTED_CREATED, "owned_by": "parley-demo"}
            for model in MODELS
        ],
    }


def read_request(body: Any) -> Conversation:
    """The conversation of a Chat Completions body; raises :class:`BadRequest`."""
    if not isinstance(body, dict):
        raise BadRequest("the body is a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise BadRequest("model is required", "model")
    if body.get("stream"):
        raise BadRequest("the demo model does not stream; leave stream out", "stream")
    if body.get("n", 1) != 1:
        raise BadRequest("the demo model gives one choice; leave n out", "n")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("messages is a non-empty list of messages", "messages")
    instructions: list[str] = []
    names: dict[str, str] = {}
    last_user = -1
    said = [_text(message.get("content")) for message in messages]
    prompt = list(said)
    for index, message in enumerate(messages):
        role = message.get("role")
        if role in ("system", "developer"):
            instructions.append(said[index])
        elif role == "user":
            last_user = index
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            names[str(call.get("id"))] = str(function.get("name"))
            prompt.append(json.dumps(function))
    if last_user < 0:
        raise BadRequest("messages has no user message", "messages")
    called = tuple(
        str((call.get("function") or {}).get("name"))
        for message in messages[last_user + 1 :]
        for call in message.get("tool_calls") or ()
    )
    results: list[ToolResult] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        name = names.get(str(message.get("tool_call_id")), "unknown")
        results.insert(0, ToolResult(name, _text(message.get("content"))))
    tools = _tools(body.get("tools"))
    prompt.extend(f"{tool.name} {json.dumps(tool.schema)}" for tool in tools)
    return Conversation(
        message=said[last_user],
        instructions="\n".join(instructions),
        called=called,
        results=tuple(results),
        tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice")),
        json_schema=_json_schema(body.get("response_format"), "\n".join(instructions)),
        max_tokens=_max_tokens(body),
        stop=_stop(body.get("stop")),
        prompt=words(prompt),
    )


def completion(body: Mapping[str, Any], result: Answer, digest: str, created: int) -> dict[str, Any]:
    """The ``chat.completion`` of ``result``."""
    message: dict[str, Any] = {"role": "assistant", "content": result.text, "refusal": None}
    if result.tool_call is not None:
        call = result.tool_call
        message["tool_calls"] = [
            {
                "id": f"call_{call.id}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
        ]
    return {
        "id": f"chatcmpl-{digest}",
        "object": "chat.completion",
        "created": created,
        "model": body["model"],
        "system_fingerprint": "parley-demo",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": result.finish}],
        "usage": {
            "prompt_tokens": result.input_tokens,
            "completion_tokens": result.output_tokens,
            "total_tokens": result.input_tokens + result.output_tokens,
        },
    }


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type', 'part')}]")
        return "\n".join(parts)
    return ""


def _tools(tools: Any) -> tuple[Tool, ...]:
    if tools is None:
        return ()
    if not isinstance(tools, list):
        raise BadRequest("tools is a list", "tools")
    found = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise BadRequest("each tool is {type: function, function: {name, parameters}}", "tools")
        parameters = function.get("parameters")
        found.append(Tool(function["name"], parameters if isinstance(parameters, dict) else {}))
    return tuple(found)


def _tool_choice(choice: Any) -> str:
    if isinstance(choice, dict):
        return str((choice.get("function") or {}).get("name", "required"))
    return choice if choice in ("auto", "none", "required") else "auto"


def _json_schema(response_format: Any, instructions: str) -> Mapping[str, Any] | None:
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            raise BadRequest("response_format.json_schema.schema is a JSON Schema", "response_format")
        return schema
    if kind == "json_object":
        return schema_in(instructions) or {}
    return None


def _max_tokens(body: Mapping[str, Any]) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise BadRequest(f"{key} is a whole number of at least 1", key)
            return value
    return None


def _stop(stop: Any) -> tuple[str, ...]:
    if isinstance(stop, str):
        return (stop,)
    if isinstance(stop, list):
        return tuple(str(s) for s in stop)
    return ()
