"""The environment's variables that win over the operator configuration's file (``http-api.md``,
"Operator configuration"): ``INTERACTION_OPEN_REQUESTS``, ``REASONING_MAX_INPUT_TOKENS`` and
``WORKFLOW_MAX_DURATION``, applied to the text's data before it is read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from parley.errors import OperatorConfigError

OPEN_REQUESTS_VARIABLE: Final = "INTERACTION_OPEN_REQUESTS"
WORKFLOW_MAX_DURATION_VARIABLE: Final = "WORKFLOW_MAX_DURATION"
REASONING_MAX_INPUT_TOKENS_VARIABLE: Final = "REASONING_MAX_INPUT_TOKENS"


def apply_environment(data: dict[str, Any], source: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """The variables that win over the file: ``INTERACTION_OPEN_REQUESTS`` over
    ``limits.interaction_open_requests``, ``REASONING_MAX_INPUT_TOKENS`` over
    ``models.reasoning_max_input_tokens``, ``WORKFLOW_MAX_DURATION`` over
    ``limits.workflow_max_duration``."""
    for variable, section, key in (
        (OPEN_REQUESTS_VARIABLE, "limits", "interaction_open_requests"),
        (REASONING_MAX_INPUT_TOKENS_VARIABLE, "models", "reasoning_max_input_tokens"),
    ):
        value = _whole_number_variable(environ, variable)
        if value is None:
            continue
        data = _set_in(data, section, key, value)
    duration = environ.get(WORKFLOW_MAX_DURATION_VARIABLE, "").strip()
    if duration:
        data = _set_in(data, "limits", "workflow_max_duration", duration)
    return data


def _set_in(data: dict[str, Any], section: str, key: str, value: Any) -> dict[str, Any]:
    """``data`` with ``section.key`` set (a section that is not a mapping is left to validation)."""
    current = data.get(section)
    if current is None:
        current = {}
    if not isinstance(current, dict):
        return data  # left to validation, which names the section
    return {**data, section: {**current, key: value}}


def _whole_number_variable(environ: Mapping[str, str], variable: str) -> int | None:
    raw = environ.get(variable)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise OperatorConfigError(f"${variable}: expected a whole number, got {raw!r}") from None
    if value < 1:
        raise OperatorConfigError(f"${variable}: must be at least 1, got {value}")
    return value


__all__ = [
    "OPEN_REQUESTS_VARIABLE",
    "REASONING_MAX_INPUT_TOKENS_VARIABLE",
    "WORKFLOW_MAX_DURATION_VARIABLE",
    "apply_environment",
]
