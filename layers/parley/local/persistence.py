"""Local data that outlives ``parley serve`` (``http-api.md``, "Local server"; issue 27): the table's
items, the content bucket's objects, the scheduler's pending work and the manual clock's time, kept in
the data folder (``.parley/`` of the folder the server starts in, ``--data DIR``, or none with ``--data
none``).

**Durable before acknowledged.** Every write is kept as it is made, in the folder's write-ahead journal
(``parley.local.journal``: SQLite in WAL mode, group-committed, ``fsync``-ed, compacted in the
background): the store's writes (the emulated DynamoDB client tells :class:`LocalData` the image of each
item it touched, ``parley.local.aws.WriteLog``), the content bucket's puts, the scheduler's schedules of
timer work and their ends, the manual clock's moves. The server waits for :meth:`LocalData.durable`
after each request and before its response, so whatever a response reports is on disk when the client
reads it: the time from a response to its write being on disk is 0 by construction. A write no response
reported yet (timed work, a run's execution between requests) is on disk within one commit (about a
millisecond here).

On start it loads what the folder kept: the items into the new table (straight into moto's backend), the
objects into the new bucket, the pending schedules into the scheduler (what falls due while the server
was down runs at once), and the clock where it stood; then every open request's execution is started
again, so that answers, expiries and cancels end their waits as before (the old task tokens died with
the process), and so is every started workflow run's: its machine runs again from its start, meeting the
runs it called under the same ids (a call's run id is derived from the workflow's run, the task and the
attempt), so what they recorded answers it at once and what still waits keeps the new token.

Reading it back is quick (``make bench``: 30,003 items and 10,000 schedules, 10,000 open requests, in
about 0.8 s): each item is decoded straight into moto's values (:func:`moto_items`) with the cyclic
garbage collector paused. The executions are started again (the revival) once the server answers.

A folder written by an earlier version (one JSON snapshot, ``parley-local.json``) is read once and
moved aside as ``parley-local.json.imported``.

Why a store of our own and not moto's persistence: moto keeps its backends in memory only (its server
mode can save state, but the local server runs moto in process), and what Parley needs back is small and
well defined — the items of one table, one bucket, and timed work the runtime scheduled.
"""

from __future__ import annotations

import gc
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from parley.clock import parse_time
from parley.local.journal import (
    Journal,
    clock_change,
    item_change,
    object_change,
    schedule_change,
    schedule_end,
)

if TYPE_CHECKING:
    from parley.aws.content import S3ContentStore
    from parley.definitions.model import PlaybookRef
    from parley.local.scheduler import LocalScheduler
    from parley.runs.model import Request, Run

#: The snapshot an earlier version kept (read once, then moved aside).
DATA_FILE: Final = "parley-local.json"
FORMAT_VERSION: Final = 1


def saved_clock(folder: Path) -> datetime | None:
    """The manual clock's time an earlier version's snapshot kept (``None``: no snapshot, or none kept)."""
    path = folder / DATA_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return parse_time(data["clock"]) if isinstance(data, dict) and data.get("clock") else None
    except (OSError, ValueError, KeyError):
        return None  # no file, or one that load() refuses with its own words


def stored_clock(journal: Journal) -> datetime | None:
    """The manual clock's time the data folder kept."""
    return journal.clock or (saved_clock(journal.folder) if journal.fresh else None)


@dataclass(frozen=True)
class Restored:
    """What a start found in the data folder."""

    items: int
    objects: int
    schedules: int
    clock: datetime | None
    #: Pages of the journal a crash left uncompacted, replayed at the start.
    journal_pages: int = 0
    #: How long reading the folder back took.
    seconds: float = 0.0


