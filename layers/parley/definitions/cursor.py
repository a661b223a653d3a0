"""Opaque list cursors (``http-api.md``: lists take ``limit`` and ``cursor``).

A cursor is base64url JSON naming the list it belongs to (a digest of its scope, such as the
playbook and type) and where the previous page stopped. A cursor that does not decode, or that
belongs to another list, is ``400 bad_request``: it was not one this list gave out. Nothing in it is
secret, and a forged position can only move within the list it names, since the service builds the
keys from the scope of the request, not from the cursor.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Final

from parley.errors import Problem

_VERSION: Final = 1


def encode_cursor(scope: str, position: list[str]) -> str:
    payload = {"v": _VERSION, "s": _digest(scope), "p": position}
    raw = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(scope: str, cursor: str) -> list[str]:
    """The position in ``cursor``; ``Problem(bad_request)`` if this list did not give it out."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise _not_ours() from None
    if (
        not isinstance(payload, dict)
        or payload.get("v") != _VERSION
        or payload.get("s") != _digest(scope)
        or not isinstance(payload.get("p"), list)
        or not all(isinstance(part, str) for part in payload["p"])
    ):
        raise _not_ours()
    return list(payload["p"])


def _digest(scope: str) -> str:
    return hashlib.sha256(scope.encode("utf-8")).hexdigest()[:16]


def _not_ours() -> Problem:
    return Problem("bad_request", "The cursor is not one this list gave out; start without a cursor.")
