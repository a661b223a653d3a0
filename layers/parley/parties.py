"""Whom a request is for, as a run renders it: an interaction function's ``to`` and ``from``, an agent
run's ``ask.to``. A party is text a person's inbox is keyed by, so it is refused (``409 conflict``,
kind ``unworkable``: the definition cannot make this run's request) when it renders empty, with a
control character, or past 256 bytes."""

from __future__ import annotations

import unicodedata
from typing import Final

from parley.errors import Problem

PARTY_MAX_BYTES: Final = 256


def checked_party(text: str, what: str) -> str:
    """``text`` if it can name a party; ``what`` names the field in the problem ("The party (to)")."""
    if not text.strip():
        raise _unworkable(f"{what} renders empty; it must name whom the request is for.")
    control = next((c for c in text if unicodedata.category(c) == "Cc"), None)
    if control is not None:
        raise _unworkable(f"{what} renders with the control character U+{ord(control):04X}.")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > PARTY_MAX_BYTES:
        raise _unworkable(f"{what} renders {size:,} bytes; a party is at most {PARTY_MAX_BYTES} bytes.")
    return text


def _unworkable(detail: str) -> Problem:
    return Problem("conflict", detail, kind="unworkable")
