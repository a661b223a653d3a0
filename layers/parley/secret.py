"""``Secret``: a text that never shows itself — the operator configuration's principal tokens, tool server
headers, gateway keys and headers and provider settings, and the model providers' keys.

It stands where pydantic's ``SecretStr`` stood (``repr`` and ``str`` show stars, the value is read with
``get_secret_value()`` where it is used) without pydantic's import, which neither the configuration
(``parley.config``) nor the reasoning adapters need otherwise (issue 20: a cold start loads only what its
event uses). It compares equal to any secret of the same value, pydantic's included.
"""

from __future__ import annotations

from typing import Final

_STARS: Final = "**********"


class Secret:
    """A text kept out of ``repr``, ``str``, logs and error messages."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret('{self}')"

    def __str__(self) -> str:
        return _STARS if self._value else ""

    def __len__(self) -> int:
        return len(self._value)

    def __eq__(self, other: object) -> bool:
        read = getattr(other, "get_secret_value", None)
        return callable(read) and read() == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple[type[Secret], tuple[str]]:
        return (Secret, (self._value,))
