"""``deliver.sent`` (``interaction-format.md``, "`deliver.sent`"): what a message was delivered as — the
conversation and the message id read from the tool's answer at the pointers the document gives.

Read after each delivery (``parley.interaction.delivery``) and after each telling of a reply
(``parley.interaction.replies.conversations``, whose own message later reads pass over); a module of
its own below both, so neither imports the other for it (issue 30: no module circle).
"""

from __future__ import annotations

from typing import Any


def sent_values(answer: Any, pointers: dict[str, str]) -> tuple[dict[str, str] | None, str | None]:
    """``deliver.sent`` read from the tool's answer: each a text or a whole number of at most 256 bytes
    with no control character (a number as its decimal text); else ``None`` and why."""
    from parley.documents.pointers import identity_text, resolve_pointer

    found: dict[str, str] = {}
    for name in ("conversation", "id"):
        pointer = pointers[name]
        present, value = resolve_pointer(answer, pointer)
        text = identity_text(value) if present else None
        if text is None:
            what = "nothing" if not present else "no text or whole number of at most 256 bytes"
            return None, (
                f"deliver.sent.{name} ({pointer!r}) points at {what} in the tool's answer, so the history "
                "does not say what the message was delivered as, and the request takes no reply."
            )
        found[name] = text
    return found, None


__all__ = ["sent_values"]
