"""A run's budget of input tokens, and which step is its last (``reasoning-format.md``, "Limits on
calls").

"A run's model calls use at most the input tokens the operator sets with ``REASONING_MAX_INPUT_TOKENS``,
2,000,000 by default. Before each step, the runtime estimates that step's input from the step before.
When the remaining budget would not cover another step after it, that step is the last, and it is made
without tools."

- :func:`input_tokens`: a step's input tokens from its ``Usage`` (uncached, cache reads and writes).
- :meth:`Budget.after_step` counts a step's input tokens (and keeps its size in bytes, for the next
  estimate). A provider that reports no token count is counted at 4 bytes a token.
- :meth:`Budget.estimate_next`: the last step's input tokens plus the bytes added since (the model's
  message and the calls' results), at the last step's ratio of bytes sent to input tokens counted.
- :meth:`Budget.next_is_last`: the next step is the last when what is left after it would be less than
  it again, the least the step after it could take (each step resends the conversation so far).

The loop keeps the state between steps (in DynamoDB): :meth:`Budget.as_json`, :meth:`Budget.from_json`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from parley.models import Usage

#: The operator's setting, read with the operator's configuration.
MAX_INPUT_TOKENS_VARIABLE: Final = "REASONING_MAX_INPUT_TOKENS"
DEFAULT_MAX_INPUT_TOKENS: Final = 2_000_000
#: The bytes a token is counted at when the provider reports no token count.
BYTES_PER_TOKEN_UNCOUNTED: Final = 4


def input_tokens(usage: Usage) -> int | None:
    """The input tokens a step counts against the budget: uncached, read from the cache and written to
    it; ``None`` when the provider reported none of them."""
    parts = (usage.input_uncached, usage.input_cache_read, usage.input_cache_write)
    if all(part is None for part in parts):
        return None
    return sum(part or 0 for part in parts)


@dataclass
class Budget:
    """The run's input tokens: the most it may use, what its steps used, and the last step's input in
    tokens and bytes."""

    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS
    used: int = 0
    last_input_tokens: int | None = None
    last_bytes_sent: int | None = None

    @property
    def left(self) -> int:
        """What is left of the budget, at least 0."""
        return max(0, self.max_input_tokens - self.used)

    def after_step(self, input_tokens: int | None, bytes_sent: int | None = None) -> None:
        """Count a step that was made: the input tokens the provider counted and the bytes its request
        sent. When the provider did not count (``None``), ``bytes_sent`` is counted at 4 bytes a token;
        with neither, nothing is counted."""
        if input_tokens is None:
            if bytes_sent is None:
                return
            input_tokens = math.ceil(bytes_sent / BYTES_PER_TOKEN_UNCOUNTED)
        self.used += input_tokens
        self.last_input_tokens = input_tokens
        self.last_bytes_sent = bytes_sent

    def estimate_next(self, bytes_added: int) -> int | None:
        """The next step's input tokens, from the step before and the ``bytes_added`` to the conversation
        since; ``None`` before the first step."""
        if self.last_input_tokens is None:
            return None
        if not self.last_bytes_sent or not self.last_input_tokens:  # no ratio: 4 bytes a token
            return self.last_input_tokens + math.ceil(bytes_added / BYTES_PER_TOKEN_UNCOUNTED)
        return self.last_input_tokens + math.ceil(bytes_added * self.last_input_tokens / self.last_bytes_sent)

    def next_is_last(self, estimated_next_input: int | None) -> bool:
        """Whether the next step, of ``estimated_next_input`` tokens, is the run's last, made without
        tools: the budget left after it would not cover another step after it. With no estimate (before
        the first step), only when nothing is left."""
        if estimated_next_input is None:
            return self.left <= 0
        return self.left - estimated_next_input < estimated_next_input

    def as_json(self) -> dict[str, Any]:
        return {
            "max_input_tokens": self.max_input_tokens,
            "used": self.used,
            "last_input_tokens": self.last_input_tokens,
            "last_bytes_sent": self.last_bytes_sent,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Budget:
        def number(key: str) -> int | None:
            value = data.get(key)
            return None if value is None else int(value)

        return cls(
            max_input_tokens=int(data.get("max_input_tokens", DEFAULT_MAX_INPUT_TOKENS)),
            used=int(data.get("used", 0)),
            last_input_tokens=number("last_input_tokens"),
            last_bytes_sent=number("last_bytes_sent"),
        )