class LocalData:
    """The data folder of one local server: :meth:`load` once at start, then :meth:`keep` (its writes
    journaled from then on), :meth:`durable` before each response, :meth:`close` at stop."""

    def __init__(
        self,
        folder: Path,
        *,
        table: str,
        content: S3ContentStore,
        scheduler: LocalScheduler,
        clock_now: Callable[[], datetime],
        lock: threading.RLock,
        journal: Journal | None = None,
    ) -> None:
        self.folder = folder
        self.journal = journal if journal is not None else Journal(folder)
        self._table = table
        self._content = content
        self._scheduler = scheduler
        self._clock_now = clock_now
        self._lock = lock
        self._clients: tuple[Any, ...] = ()

    # --- start ------------------------------------------------------------------------------------

    def load(self) -> Restored | None:
        """Put back what the folder kept (``None``: a new folder); ``ValueError`` for a file not ours.

        The cyclic garbage collector waits meanwhile: the hundreds of thousands of objects a large table
        makes (none of them garbage) would set it off every 700 and make it walk them all again and
        again, which more than doubled the time."""
        gc.disable()
        try:
            return self._load()
        finally:
            gc.enable()

    def _load(self) -> Restored | None:
        started = time.monotonic()
        journal = self.journal
        if journal.fresh and (self.folder / DATA_FILE).exists():
            restored = self._import_snapshot()
            self.save()
            (self.folder / DATA_FILE).replace(self.folder / f"{DATA_FILE}.imported")
            return replace(restored, seconds=time.monotonic() - started)
        if journal.fresh:
            return None
        items = self._put_items(journal.read_item_texts())
        objects = 0
        client = self._content._client
        for key, body in journal.read_objects():  # the client tells no one yet: nothing to keep again
            client.put_object(Bucket=self._content.bucket, Key=key, Body=body, ContentType="application/json")
            objects += 1
        schedules = journal.read_schedules()
        for name, key, at, work in schedules:
            self._scheduler.restore(name, key, at, work)
        return Restored(
            items,
            objects,
            len(schedules),
            journal.clock,
            journal_pages=journal.replayed_pages,
            seconds=time.monotonic() - started,
        )

    def _put_items(self, items: Iterable[str]) -> int:
        """Items straight into moto's table, as its ``put_item`` stores them, without the checks the
        items passed when they were written (4 times as fast as ``put_item``, which is 4 times as fast
        as batches through botocore)."""
        table = self._moto_table()
        hash_name, range_name = table.hash_key_attr, table.range_key_attr
        count = 0
        moto_item = moto_items(hash_name, range_name)
        with self._lock:
            for text in items:
                item = moto_item(text)
                if range_name is None:
                    table.items[item.hash_key] = item
                else:
                    table.items[item.hash_key][item.range_key] = item
                count += 1
        return count

    def _import_snapshot(self) -> Restored:
        """The snapshot of an earlier version, put back as that version did."""
        path = self.folder / DATA_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(
                f"{path} is not a Parley data file ({exc}); move it away or pass --data none"
            ) from None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"{path} was written by another version of Parley; move it away or pass --data none"
            )
        items = self._put_items(json.dumps(item) for item in data.get("items") or [])
        objects = data.get("content") or {}
        for key, text in objects.items():
            self._content.put(key, text)
        schedules = data.get("schedules") or []
        for entry in schedules:
            self._scheduler.schedule(str(entry["name"]), parse_time(entry["at"]), entry["work"])
        clock = parse_time(data["clock"]) if data.get("clock") else None
        return Restored(items, len(objects), len(schedules), clock)

    def keep(self, dynamodb: Any, manual_clock: Any | None = None) -> None:
        """From now on, keep every write of ``dynamodb`` (a client of ``parley.local.aws``), of the
        content bucket, of the scheduler and of ``manual_clock`` (a ``ManualClock``)."""
        from parley.local.aws import journal_writes

        self.journal.start()
        self._clients = (dynamodb, self._content._client)
        for client in self._clients:
            journal_writes(client, self)
        self._scheduler.journal = self
        if manual_clock is not None:
            manual_clock.on_move = self.clock_moved

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
                found.append((PlaybookRef(*_playbook_of(str(plain["pk"]))), request_from(plain)))
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
                found.append(
                    (PlaybookRef(*_playbook_of(str(plain["pk"]))), run_from(plain, self._content.get))
                )
        return found

    def ended_requests_of_started_runs(self) -> list[tuple[PlaybookRef, Request]]:
        """Every request that has ended while its run is still ``started`` (after :meth:`load`): an agent
        run between its steps, or a run that never took its request's ending (issue 26)."""
        from parley.definitions.model import PlaybookRef
        from parley.dynamo import ItemCodec
        from parley.runs.items import request_from

        codec = ItemCodec()
        started: set[tuple[str, str]] = set()
        ended: list[tuple[str, dict[str, Any]]] = []
        for item in self._items():
            plain = codec.plain(item)
            if plain.get("kind") == "run" and plain.get("status") == "started":
                started.add((str(plain["pk"]), str(plain["run_id"])))
            elif plain.get("kind") == "request" and plain.get("state") != "open":
                ended.append((str(plain["pk"]), plain))
        found = []
        for pk, plain in ended:
            if (pk, str(plain["run_id"])) in started:
                found.append((PlaybookRef(*_playbook_of(pk)), request_from(plain)))
        return found

    # --- as it goes: what the writes left (parley.local.aws.WriteLog, scheduler.ScheduleJournal) -------

    def items_written(self, table: str, images: list[tuple[Any, Any, Mapping[str, Any] | None]]) -> None:
        if table == self._table:
            self.journal.append(*(item_change(pk, sk, image) for pk, sk, image in images))

    def object_written(self, bucket: str, key: str, body: bytes) -> None:
        if bucket == self._content.bucket:
            self.journal.append(object_change(key, body))

    def scheduled(self, name: str, key: str, at: datetime, work: Mapping[str, Any]) -> None:
        self.journal.append(schedule_change(name, key, at, work))

    def unscheduled(self, name: str, key: str) -> None:
        self.journal.append(schedule_end(name, key))

    def clock_moved(self, now: datetime) -> None:
        self.journal.append(clock_change(now))

    def durable(self) -> None:
        """Return once every write made so far is on disk (``parley.local.journal.JournalFailed`` if it
        cannot be): the server calls it before each response."""
        self.journal.sync()

    def changed(self) -> None:
        """Nothing to do: every write is journaled as it is made (kept for callers of the snapshot era)."""

    def close(self) -> None:
        """Commit what is left, compact, and close the journal (the server stops: nothing writes any more)."""
        from parley.local.aws import journal_writes

        self._scheduler.journal = None
        for client in self._clients:
            journal_writes(client, None)
        self.journal.close()

    def save(self) -> float:
        """Write the whole state into the journal at once, replacing what it held (an import, or a
        benchmark's seeding written straight into moto); the seconds the table was held."""
        started = time.monotonic()
        with self._lock:  # the table as one moment sees it: no write lands half-way through
            changes = [item_change(item["pk"], item["sk"], item) for item in self._items()]
            changes += [
                object_change(key, text.encode("utf-8", "surrogatepass"))
                for key, text in self._objects().items()
            ]
        held = time.monotonic() - started
        changes += [
            schedule_change(entry["name"], entry["key"], parse_time(entry["at"]), entry["work"])
            for entry in self._scheduler.saved()
        ]
        changes.append(clock_change(self._clock_now()))
        self.journal.append(
            ("delete from items", ()), ("delete from objects", ()), ("delete from schedules", ()), *changes
        )
        self.journal.sync()
        return held

    def _items(self) -> list[Mapping[str, Any]]:
        """Every item of the table in DynamoDB's JSON, read from moto's backend in this process: a scan
        through botocore serializes every page (over a minute for 40,000 items); this takes about 9 µs an
        item. (The table has a sort key, so moto keeps its items by partition key, then sort key.)"""
        table = self._moto_table()
        with self._lock:
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


