"""Following a run until it ends (``run --wait``, ``events --follow``): the run read, then its history
(``get_run_history``, every page), each event not seen before handed on in the order the history gives,
until the run is no longer ``started``.

Reading the run before its history means that when the run has ended, the history read after holds its
ending. A workflow's history is made whole by its type (a task's events among its calls'), so events are
told apart by id rather than by place. Polling is plain and gentle: one run and one history read a
second by default; Ctrl-C stops the following, never the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from parley.client.connection import Connection
from parley.client.exits import STILL_RUNNING, CommandError

ENDED: Final = frozenset({"succeeded", "rejected", "failed"})


def history(connection: Connection, run_id: str) -> Iterator[dict[str, Any]]:
    """Every event of the run's history, page after page."""
    cursor: str | None = None
    while True:
        page = connection.get(f"/runs/{run_id}/history", {"limit": 100, "cursor": cursor})
        yield from page.get("events") or ()
        cursor = page.get("next_cursor")
        if not cursor:
            return


def follow(
    connection: Connection,
    run_id: str,
    on_event: Callable[[dict[str, Any]], None],
    *,
    interval: float = 1.0,
    timeout: float | None = None,
    seen: set[str] | None = None,
) -> dict[str, Any]:
    """The run once it has ended, each new event of its history given to ``on_event`` on the way;
    ``CommandError`` with ``STILL_RUNNING`` when ``timeout`` seconds pass first."""
    known = set() if seen is None else seen
    started = time.monotonic()
    while True:
        run: dict[str, Any] = connection.get(f"/runs/{run_id}")
        for event in history(connection, run_id):
            if event.get("id") not in known:
                known.add(str(event.get("id")))
                on_event(event)
        if run.get("status") in ENDED:
            return run
        if timeout is not None and time.monotonic() - started >= timeout:
            raise CommandError(
                STILL_RUNNING,
                f"The run {run_id} is still {run.get('status')} after {timeout:g} s; it goes on: "
                f"parley show {run_id}",
            )
        time.sleep(interval)
