"""Expressions in a workflow document (``workflow-format.md``, "Expressions"): JSONata, written as
``${ … }`` where a value may be one, or bare where the place is always an expression.
"""

from __future__ import annotations

import re
from typing import Final

_WRAPPED: Final = re.compile(r"\A\s*\$\{(?P<body>.*)\}\s*\Z", re.DOTALL)


def expression_body(value: object) -> str | None:
    """The JSONata text of a ``${ … }`` value; ``None`` for any other value (a plain value)."""
    if not isinstance(value, str):
        return None
    match = _WRAPPED.match(value)
    return match.group("body").strip() if match else None


def condition_body(value: str) -> str:
    """The JSONata text of a place that is always an expression (``if``, ``when``, ``for.in``, …):
    with or without ``${ }``."""
    body = expression_body(value)
    return value.strip() if body is None else body