#: The Python type of each kind of value in DynamoDB's JSON (``{"S": "text"}``, ``{"M": {...}}``, ...).
_KINDS: Final[dict[str, type]] = {
    "S": str,
    "N": str,
    "B": str,
    "BOOL": bool,
    "NULL": bool,
    "SS": list,
    "NS": list,
    "BS": list,
    "L": list,
    "M": dict,
}


def moto_items(hash_name: str, range_name: str | None) -> Callable[[str], Any]:
    """A reader of an item's JSON (DynamoDB's) into moto's ``Item`` as moto's constructor makes it, in
    about a third of the time: each value becomes a ``DynamoType`` as the JSON decoder makes its
    ``{kind: value}`` object (innermost first, so a map's or a list's values already are), and the
    constructor's item-size check, which it repeats at each attribute (quadratic in the attributes:
    most of a start's time), is left out; the items were checked when they were written.

    An object is a value when its one key is a kind and its value is of that kind's type: a map with
    one attribute named like a kind holds a ``DynamoType`` (a value is always typed), never a ``str``,
    ``bool``, ``list`` or ``dict``, so it stays a map."""
    import json

    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict

    new_value, new_item, kinds = DynamoType.__new__, Item.__new__, _KINDS

    def typed(found: dict[str, Any]) -> Any:
        if len(found) == 1:
            ((kind, inner),) = found.items()
            if type(inner) is kinds.get(kind):
                made = new_value(DynamoType)
                made.type, made.value = kind, inner
                return made
        return found

    decode = json.JSONDecoder(object_hook=typed).decode

    def item(text: str) -> Any:
        attributes = decode(text)
        made: Any = new_item(Item)
        made.attrs = LimitedSizeDict(attributes)  # (its update() checks no size)
        made.hash_key = DynamoType(attributes[hash_name])  # (objects of their own, as the constructor's)
        made.range_key = DynamoType(attributes[range_name]) if range_name is not None else None
        return made

    return item


def _playbook_of(pk: str) -> tuple[str, str]:
    """``(org, playbook)`` of a run's or a request's partition key."""
    from parley.infrastructure.keys import playbook_of

    found = playbook_of(pk)
    if found is None:
        raise ValueError(f"not a playbook's partition key: {pk!r}")
    return found
