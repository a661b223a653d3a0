"""What a run records (``reasoning-format.md``, "What a run records"): the output and the record fit in
1 MiB together, the prompt cut to its start with ``truncated: true`` when it does not fit beside the
answer, and an answer too large alone refused as ``unworkable``."""

from __future__ import annotations

import json

import pytest

from parley.errors import Problem
from parley.models.providers.base import ModelAnswer, ProviderSettings, Usage
from parley.reasoning.document import check_reasoning_document
from parley.reasoning.offer import Offer
from parley.reasoning.prompt import Prompt
from parley.reasoning.record import RECORDED_MAX_BYTES, full_record

DOCUMENT = check_reasoning_document("---\nmodel: anthropic/claude-sonnet-4-5\n---\nSay {{ input.x }}\n")
OFFER = Offer(
    "anthropic/claude-sonnet-4-5",
    "anthropic/claude-sonnet-4-5",
    "claude-sonnet-4-5",
    ProviderSettings(provider="anthropic", kind="anthropic"),
    {},
)


def answer(text: str) -> ModelAnswer:
    return ModelAnswer(text, "stop", "end_turn", Usage(input_uncached=10), "msg_1", "claude", ())


def size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def test_a_prompt_that_fits_is_kept_whole() -> None:
    record = full_record(DOCUMENT, OFFER, Prompt("Be brief.", "Say hi"), answer("hi"), "hi", 5, [])

    assert record["prompt"] == {"instructions": "Be brief.", "message": "Say hi", "truncated": False}


def test_a_prompt_that_does_not_fit_beside_the_answer_keeps_its_start_within_1_mib() -> None:
    output = "o" * 700_000
    prompt = Prompt("i" * 200_000, "m" * 200_000)

    record = full_record(DOCUMENT, OFFER, prompt, answer(output), output, 5, [])

    kept = record["prompt"]
    assert kept["truncated"] is True
    assert prompt.instructions is not None and prompt.instructions.startswith(kept["instructions"])
    assert prompt.message.startswith(kept["message"]) and kept["message"]
    assert size(output) + size(record) <= RECORDED_MAX_BYTES


def test_an_answer_too_large_alone_is_unworkable() -> None:
    output = "o" * (RECORDED_MAX_BYTES + 1)

    with pytest.raises(Problem) as raised:
        full_record(DOCUMENT, OFFER, Prompt(None, "m"), answer(output), output, 5, [])

    assert (raised.value.reason, raised.value.kind) == ("conflict", "unworkable")
    assert "max_output_tokens" in raised.value.detail
