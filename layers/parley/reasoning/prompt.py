"""A run's prompt (``reasoning-format.md``, "How a run works", step 2, and "The template").

The template renders with ``input`` (after ``input.default`` and the check), ``today`` and ``now`` (the
run's start, in UTC). The system block becomes the system instructions and everything else the one user
message. Failures end the run as interaction renders end it: ``invalid_input`` at ``/input/<field>`` for a
missing field, and at ``/input`` for a filter that refuses a value, a render limit or a message that
renders empty; each names the line of the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from parley.clock import format_time
from parley.errors import ErrorEntry, Problem
from parley.reasoning.document import ReasoningDocument
from parley.reasoning.input import input_problem
from parley.templates import render


@dataclass(frozen=True)
class Prompt:
    """The rendered prompt: the system instructions (``None`` without a system block) and the message."""

    instructions: str | None
    message: str


def render_prompt(document: ReasoningDocument, input: dict[str, Any], now: datetime) -> Prompt:
    """Render ``document``'s template for a run that starts at ``now`` (timezone-aware).

    ``input`` is the run's checked input (:func:`parley.reasoning.input.apply_defaults_and_check_input`).
    Raises :class:`~parley.errors.Problem` ``invalid_input`` when the template cannot render it.
    """
    data = {"input": input, "today": now.astimezone(UTC).strftime("%Y-%m-%d"), "now": format_time(now)}
    try:
        instructions, message = render.render_prompt(
            document.template, data, first_line=document.template_first_line
        )
    except render.RenderFailure as failure:
        raise _invalid(failure) from None
    return Prompt(instructions, message)


def _invalid(failure: render.RenderFailure) -> Problem:
    return input_problem([ErrorEntry(failure.pointer or "/input", str(failure))])
