"""The demo chat's failure switch: make the next calls of a tool fail, on command, for tests.

``POST /api/failures {"tool": "post_message", "count": 2, "mode": "error", "seconds": 1}`` arms one
switch per tool (a new one replaces the old); each of the next ``count`` calls of that tool fails, then
the tool works again. ``GET /api/failures`` shows what is armed; ``DELETE /api/failures`` disarms all.

The modes are the failures a delivery meets (``interaction-format.md``, "Attempts"):

- ``error``: the tool answers a tool error (``is_error``), as a chat refusing the call would;
- ``server_error``: the MCP endpoint answers HTTP 500 to the call, before any tool runs;
- ``retry_after``: the MCP endpoint answers HTTP 429 with ``Retry-After: seconds``, before any tool runs;
- ``slow``: the tool waits ``seconds`` and then does its work and answers as usual (a caller that gave
  up meanwhile finds the message posted all the same, as with a real slow server).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal, get_args

Mode = Literal["error", "server_error", "slow", "retry_after"]
MODES: Final[tuple[str, ...]] = get_args(Mode)
#: Failures the HTTP front gives before the MCP server sees the call; the tools give the others.
HTTP_MODES: Final = frozenset({"server_error", "retry_after"})
TOOL_MODES: Final = frozenset({"error", "slow"})
MAX_COUNT: Final = 1000
MAX_SECONDS: Final = 600.0


@dataclass(frozen=True)
class Failure:
    tool: str
    mode: Mode
    count: int
    seconds: float = 1.0

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class FailureSwitch:
    """The armed failures, one per tool, shared by the HTTP front and the tools."""

    def __init__(self, tools: frozenset[str]) -> None:
        self.tools = tools
        self._lock = threading.Lock()
        self._armed: dict[str, Failure] = {}

    def arm(self, body: object) -> Failure:
        """Arm from a request body; ``ValueError`` says what is wrong with it."""
        if not isinstance(body, dict):
            raise ValueError('the body is a JSON object such as {"tool": "post_message", "count": 1}')
        unknown = sorted(set(body) - {"tool", "count", "mode", "seconds"})
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r} (fields: tool, count, mode, seconds)")
        tool, count = body.get("tool"), body.get("count", 1)
        mode, seconds = body.get("mode", "error"), body.get("seconds", 1)
        if tool not in self.tools:
            raise ValueError(f"tool is one of {', '.join(sorted(self.tools))}")
        if mode not in MODES:
            raise ValueError(f"mode is one of {', '.join(MODES)}")
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
            raise ValueError(f"count is a whole number from 0 (disarm) to {MAX_COUNT}")
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not 0 <= seconds <= MAX_SECONDS
        ):
            raise ValueError(f"seconds is a number from 0 to {MAX_SECONDS:g}")
        failure = Failure(tool=tool, mode=mode, count=count, seconds=float(seconds))
        with self._lock:
            if count:
                self._armed[tool] = failure
            else:
                self._armed.pop(tool, None)
        return failure

    def take(self, tool: str, modes: frozenset[str]) -> Failure | None:
        """The failure this call of ``tool`` must give, if one of ``modes`` is armed; it counts as used."""
        with self._lock:
            failure = self._armed.get(tool)
            if failure is None or failure.mode not in modes:
                return None
            if failure.count > 1:
                self._armed[tool] = Failure(failure.tool, failure.mode, failure.count - 1, failure.seconds)
            else:
                del self._armed[tool]
            return failure

    def armed(self) -> list[Failure]:
        with self._lock:
            return [self._armed[tool] for tool in sorted(self._armed)]

    def clear(self) -> None:
        with self._lock:
            self._armed.clear()
