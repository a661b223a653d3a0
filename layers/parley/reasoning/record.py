"""What a run records (``reasoning-format.md``, "What a run records"): the model as requested,
resolved and answered, the settings sent, the output format, why the answer ended, the usage, the
response id, the warnings (at most 20), the call's duration and the rendered prompt.

The output and the record are at most 1 MiB together: when the prompt does not fit beside the answer,
the record keeps the start of the instructions and of the message and says ``truncated: true``; an
answer that does not fit alone is ``conflict``, ``unworkable`` (lower ``config.max_output_tokens``).
A run rejected after its model answered keeps only ``usage`` and ``duration_ms``. No credential and no
provider option is recorded.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Final

from parley.documents.json_schema import json_size
from parley.errors import Problem

if TYPE_CHECKING:
    from parley.models import ModelAnswer
    from parley.reasoning.document import ReasoningDocument
    from parley.reasoning.offer import Offer
    from parley.reasoning.prompt import Prompt

#: The output and the record together.
RECORDED_MAX_BYTES: Final = 1024 * 1024
MAX_WARNINGS: Final = 20


def settings_sent(document: ReasoningDocument) -> dict[str, Any]:
    """The settings sent, with the default ``max_output_tokens`` filled in (unset ones left out)."""
    return {name: value for name, value in asdict(document.settings).items() if value is not None}


def answered_record(answer: ModelAnswer, duration_ms: int) -> dict[str, Any]:
    """The record of a run rejected after its model answered: its usage and the call's duration."""
    return {"usage": answer.usage.as_record(), "duration_ms": duration_ms}


def full_record(
    document: ReasoningDocument,
    offer: Offer,
    prompt: Prompt,
    answer: ModelAnswer,
    output: Any,
    duration_ms: int,
    warnings: list[str],
) -> dict[str, Any]:
    """The record of a succeeded run, fitted with its output into 1 MiB."""
    record: dict[str, Any] = {
        "model": {
            "requested": offer.requested,
            "resolved": offer.resolved,
            "answered": answer.model_answered,
        },
        "settings": settings_sent(document),
        "output_format": document.output_format,
        "finish_reason": answer.finish_reason,
        "raw_finish_reason": answer.raw_finish_reason,
        "usage": answer.usage.as_record(),
        "response_id": answer.response_id,
        "warnings": list(dict.fromkeys([*warnings, *answer.warnings]))[:MAX_WARNINGS],
        "duration_ms": duration_ms,
        "prompt": {"instructions": prompt.instructions, "message": prompt.message, "truncated": False},
    }
    room = RECORDED_MAX_BYTES - json_size(output) - json_size({**record, "prompt": _empty_prompt(prompt)})
    if room < 0:
        raise Problem(
            "conflict",
            f"The answer is too large for the 1 MiB a run records ({json_size(output):,} bytes as JSON): "
            "lower config.max_output_tokens.",
            kind="unworkable",
        )
    if json_size(record["prompt"]) - json_size(_empty_prompt(prompt)) > room:
        record["prompt"] = _cut_prompt(prompt, room)
    return record


def _empty_prompt(prompt: Prompt) -> dict[str, Any]:
    return {"instructions": None if prompt.instructions is None else "", "message": "", "truncated": True}


def _cut_prompt(prompt: Prompt, room: int) -> dict[str, Any]:
    """The start of the instructions and of the message, in ``room`` bytes of JSON between them (the
    instructions first, since they are usually the shorter)."""
    instructions = prompt.instructions
    budget = room
    kept_instructions: str | None = None
    if instructions is not None:
        kept_instructions = _start(
            instructions, budget // 2 if json_size(instructions) > budget // 2 else budget
        )
        budget -= json_size(kept_instructions)
    kept_message = _start(prompt.message, max(0, budget))
    return {"instructions": kept_instructions, "message": kept_message, "truncated": True}


def _start(text: str, room: int) -> str:
    """The longest start of ``text`` whose JSON string takes at most ``room`` bytes (beyond its quotes)."""
    if json_size(text) - 2 <= room:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if json_size(text[:middle]) - 2 <= room:
            low = middle
        else:
            high = middle - 1
    return text[:low]
