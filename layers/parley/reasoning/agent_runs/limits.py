"""The limits a run's calls are checked against (``reasoning-format.md``, "Limits on calls", "Limits on
time and failures").

"The runtime checks each call before it sends it:

- A run makes at most 25 calls; any further call is refused.
- A call that sends more than 16 KiB of arguments is refused.
- A third call of the same tool with the same arguments is refused, and the model is pointed to the
  result of the earlier call.

A refused call is not sent and not recorded, and the model is told why."

:class:`CallLimits` checks a call (:meth:`CallLimits.check`, in that order) and records each call that
is sent (:meth:`CallLimits.record`). Arguments are measured and compared as canonical JSON (keys
sorted, compact, UTF-8), so the same arguments in another key order are the same call. The earlier
call a third one is pointed to is the latest of the two.

It also counts the run's server failures ("Server failures in one run: 5. The run ends with
``because: "server_failed"``"), and :func:`wait_for_rate_limit` says whether a 429 is waited out ("A
429 from a tool server: waited out when ``Retry-After`` asks for at most 10 seconds; otherwise a server
failure").

The loop keeps the state between steps (in DynamoDB): :meth:`CallLimits.as_json` and
:meth:`CallLimits.from_json`. It holds a digest of each call's name and arguments, not the arguments.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from parley.models import ToolCall, ToolResult

#: "A run makes at most 25 calls."
MAX_CALLS: Final = 25
#: "A call that sends more than 16 KiB of arguments is refused."
ARGUMENTS_MAX_BYTES: Final = 16 * 1024
#: "A third call of the same tool with the same arguments is refused": two are made.
SAME_CALL_MAX: Final = 2
#: "Server failures in one run: 5."
MAX_SERVER_FAILURES: Final = 5
#: "Waited out when Retry-After asks for at most 10 seconds."
RATE_LIMIT_WAIT_MAX_SECONDS: Final = 10.0
#: "One call: 30 seconds. A tool error that counts as a server failure."
CALL_SECONDS: Final = 30.0

RefusedBecause = Literal["calls_used", "arguments_too_large", "same_call", "arguments_not_object"]


@dataclass(frozen=True)
class Refusal:
    """Why a call was not made: ``words`` is what the model is told (as a tool error);
    ``earlier_call`` is the call a third identical one is pointed to."""

    because: RefusedBecause
    words: str
    earlier_call: int | None = None

    def result_for(self, call: ToolCall) -> ToolResult:
        """What the model is given back for the refused ``call``: a tool error with the words."""
        return ToolResult(call.id, call.name, self.words, is_error=True)


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """The arguments as canonical JSON: keys sorted, compact, not ASCII-escaped."""
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def arguments_size(arguments: Mapping[str, Any]) -> int:
    """The bytes a call's arguments take as canonical JSON (UTF-8)."""
    return len(canonical_arguments(arguments).encode("utf-8", "surrogatepass"))


def call_digest(call_name: str, arguments: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the tool's name and its canonical arguments: the same call has the same one."""
    text = f"{call_name}\n{canonical_arguments(arguments)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def arguments_not_object(call_name: str) -> Refusal:
    """A call whose arguments are not a JSON object (``ToolCall.arguments`` is ``None``)."""
    return Refusal(
        "arguments_not_object",
        f"This call was not made: the arguments of {call_name} must be a JSON object.",
    )


@dataclass
class CallLimits:
    """A run's calls and server failures so far."""

    calls: int = 0
    server_failures: int = 0
    #: call digest -> the numbers of the calls made with it, in order
    made: dict[str, list[int]] = field(default_factory=dict)
    #: call number -> the id the model gave it, when the loop said
    ids: dict[int, str] = field(default_factory=dict)

    def spent(self) -> bool:
        """Whether the run has used all its calls (25): "Once the run has used all its calls, […] the
        model answers from what it has, without tools", so the next step is the last."""
        return self.calls >= MAX_CALLS

    def server_failures_spent(self) -> bool:
        """Whether the run has had its 5 server failures: it ends with ``because: "server_failed"``."""
        return self.server_failures >= MAX_SERVER_FAILURES

    def check(self, call_name: str, arguments: Mapping[str, Any]) -> Refusal | None:
        """Why the call may not be made, or ``None`` when it may."""
        if self.calls >= MAX_CALLS:
            return Refusal("calls_used", f"This call was not made: a run makes at most {MAX_CALLS} calls.")
        size = arguments_size(arguments)
        if size > ARGUMENTS_MAX_BYTES:
            return Refusal(
                "arguments_too_large",
                f"This call was not made: its arguments are {size:,} bytes; a call sends at most "
                f"{ARGUMENTS_MAX_BYTES // 1024} KiB.",
            )
        earlier = self.made.get(call_digest(call_name, arguments), [])
        if len(earlier) >= SAME_CALL_MAX:
            number = earlier[-1]
            known = self.ids.get(number)
            which = f"call {number} above" + (f" (id {known})" if known else "")
            return Refusal(
                "same_call",
                f"This call was not made: it is the third call of {call_name} with the same arguments; its "
                f"result is the result of {which}.",
                earlier_call=number,
            )
        return None

    def record(
        self,
        call_name: str,
        arguments: Mapping[str, Any],
        call_number: int | None = None,
        call_id: str | None = None,
    ) -> int:
        """Count a call that is sent (``tool_call_started``) and return its number: ``call_number`` when
        given, else the next one (1 for the first). ``call_id`` is the id the model gave it: a third
        identical call's words then name it."""
        self.calls += 1
        number = self.calls if call_number is None else call_number
        self.made.setdefault(call_digest(call_name, arguments), []).append(number)
        if call_id is not None:
            self.ids[number] = call_id
        return number

    def server_failed(self) -> bool:
        """Count a server failure; whether the run has now reached its 5 and ends with
        ``because: "server_failed"``."""
        self.server_failures += 1
        return self.server_failures_spent()

    def as_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "server_failures": self.server_failures,
            "made": {digest: list(numbers) for digest, numbers in self.made.items()},
            "ids": {str(number): call_id for number, call_id in self.ids.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallLimits:
        return cls(
            calls=int(data.get("calls", 0)),
            server_failures=int(data.get("server_failures", 0)),
            made={str(digest): [int(n) for n in numbers] for digest, numbers in data.get("made", {}).items()},
            ids={int(number): str(call_id) for number, call_id in data.get("ids", {}).items()},
        )


def wait_for_rate_limit(retry_after_seconds: float | None) -> float | None:
    """The seconds to wait before calling again after a 429, or ``None``: the 429 is a server failure
    (no ``Retry-After``, or one over 10 seconds). A ``Retry-After`` already past waits 0 seconds."""
    if retry_after_seconds is None or not math.isfinite(retry_after_seconds):
        return None
    if retry_after_seconds > RATE_LIMIT_WAIT_MAX_SECONDS:
        return None
    return max(0.0, float(retry_after_seconds))
