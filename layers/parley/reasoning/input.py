"""A run's input (``reasoning-format.md``, "How a run works", step 1).

The run applies ``input.default`` (each top-level field the supplied input leaves out takes its default),
then checks the result against ``input.schema``. The input may be at most 256 KiB as JSON and 512 levels
deep; a run without input gets ``{}``. Every failure is ``invalid_input`` with its issues under ``/input``.

The check against the schema is the one interaction runs make (``parley.interaction.prepare.check_input``,
with ``parley.runs.model.invalid_input``); it is written here again, over the same shared helpers, until
the two live in one module both types import.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from parley.documents.json_schema import json_bounds_errors, validate_instance
from parley.errors import ErrorEntry, Problem, capped_errors
from parley.reasoning.document import ReasoningDocument

INPUT_MAX_BYTES: Final = 256 * 1024
INPUT_MAX_DEPTH: Final = 512


def apply_defaults_and_check_input(document: ReasoningDocument, value: Any) -> dict[str, Any]:
    """The run's input: ``value`` (``None`` for none) with ``input.default`` applied, checked.

    Raises :class:`~parley.errors.Problem` ``invalid_input`` when the input is not a JSON object, passes
    its bounds, or (with its defaults) does not match ``input.schema``. The defaults are copied, so the
    result may be changed without changing the document.
    """
    supplied: Any = {} if value is None else value
    if not isinstance(supplied, dict):
        raise input_problem([ErrorEntry("/input", "The input is a JSON object.")])
    bounds = json_bounds_errors(
        supplied, "/input", max_bytes=INPUT_MAX_BYTES, max_depth=INPUT_MAX_DEPTH, what="The input"
    )
    if bounds:
        raise input_problem(bounds)
    merged = {
        **{name: copy.deepcopy(default) for name, default in document.input_default.items()},
        **supplied,
    }
    if document.input_schema is not None:
        errors = validate_instance(merged, document.input_schema, "/input")
        if errors:
            raise input_problem(errors)
    return merged


def input_problem(errors: list[ErrorEntry]) -> Problem:
    """``422 invalid_input`` naming the first issue, with every one (capped) in ``errors``, worded as
    interaction runs word it."""
    capped = capped_errors(errors)
    first = capped[0]
    more = len(errors) - 1
    detail = f"{first.pointer}: {first.detail}" + (f" (and {more} more)" if more > 0 else "")
    return Problem("invalid_input", detail, errors=capped)
