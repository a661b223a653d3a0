"""Lists and their cursors (``http-api.md``: lists are newest first, ``limit`` is 1 to 100, 50 when
left out, ``next_cursor`` is ``null`` on the last page): the checks every list makes, in order, and the
cursor bound to the list and its filters, so that a cursor of another list is refused.

Each list reads one index in order and stops at its page (issue 31; ``parley.runs.store``): the
unfiltered lists ``gsi1`` (runs, open requests) or the playbook's own key range (events), a run's events
``gsi2``, and a filter its slot (``parley.runs.items``: runs by name, status or type, open requests by
``to``, events by type), the other filters of a combination checked on what the slot reads. A page reads at
most twice its size and one more item (``parley.runs.store.READ_BOUND_PAGES``: a slot's keys, then
their items): where a filter after the key skips more (an open
request past its expiry that the timer has not ended yet), the page is what was found, possibly short
or empty, with a ``next_cursor`` from where the read stopped, as DynamoDB itself pages. A cursor holds
the position in the index (the time and the run id; an event's id), the same shape as before the
indexes, so cursors given out before them still go on; any other is refused ``400``, "start without a
cursor"."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Final

from parley.definitions.cursor import decode_cursor
from parley.definitions.model import DEFINITION_TYPES, PlaybookRef
from parley.errors import Problem
from parley.runs.ids import is_run_id

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 100

_TIME: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise Problem("bad_request", f"limit is 1 to {MAX_LIMIT}, {DEFAULT_LIMIT} when left out.")


def listing(
    kind: str,
    playbook: PlaybookRef,
    filters: Mapping[str, str | None],
    limit: int,
    cursor: str | None,
    *,
    statuses: tuple[str, ...] = (),
) -> tuple[dict[str, str], str, tuple[str, str] | None]:
    """A newest-first list's checks, in order: the limit, the ``type`` and ``status`` filters, then
    where the cursor (bound to the list and its filters) resumes."""
    check_limit(limit)
    kind_filter, status = filters.get("type"), filters.get("status")
    if kind_filter is not None and kind_filter not in DEFINITION_TYPES:
        raise Problem("bad_request", "type is interaction, reasoning or workflow.")
    if status is not None and status not in statuses:
        raise Problem("bad_request", f"status is one of {', '.join(statuses)}.")
    chosen = {key: value for key, value in filters.items() if value is not None}
    scope = list_scope(kind, playbook, chosen)
    after = _time_position(decode_cursor(scope, cursor)) if cursor is not None else None
    return chosen, scope, after


def list_scope(kind: str, playbook: PlaybookRef, filters: Mapping[str, str]) -> str:
    """What a cursor is bound to: the list, its playbook and its filters."""
    shown = "&".join(f"{key}={value}" for key, value in sorted(filters.items()))
    return f"{kind}/{playbook.org}/{playbook.playbook}?{shown}"


def _time_position(parts: list[str]) -> tuple[str, str]:
    if len(parts) != 2 or not _TIME.match(parts[0]) or not is_run_id(parts[1]):
        raise foreign_cursor()
    return parts[0], parts[1]


def foreign_cursor() -> Problem:
    return Problem("bad_request", "The cursor is not one this list gave out; start without a cursor.")


def since_time(text: str) -> datetime:
    """``since`` of ``list_playbook_events``: a time in ISO 8601 with its offset."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise Problem(
            "bad_request",
            f"since is a time in ISO 8601 with its offset, such as 2026-10-17T10:18:42Z; not {text!r}.",
        )
    return moment
