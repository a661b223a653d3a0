"""Local data that outlives ``parley serve`` (``http-api.md``, "Local server"): the table's items, the
content bucket's objects, the scheduler's pending work and the manual clock's time, kept in one JSON
file under the data folder (``.parley/`` of the folder the server starts in, ``--data DIR``, or none
with ``--data none``).

The server keeps it as it goes: after each request or piece of timed work that may have changed
something, a background thread writes a new snapshot within a second (further apart once the table holds
tens of thousands of items: reading it holds the server for about 9 µs an item; the file is replaced whole, so
a crash leaves the previous one), and once more when the server stops. On start it loads the snapshot
back: the items into the new table, the objects into the new bucket, the pending schedules into the
scheduler (what falls due while the server was down runs at once), and the clock where it stood; then
every open request's execution is started again, so that answers, expiries and cancels end their waits
as before (the old task tokens died with the process), and so is every started workflow run's: its
machine runs again from its start, meeting the runs it called under the same ids (a call's run id is
derived from the workflow's run, the task and the attempt), so what they recorded answers it at once and
what still waits keeps the new token.

Why a snapshot of our own and not moto's persistence: moto keeps its backends in memory only (its
server mode can save state, but the local server runs moto in process), and what Parley needs back is
small and well defined — the items of one table, one bucket, and timed work the runtime scheduled.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time

if TYPE_CHECKING:
    from parley.aws.content import S3ContentStore
    from parley.definitions.model import PlaybookRef
    from parley.local.scheduler import LocalScheduler
    from parley.runs.model import Request, Run

#: The file of the snapshot inside the data folder.
DATA_FILE: Final = "parley-local.json"
FORMAT_VERSION: Final = 1
#: A write is at most this long after the change it keeps (with a small table; see ``LocalData._run``).
SAVE_WITHIN_SECONDS: Final = 1.0
MAX_SAVE_SPACING_SECONDS: Final = 30.0


def saved_clock(folder: Path) -> datetime | None:
    """The manual clock's time the data folder kept (``None``: no snapshot, or none kept)."""
    path = folder / DATA_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return parse_time(data["clock"]) if isinstance(data, dict) and data.get("clock") else None
    except (OSError, ValueError, KeyError):
        return None  # no file, or one that load() refuses with its own words


@dataclass(frozen=True)
class Restored:
    """What a start found in the data folder."""

    items: int
    objects: int
    schedules: int
    clock: datetime | None


class LocalData:
    """The data folder of one local server: :meth:`load` once at start, :meth:`changed` after each change
    (written in the background), :meth:`close` at stop (written once more)."""

    def __init__(
        self,
        folder: Path,
        *,
        table: str,
        content: S3ContentStore,
        scheduler: LocalScheduler,
        clock_now: Callable[[], datetime],
        lock: threading.RLock,
    ) -> None:
        self.folder = folder
        self.path = folder / DATA_FILE
        self._table = table
        self._content = content
        self._scheduler = scheduler
        self._clock_now = clock_now
        self._lock = lock
        self._dirty = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # --- start ------------------------------------------------------------------------------------

    def load(self) -> Restored | None:
        """Put the snapshot back, if there is one; ``ValueError`` for a file that is not one of ours."""
        if not self.path.exists():
            return None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(
                f"{self.path} is not a Parley data file ({exc}); move it away or pass --data none"
            ) from None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"{self.path} was written by another version of Parley; move it away or pass --data none"
            )
        items = data.get("items") or []
        table = self._moto_table()
        for item in items:  # straight into moto's table: four times as fast as batches through botocore
            table.put_item(item)
        objects = data.get("content") or {}
        for key, text in objects.items():
            self._content.put(key, text)
        schedules = data.get("schedules") or []
        for entry in schedules:
            self._scheduler.schedule(str(entry["name"]), parse_time(entry["at"]), entry["work"])
        clock = parse_time(data["clock"]) if data.get("clock") else None
        return Restored(len(items), len(objects), len(schedules), clock)

    def start(self) -> None:
        """Write changes in the background from now on."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._run, name="parley-data", daemon=True)
        self._thread.start()

    def open_requests(self) -> list[tuple[PlaybookRef, Request]]:
        """Every open request of the table (after :meth:`load`), with its playbook."""
        from parley.dynamo import ItemCodec
        from parley.runs.items import request_from

        codec = ItemCodec()
        from parley.definitions.model import PlaybookRef

        found = []
        for item in self._items():
            plain = codec.plain(item)
            if plain.get("kind") == "request" and plain.get("state") == "open":
                _, org, playbook = str(plain["pk"]).split("#", 2)
                found.append((PlaybookRef(org, playbook), request_from(plain)))
        return found

    def started_workflows(self) -> list[tuple[PlaybookRef, Run]]:
        """Every workflow run still ``started`` (after :meth:`load`), with its playbook."""
        from parley.definitions.model import PlaybookRef
        from parley.dynamo import ItemCodec
        from parley.runs.items import run_from

        codec = ItemCodec()
        found = []
        for item in self._items():
            plain = codec.plain(item)
            if (
                plain.get("kind") == "run"
                and plain.get("type") == "workflow"
                and plain.get("status") == "started"
            ):
                _, org, playbook = str(plain["pk"]).split("#", 2)
                found.append((PlaybookRef(org, playbook), run_from(plain, self._content.get)))
        return found

    # --- as it goes -------------------------------------------------------------------------------

    def changed(self) -> None:
        self._dirty.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            if self._dirty.wait(0.2) and not self._stopping.wait(SAVE_WITHIN_SECONDS / 4):
                self._dirty.clear()
                took = self.save()
                # A snapshot holds the server's AWS lock while it reads the table (about 9 µs an item):
                # with tens of thousands of items, the next waits so that saving holds it at most a
                # tenth of the time.
                self._stopping.wait(min(MAX_SAVE_SPACING_SECONDS, 9 * took))

    def close(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.save()

    def save(self) -> float:
        """Write a snapshot now (the whole file replaced at once); the seconds the table was held."""
        started = time.monotonic()
        with self._lock:  # the table as one moment sees it: no write lands half-way through
            snapshot = {
                "version": FORMAT_VERSION,
                "clock": format_time(self._clock_now()),
                "items": self._items(),
                "content": self._objects(),
                "schedules": self._scheduler.saved(),
            }
        held = time.monotonic() - started
        self.folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".parley-local-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as sink:
                json.dump(snapshot, sink, ensure_ascii=False, separators=(",", ":"))
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return held

    def _items(self) -> list[Mapping[str, Any]]:
        """Every item of the table in DynamoDB's JSON, read from moto's backend in this process: a scan
        through botocore serializes every page (over a minute for 40,000 items); this takes about 9 µs an
        item. (The table has a sort key, so moto keeps its items by partition key, then sort key.)"""
        table = self._moto_table()
        return [
            item.to_json()["Attributes"]
            for by_sort_key in table.items.values()
            for item in by_sort_key.values()
        ]

    def _moto_table(self) -> Any:
        from parley.local.aws import moto_table

        return moto_table(self._table)

    def _objects(self) -> dict[str, str]:
        client, bucket = self._content._client, self._content.bucket
        found: dict[str, str] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for entry in page.get("Contents", []):
                found[entry["Key"]] = self._content.get(entry["Key"])
        return found
