"""The model's answer checked (``reasoning-format.md``, "How a run works" step 4, "Answers that are
JSON", "How a run ends"; ``output-shapes.md``):

- a refusal under the provider's policy is ``invalid_input`` (422);
- a JSON answer cut off at ``max_output_tokens`` is ``conflict``, ``unworkable`` (raise the limit); a
  text answer cut off succeeds, with ``finish_reason: length`` in the record;
- a JSON answer must parse, nest at most 128 levels, and match ``output.schema`` (as written, whatever
  the provider enforced) or the shape's schema and rules; else ``unavailable`` with the first issues
  (kind ``output_invalid``): try again;
- a text answer is the run's output as a string; a JSON answer is the parsed value.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from parley.documents.json_schema import json_bounds_errors, validate_instance
from parley.errors import ErrorEntry, Problem, capped_errors

if TYPE_CHECKING:
    from parley.models import ModelAnswer
    from parley.reasoning.document import ReasoningDocument

#: "An answer may nest at most 128 levels deep."
ANSWER_MAX_DEPTH: Final = 128
OUTPUT_INVALID: Final = "output_invalid"
#: The output and the record together: "at most 1 MiB".
OUTPUT_MAX_BYTES: Final = 1024 * 1024


def checked_output(document: ReasoningDocument, answer: ModelAnswer) -> Any:
    """The run's output from the model's answer, or the problem that rejects the run."""
    if answer.refused or answer.finish_reason == "content_filter":
        raise Problem(
            "invalid_input",
            "The model refused the content under its provider's policy; change the input or the prompt.",
        )
    if document.output_format == "text":
        return answer.text
    if answer.finish_reason == "length":
        raise Problem(
            "conflict",
            f"The JSON answer was cut off at max_output_tokens ({document.settings.max_output_tokens:,}): "
            "raise config.max_output_tokens.",
            kind="unworkable",
        )
    try:
        value = json.loads(answer.text, parse_constant=_not_a_number)
    except (ValueError, RecursionError):
        raise _invalid([ErrorEntry("/output", "The answer is not JSON.")]) from None
    # The bytes are bounded with the record (``parley.reasoning.record``), not here.
    errors = json_bounds_errors(
        value, "/output", max_depth=ANSWER_MAX_DEPTH, max_bytes=OUTPUT_MAX_BYTES, what="The answer"
    )
    if not errors:
        if document.output_shape is not None:
            from parley.reasoning.shapes import check_shape

            errors = check_shape(document.output_shape, value, "/output")
        else:
            errors = validate_instance(value, document.output_schema, "/output")
    if errors:
        raise _invalid(errors)
    return value


def _not_a_number(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def _invalid(errors: list[ErrorEntry]) -> Problem:
    shown = capped_errors(errors)
    first = "; ".join(f"{entry.pointer}: {entry.detail}" for entry in shown[:3])
    return Problem(
        "unavailable",
        f"The model's JSON answer does not match the output schema ({first}); try again.",
        kind=OUTPUT_INVALID,
        errors=shown,
    )
