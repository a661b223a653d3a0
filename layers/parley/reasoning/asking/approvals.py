"""Approvals of frozen calls (``agent-runs.md``, "Approvals"): before any request, the call's arguments
are checked against the tool's ``inputSchema`` and its confirmation rendered (a Liquid template over
``arguments``) or previewed (a read-only tool of the same server, called with the same arguments, whose
text is the confirmation). Either failure is the call's ``tool_call_failed`` (``because:
arguments_refused`` or ``confirmation_failed``), told to the model; no request is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from parley.errors import ParleyError

#: The most of a confirmation a request shows (characters); a longer one is cut with an ellipsis.
CONFIRMATION_MAX_CHARS: Final = 8_000


@dataclass(frozen=True)
class ApprovalRule:
    """How a tool's calls are approved: exactly one of ``confirmation`` (a template over ``arguments``)
    and ``preview`` (a tool of the same server)."""

    confirmation: str | None = None
    preview: str | None = None


class ApprovalFailed(ParleyError):
    """No request is made for the call: ``because`` is ``arguments_refused`` or ``confirmation_failed``."""

    def __init__(self, because: str, detail: str) -> None:
        super().__init__(detail)
        self.because = because
        self.detail = detail


def check_arguments(input_schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """The call's arguments against the tool's ``inputSchema``; :class:`ApprovalFailed` naming each
    problem."""
    from parley.documents.json_schema import validate_instance

    errors = validate_instance(dict(arguments), dict(input_schema), "/arguments")
    if errors:
        words = "; ".join(f"{entry.pointer}: {entry.detail}" for entry in errors[:5])
        raise ApprovalFailed(
            "arguments_refused", f"The arguments do not match the tool's input schema: {words}"
        )


def confirmation_text(rule: ApprovalRule, arguments: Mapping[str, Any], preview: Callable[[str], str]) -> str:
    """The text the person approves: the rendered confirmation, or what ``preview(tool)`` returns (the
    caller calls the preview tool, raising :class:`ApprovalFailed` when it fails)."""
    from parley.templates.render import RenderFailure, render_text

    if rule.preview is not None:
        text = preview(rule.preview)
    else:
        assert rule.confirmation is not None
        try:
            text = render_text(rule.confirmation, {"arguments": dict(arguments)})
        except RenderFailure as failure:
            raise ApprovalFailed(
                "confirmation_failed", f"The confirmation could not be rendered: {failure}"
            ) from None
    if not text.strip():
        raise ApprovalFailed(
            "confirmation_failed", "The confirmation is empty, so there is nothing to approve."
        )
    if len(text) > CONFIRMATION_MAX_CHARS:
        text = text[: CONFIRMATION_MAX_CHARS - 1] + "…"
    return text
