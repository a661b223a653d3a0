"""One call of a playbook's tool for the runtime's own work: a delivery's attempt, a read of a
conversation, a telling (``interaction-format.md``, "Attempts", "Bounds": "A call of the tool, 10 seconds
to open, 30 seconds to respond: a failed attempt or read").

The server must still serve the playbook and allow the tool; its header secrets are resolved; the
call is made once with the client's bounds. Whatever goes wrong comes back as a :class:`CallFailure`
whose ``because`` is the history's word for it (``tool_not_offered``, ``server_failure``,
``timed_out``, ``arguments_refused``, ``tool_error``), with words scrubbed of secrets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from parley.config import ToolServer
    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime
    from parley.ports.tools import ToolAnswer
    from parley.tools.servers import HeaderSecrets, ResolvedServer

#: How much of a tool's error text a failure keeps.
WORDS_MAX_CHARS: Final = 500


@dataclass(frozen=True)
class CallFailure:
    """Why a call (or the work around it) failed: ``because``, its words, a server's ``Retry-After``."""

    because: str
    words: str
    retry_after_seconds: float | None = None
    duration_ms: int | None = None


@dataclass(frozen=True)
class CallAnswer:
    """What the tool returned, the server as resolved (to scrub what is kept), and its configuration."""

    answer: ToolAnswer
    resolved: ResolvedServer
    server: ToolServer


def call_for_playbook(
    runtime: Runtime,
    secrets: HeaderSecrets,
    playbook: PlaybookRef,
    server_name: str,
    tool: str,
    arguments: Any,
) -> CallAnswer | CallFailure:
    """Call ``tool`` of ``server_name`` once for ``playbook``."""
    from parley.ports.tools import ToolNotOffered, ToolServerFailure
    from parley.tools.servers import SecretUnavailable, check_allowed, server_serving

    try:
        server = server_serving(runtime.operator, playbook, server_name)
        check_allowed(server, tool)
        resolved = secrets.resolve(server)
    except ToolNotOffered as not_offered:
        return CallFailure("tool_not_offered", not_offered.detail)
    except SecretUnavailable as unavailable:
        return CallFailure("server_failure", str(unavailable))
    try:
        answer = runtime.tool_client.call_tool(resolved.address, tool, arguments)
    except ToolNotOffered as not_offered:
        return CallFailure("tool_not_offered", not_offered.detail)
    except ToolServerFailure as failure:
        words = resolved.scrub(failure.detail)
        return CallFailure(failure.history_because, words, failure.retry_after_seconds, failure.duration_ms)
    if answer.is_error:
        words = str(resolved.scrub(answer.text or "The tool returned an error without words."))
        return CallFailure("tool_error", clipped(words), None, answer.duration_ms)
    return CallAnswer(answer, resolved, server)


def clipped(text: str) -> str:
    return text if len(text) <= WORDS_MAX_CHARS else text[: WORDS_MAX_CHARS - 1] + "…"
