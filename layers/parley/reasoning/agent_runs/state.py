"""An agent run's work kept while it waits (``agent-runs.md``, "A run that waits": "its conversation so
far is kept in the store"): the conversation's turns, exactly as the provider needs them back (their
``provider_state``), and the usage of each model call, as JSON.

The loop's own counters (calls, budget, time worked) are kept by their owners' ``as_json``; this module
only writes and reads the values of ``parley.models.providers.base``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parley.models import ToolCall, ToolResult, Turn, Usage


def call_json(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "name": call.name,
        "arguments": None if call.arguments is None else dict(call.arguments),
        "arguments_text": call.arguments_text,
    }


def call_from(data: Mapping[str, Any]) -> ToolCall:
    arguments = data.get("arguments")
    return ToolCall(
        str(data["id"]),
        str(data["name"]),
        dict(arguments) if isinstance(arguments, Mapping) else None,
        data.get("arguments_text"),
    )


def result_json(result: ToolResult) -> dict[str, Any]:
    return {
        "call_id": result.call_id,
        "name": result.name,
        "content": result.content,
        "is_error": result.is_error,
    }


def result_from(data: Mapping[str, Any]) -> ToolResult:
    return ToolResult(str(data["call_id"]), str(data["name"]), str(data["content"]), bool(data["is_error"]))


def turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "role": turn.role,
        "text": turn.text,
        "tool_calls": [call_json(call) for call in turn.tool_calls],
        "results": [result_json(result) for result in turn.results],
        "provider_state": turn.provider_state,
    }


def turn_from(data: Mapping[str, Any]) -> Turn:
    return Turn(
        "assistant" if data["role"] == "assistant" else "tool",
        text=str(data.get("text") or ""),
        tool_calls=tuple(call_from(call) for call in data.get("tool_calls") or ()),
        results=tuple(result_from(result) for result in data.get("results") or ()),
        provider_state=data.get("provider_state"),
    )


_USAGE_FIELDS = (
    "input_uncached",
    "input_cache_read",
    "input_cache_write",
    "output_text",
    "output_reasoning",
    "total",
)


def usage_json(usage: Usage) -> dict[str, int | None]:
    return {name: getattr(usage, name) for name in _USAGE_FIELDS}


def usage_from(data: Mapping[str, Any]) -> Usage:
    return Usage(**{name: (None if data.get(name) is None else int(data[name])) for name in _USAGE_FIELDS})
