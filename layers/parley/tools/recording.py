"""How a tool call is recorded and how a server's failure before the call is told, shared by ``execute``
(``parley.tools.service``) and the runs of functions with ``call`` (``parley.interaction.call``).

``reasoning-format.md``, "The run's history"; ``interaction-format.md``, "The run's history":

- ``tool_call_started``: ``call_id`` (shared by the call's two events), ``server``, ``tool``,
  ``arguments_size``, ``read_only``, and, when the server's ``record_content`` is on, ``arguments``
  (scrubbed of secrets) with their SHA-256 ``arguments_digest``;
- ``tool_call_answered``: ``is_error``, ``result_size``, ``duration_ms``, ``jsonrpc_id``, and when kept
  ``result`` with ``result_digest``;
- ``tool_call_failed``: ``because`` (``server_failure``, ``timed_out`` or ``arguments_refused``), the
  scrubbed ``message``, ``duration_ms`` and ``jsonrpc_id``.

The digests are of the content as kept (canonical JSON), so a reader can check one against the other.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Final

from parley.errors import Problem
from parley.ports.tools import ListedTool, ToolAnswer, ToolServerFailure
from parley.tools.servers import ResolvedServer

if TYPE_CHECKING:
    from parley.config import ToolServer


def started_data(
    server: ToolServer,
    resolved: ResolvedServer,
    call_id: str,
    tool: ListedTool,
    arguments: Any,
    arguments_size: int,
) -> dict[str, Any]:
    """``tool_call_started``'s data (a caller adds its own fields, such as ``executed_by``)."""
    data: dict[str, Any] = {
        "call_id": call_id,
        "server": server.name,
        "tool": tool.name,
        "arguments_size": arguments_size,
        "read_only": tool.read_only,
    }
    if server.record_content:
        kept = resolved.scrub(arguments)
        data["arguments"] = kept
        data["arguments_digest"] = content_digest(kept)
    return data


#: The most of a tool's result one event keeps (bytes as JSON): what a function's ``read`` may take
#: ("Bounds"), kept in the content store past 64 KiB (``parley.ports.content``). Larger results are kept as
#: their size and digest.
KEPT_CONTENT_MAX: Final = 1024 * 1024


def answered_data(
    server: ToolServer, resolved: ResolvedServer, call_id: str, answer: ToolAnswer
) -> dict[str, Any]:
    """``tool_call_answered``'s data."""
    from parley.documents.json_schema import json_size

    data: dict[str, Any] = {
        "call_id": call_id,
        "server": server.name,
        "tool": answer.tool.name,
        "is_error": answer.is_error,
        "result_size": json_size(answer.result),
        "duration_ms": answer.duration_ms,
        "jsonrpc_id": answer.jsonrpc_id,
    }
    if server.record_content:
        kept = resolved.scrub(answer.result)
        data["result_digest"] = content_digest(kept)
        if json_size(kept) <= KEPT_CONTENT_MAX:
            data["result"] = kept
        else:  # past 1 MiB the event keeps the result's size and digest only
            data["result_kept"] = False
    return data


def failed_data(
    server: ToolServer, resolved: ResolvedServer, call_id: str, tool: str, failure: ToolServerFailure
) -> dict[str, Any]:
    """``tool_call_failed``'s data."""
    return {
        "call_id": call_id,
        "server": server.name,
        "tool": tool,
        "because": failure.history_because,
        "message": resolved.scrub(failure.detail),
        "duration_ms": failure.duration_ms,
        "jsonrpc_id": failure.jsonrpc_id,
    }


def server_failed(failure: ToolServerFailure, resolved: ResolvedServer) -> Problem:
    """``503 unavailable``, kind ``tool_server_failed``, with the failure's ``because`` (and
    ``Retry-After`` when a rate-limiting server said how long to wait): nothing took effect."""
    headers: dict[str, str] = {}
    if failure.because == "rate_limited" and failure.retry_after_seconds is not None:
        headers["Retry-After"] = str(max(0, round(failure.retry_after_seconds)))
    return Problem(
        "unavailable",
        resolved.scrub(failure.detail),
        kind="tool_server_failed",
        because=failure.because,
        headers=headers,
    )


def refused_call(failure: ToolServerFailure) -> bool:
    """Whether a failure on the call itself was the server refusing it (429, or a refused key): the
    tool did not run, so the call had no effect."""
    return failure.because in ("rate_limited", "key_refused")


def content_digest(value: Any) -> str:
    """The SHA-256 of ``value``'s canonical JSON, as hex."""
    from parley.documents.json_schema import canonical_json

    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()
