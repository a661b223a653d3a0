"""Run ids (``http-api.md``, "Runs"): a UUID the caller may supply, kept in its lowercase form, and the
digest of a run's input that tells a retry under the same id from a new run."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final

from parley.errors import ErrorEntry
from parley.runs.model import invalid_input

_UUID: Final = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_run_id(text: str) -> bool:
    return _UUID.match(text) is not None


def normalized_run_id(text: str) -> str:
    """A caller's run id in its canonical form (lowercase); ``422`` at ``/run_id`` unless a UUID."""
    if not is_run_id(text):
        raise invalid_input(
            [ErrorEntry("/run_id", "A run id is a UUID, such as 0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c.")]
        )
    return text.lower()


def input_digest(input_value: Any) -> str:
    """The SHA-256 of the input's canonical JSON: the same input in any key order is the same run."""
    from parley.documents.json_schema import canonical_json

    return hashlib.sha256(canonical_json(input_value).encode("utf-8", "surrogatepass")).hexdigest()
