"""The demo model's Anthropic Messages side: ``POST /v1/messages`` and Anthropic's ``GET /v1/models``.

Reads a request into a :class:`~parley.demo.model_answers.Conversation` and writes the answer as a
``message``. A JSON answer is asked for the way Anthropic models are: a forced tool (``tool_choice:
{type: tool, name}``) whose ``input_schema`` is the answer's schema, or structured outputs
(``output_format`` / ``output_config.format`` of type ``json_schema``). Errors take Anthropic's shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from parley.demo.model_answers import Answer, Conversation, Tool, ToolResult, words
from parley.demo.model_openai import MODELS, BadRequest

_STOP_REASONS: Final = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def model_list() -> dict[str, Any]:
    data = [
        {
            "type": "model",
            "id": model,
            "display_name": f"Parley demo {model}",
            "created_at": "2026-01-01T00:00:00Z",
        }
        for model in MODELS
    ]
    return {"data": data, "has_more": False, "first_id": MODELS[0], "last_id": MODELS[-1]}


def read_request(body: Any) -> Conversation:
    """The conversation of a Messages body; raises :class:`~parley.demo.model_openai.BadRequest`."""
    if not isinstance(body, dict):
        raise BadRequest("the body is a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise BadRequest("model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise BadRequest("max_tokens: a whole number of at least 1 is required")
    if body.get("stream"):
        raise BadRequest("stream: the demo model does not stream; leave stream out")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("messages: a non-empty list of messages is required")
    instructions = _text(body.get("system"))
    blocks = [_blocks(message.get("content")) for message in messages]
    said = ["\n".join(str(b.get("text", "")) for b in found if b.get("type") == "text") for found in blocks]
    spoke = [
        i
        for i, message in enumerate(messages)
        if message.get("role") == "user" and any(b.get("type") != "tool_result" for b in blocks[i])
    ]
    if not spoke:
        raise BadRequest("messages: the conversation has no user message")
    last_user = spoke[-1]
    names = {
        str(b.get("id")): str(b.get("name")) for found in blocks for b in found if b.get("type") == "tool_use"
    }
    called = tuple(
        str(b.get("name")) for found in blocks[last_user + 1 :] for b in found if b.get("type") == "tool_use"
    )
    results: tuple[ToolResult, ...] = ()
    if messages[-1].get("role") == "user":
        results = tuple(
            ToolResult(
                names.get(str(b.get("tool_use_id")), "unknown"),
                _text(b.get("content")),
                bool(b.get("is_error")),
            )
            for b in blocks[-1]
            if b.get("type") == "tool_result"
        )
    tools = _tools(body.get("tools"))
    prompt = [
        instructions,
        *said,
        *(_text(b.get("content")) for found in blocks for b in found if b.get("type") == "tool_result"),
    ]
    prompt.extend(f"{tool.name} {json.dumps(tool.schema)}" for tool in tools)
    return Conversation(
        message=said[last_user],
        instructions=instructions,
        called=called,
        results=results,
        tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice")),
        json_schema=_json_schema(body),
        max_tokens=max_tokens,
        stop=tuple(str(s) for s in body.get("stop_sequences") or ()),
        prompt=words(prompt),
    )


def message(body: Mapping[str, Any], result: Answer, digest: str) -> dict[str, Any]:
    """The ``message`` of ``result``."""
    content: list[dict[str, Any]] = []
    if result.tool_call is not None:
        call = result.tool_call
        content.append(
            {"type": "tool_use", "id": f"toolu_{call.id}", "name": call.name, "input": call.arguments}
        )
    else:
        content.append({"type": "text", "text": result.text or ""})
    stop_reason = "stop_sequence" if result.stop_sequence is not None else _STOP_REASONS[result.finish]
    return {
        "id": f"msg_{digest}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": result.stop_sequence,
        "usage": {
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    raise BadRequest("messages: each message's content is a string or a list of blocks")


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", "")) if block.get("type") == "text" else f"[{block.get('type', 'block')}]"
            for block in content
            if isinstance(block, dict)
        )
    return json.dumps(content)


def _tools(tools: Any) -> tuple[Tool, ...]:
    if tools is None:
        return ()
    if not isinstance(tools, list):
        raise BadRequest("tools: a list of tools")
    found = []
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise BadRequest("tools: each tool is {name, description, input_schema}")
        schema = tool.get("input_schema")
        if isinstance(schema, dict):  # a server tool (web search…) has a type and no input_schema
            found.append(Tool(tool["name"], schema))
    return tuple(found)


def _tool_choice(choice: Any) -> str:
    if not isinstance(choice, dict):
        return "auto"
    kind = choice.get("type")
    if kind == "tool":
        return str(choice.get("name", ""))
    return {"any": "required", "none": "none"}.get(str(kind), "auto")


def _json_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    config = body.get("output_config")
    for form in (body.get("output_format"), config.get("format") if isinstance(config, dict) else None):
        if isinstance(form, dict) and form.get("type") == "json_schema":
            schema = form.get("schema")
            if not isinstance(schema, dict):
                raise BadRequest("output_format.schema: a JSON Schema is required")
            return schema
    return None
