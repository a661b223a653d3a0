"""The local server's journal (``parley.local.journal``, issue 27): what a crash leaves is the state of
the last whole commit (a torn tail is dropped, never replayed half), concurrent writes share a commit,
and what a compaction wrote plus what was committed after it reads back as the state; and what feeds
it: the emulated DynamoDB client tells the image of every item a write touched
(``parley.local.aws.journal_writes``), the scheduler each schedule of timer work and its end."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from parley.local.journal import (
    JOURNAL_FILE,
    Journal,
    clock_change,
    item_change,
    object_change,
    schedule_change,
    schedule_end,
)

START = datetime(2026, 10, 17, 10, 0, tzinfo=UTC)


def item(pk: str, sk: str, **more: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}, **{name: {"S": value} for name, value in more.items()}}


def put(image: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    return item_change(image["pk"], image["sk"], image)


def crash_image(folder: Path, into: Path) -> Path:
    """The folder's files as a crash would leave them now (the database and its ``-wal`` file as they
    are on disk, nothing compacted or closed)."""
    into.mkdir()
    for path in folder.iterdir():
        if path.name.startswith(JOURNAL_FILE) and not path.name.endswith("-shm"):
            shutil.copy(path, into / path.name)
    return into


def items_of(journal: Journal) -> dict[tuple[str, str], dict[str, Any]]:
    return {(i["pk"]["S"], i["sk"]["S"]): i for i in journal.read_items()}


@pytest.mark.parametrize("damage", ["cut", "garbled"])
def test_a_torn_last_commit_is_dropped_whole(tmp_path: Path, damage: str) -> None:
    journal = Journal(tmp_path / "data")  # not started: each sync commits on the calling thread
    journal.append(put(item("P", "a", v="1")), put(item("P", "b", v="1")))
    journal.sync()
    before = crash_image(journal.folder, tmp_path / "before")
    wal_before = (before / f"{JOURNAL_FILE}-wal").stat().st_size
    journal.append(
        put(item("P", "a", v="2")), put(item("P", "c", v="2")), item_change({"S": "P"}, {"S": "b"}, None)
    )
    journal.sync()
    torn = crash_image(journal.folder, tmp_path / "torn")
    wal = torn / f"{JOURNAL_FILE}-wal"
    size = wal.stat().st_size
    assert size > wal_before  # the second commit is in the -wal file only
    data = bytearray(wal.read_bytes())
    if damage == "cut":  # the crash came in the middle of the second commit's last page
        del data[size - 100 :]
    else:  # its last page reached the disk garbled (its checksum no longer matches)
        data[size - 100] ^= 0xFF
    wal.write_bytes(bytes(data))
    journal.close()

    reopened = Journal(torn)
    assert reopened.replayed_pages > 0
    assert items_of(reopened) == {("P", "a"): item("P", "a", v="1"), ("P", "b"): item("P", "b", v="1")}
    reopened.close()

    whole = Journal(journal.folder)  # the folder closed cleanly: both commits
    assert items_of(whole) == {("P", "a"): item("P", "a", v="2"), ("P", "c"): item("P", "c", v="2")}
    whole.close()


def test_writes_made_during_a_commit_share_the_next_one(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "data")
    journal.start()
    try:
        journal._db_lock.acquire()  # the writer's first commit stays under way until released
        journal.append(put(item("P", "0")))
        first = threading.Thread(target=journal.sync)
        first.start()
        while journal._queue:  # the writer took the first write and waits for the database
            time.sleep(0.001)
        others = []
        for n in range(1, 20):  # meanwhile 19 writes, each waiting for the disk on its own thread
            journal.append(put(item("P", str(n))))
            others.append(threading.Thread(target=journal.sync))
            others[-1].start()
        journal._db_lock.release()
        for thread in [first, *others]:
            thread.join(timeout=30)
        assert (journal.commits, journal.changes) == (2, 20)
        assert len(items_of(journal)) == 20
    finally:
        journal.close()


def test_a_sync_with_nothing_appended_returns_at_once(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "data")
    journal.start()
    journal.sync()
    assert journal.commits == 0
    journal.close()


def test_compaction_then_the_journal_since_read_back_as_the_state(tmp_path: Path) -> None:
    """Random writes of every kind, a compaction in the middle, then a crash: reading the folder back
    gives the state the writes made, as a model of it says."""
    chance = random.Random(27)
    journal = Journal(tmp_path / "data")
    journal.start()
    model: dict[str, Any] = {"items": {}, "objects": {}, "schedules": {}, "clock": None}
    for round_ in range(2):
        for _ in range(300):
            what = chance.choice(["put", "put", "delete", "object", "schedule", "end", "clock"])
            sk = str(chance.randrange(40))
            if what == "put":
                image = item("P", sk, v=str(chance.random()))
                journal.append(put(image))
                model["items"][("P", sk)] = image
            elif what == "delete":
                journal.append(item_change({"S": "P"}, {"S": sk}, None))
                model["items"].pop(("P", sk), None)
            elif what == "object":
                body = chance.randbytes(chance.randrange(1, 5000))
                journal.append(object_change(f"content/{sk}", body))
                model["objects"][f"content/{sk}"] = body
            elif what == "schedule":
                key, at = f"k{chance.random()}", START + timedelta(seconds=chance.randrange(10**6))
                journal.append(schedule_change(f"expire-{sk}", key, at, {"work": "expire", "n": sk}))
                model["schedules"][f"expire-{sk}"] = (key, at, {"work": "expire", "n": sk})
            elif what == "end" and model["schedules"]:
                name = chance.choice(sorted(model["schedules"]))
                key = model["schedules"][name][0] if chance.random() < 0.8 else "another"
                journal.append(schedule_end(name, key))
                if key != "another":
                    del model["schedules"][name]
            elif what == "clock":
                moment = START + timedelta(seconds=chance.randrange(10**6))
                journal.append(clock_change(moment))
                model["clock"] = moment
            if chance.random() < 0.1:
                journal.sync()
        journal.sync()
        if round_ == 0:
            journal.compact()
            assert not (journal.folder / f"{JOURNAL_FILE}-wal").stat().st_size
    crashed = crash_image(journal.folder, tmp_path / "crashed")
    journal.close()

    for folder in (crashed, journal.folder):  # after a crash, and after a clean stop
        reopened = Journal(folder)
        assert items_of(reopened) == model["items"]
        assert dict(reopened.read_objects()) == model["objects"]
        assert {name: (key, at, work) for name, key, at, work in reopened.read_schedules()} == model[
            "schedules"
        ]
        assert reopened.clock == model["clock"]
        reopened.close()


def test_a_folder_that_is_not_ours_is_refused_with_the_way_out(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / JOURNAL_FILE).write_text("not a database, but somebody's notes\n" * 200)
    with pytest.raises(ValueError, match=r"is not a Parley data file.*--data none"):
        Journal(folder)


def test_a_write_that_cannot_reach_the_disk_fails_its_sync(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "data")
    journal.start()
    journal.append(("insert into nowhere values (1)", ()))
    with pytest.raises(OSError, match="cannot be written"):
        journal.sync()
    journal.close()


# -- what feeds the journal ------------------------------------------------------------------------------


class Log:
    """A stand-in ``WriteLog``: what the client told, by key."""

    def __init__(self) -> None:
        self.images: list[tuple[str, Any, Any, Any]] = []
        self.objects: list[tuple[str, str, bytes]] = []

    def items_written(self, table: str, images: list[tuple[Any, Any, Any]]) -> None:
        self.images += [(table, pk["S"], sk["S"], image) for pk, sk, image in images]

    def object_written(self, bucket: str, key: str, body: bytes) -> None:
        self.objects.append((bucket, key, body))


def test_the_client_tells_the_image_each_write_left(dynamodb: tuple[Any, str], content: Any) -> None:
    from botocore.exceptions import ClientError

    from parley.local.aws import journal_writes

    client, table = dynamodb
    log = Log()
    journal_writes(client, log)
    journal_writes(content._client, log)
    try:
        client.put_item(TableName=table, Item=item("P", "a", v="1"))
        client.update_item(
            TableName=table,
            Key={"pk": {"S": "P"}, "sk": {"S": "n"}},
            UpdateExpression="ADD #c :one",
            ExpressionAttributeNames={"#c": "count"},
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
        with pytest.raises(ClientError):  # refused: nothing changed, nothing told
            client.put_item(
                TableName=table, Item=item("P", "a", v="2"), ConditionExpression="attribute_not_exists(pk)"
            )
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": item("P", "b", v="1")}},
                {"Delete": {"TableName": table, "Key": {"pk": {"S": "P"}, "sk": {"S": "a"}}}},
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": {"pk": {"S": "P"}, "sk": {"S": "n"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )
        content.put("content/x", "{}")
    finally:
        journal_writes(client, None)
        journal_writes(content._client, None)
    assert log.images == [
        (table, "P", "a", item("P", "a", v="1")),
        (table, "P", "n", {"pk": {"S": "P"}, "sk": {"S": "n"}, "count": {"N": "1"}}),
        (table, "P", "b", item("P", "b", v="1")),
        (table, "P", "a", None),
    ]
    assert log.objects == [(content.bucket, "content/x", b"{}")]


class Schedules:
    def __init__(self) -> None:
        self.pending: dict[str, str] = {}

    def scheduled(self, name: str, key: str, at: datetime, work: Any) -> None:
        self.pending[name] = key

    def unscheduled(self, name: str, key: str) -> None:
        if self.pending.get(name) == key:
            del self.pending[name]


def test_the_scheduler_tells_each_schedule_and_its_end(manual_clock: Any) -> None:
    """Run, cancelled, or scheduled again under its name while it ran: the journal ends only the one
    that ended."""
    from parley.local.scheduler import LocalScheduler

    journal = Schedules()
    ran: list[str] = []

    def timer(work: Any) -> None:
        ran.append(work["id"])
        if work["id"] == "again":  # a retry schedules itself again under the same name
            scheduler.schedule("retry", manual_clock.now() + timedelta(minutes=1), {"id": "again-2"})

    scheduler = LocalScheduler(manual_clock, timer)
    scheduler.journal = journal
    scheduler.schedule("expire", manual_clock.now() + timedelta(seconds=10), {"id": "expire"})
    scheduler.schedule("cancelled", manual_clock.now() + timedelta(seconds=10), {"id": "cancelled"})
    scheduler.schedule("retry", manual_clock.now() + timedelta(seconds=20), {"id": "again"})
    scheduler.call_later("backstop", 5, lambda: None)  # the runtime's own: not kept
    assert sorted(journal.pending) == ["cancelled", "expire", "retry"]
    scheduler.cancel("cancelled")
    manual_clock.advance(30)
    scheduler.run_due(manual_clock.now())
    assert ran == ["expire", "again"]
    assert list(journal.pending) == ["retry"]
    assert journal.pending["retry"] == scheduler._pending["retry"].key


def test_the_manual_clock_tells_each_move(manual_clock: Any) -> None:
    moves: list[datetime] = []
    manual_clock.on_move = moves.append
    before = manual_clock.now()
    manual_clock.advance(60)
    manual_clock.advance(0)
    assert moves == [before + timedelta(seconds=60)] * 2


def test_items_made_for_a_start_are_what_moto_makes() -> None:
    """Every kind of value, and maps whose one attribute is named like a kind."""
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    from parley.local.persistence import moto_items

    attributes = {
        **item("PB#acme#campaigns", "REQ#1", state="open"),
        "count": {"N": "3"},
        "flag": {"BOOL": True},
        "gone": {"NULL": True},
        "tags": {"SS": ["a", "b"]},
        "answer": {"M": {"verdict": {"S": "approve"}, "notes": {"L": [{"S": "x"}, {"N": "1"}, {"M": {}}]}}},
        "S": {"M": {"S": {"S": "a map whose one attribute is named S"}}},
        "M": {"M": {"M": {"M": {"L": {"L": []}}}}},
        "L": {"L": [{"M": {"N": {"N": "7"}}}, {"L": [{"BOOL": False}]}]},
    }
    made = moto_items("pk", "sk")(json.dumps(attributes))
    expected = Item(DynamoType(attributes["pk"]), DynamoType(attributes["sk"]), attributes)
    assert made.to_json() == expected.to_json() == {"Attributes": attributes}
    assert (made.hash_key, made.range_key) == (expected.hash_key, expected.range_key)
    assert made.attrs == expected.attrs
    assert made.size() == expected.size()

    def shape(value: Any) -> Any:  # the classes all the way down, as moto's code walks them
        if isinstance(value, DynamoType):
            return ("DynamoType", value.type, shape(value.value))
        if isinstance(value, dict):
            return {name: shape(entry) for name, entry in value.items()}
        if isinstance(value, list):
            return [shape(entry) for entry in value]
        return type(value).__name__

    assert shape(dict(made.attrs)) == shape(dict(expected.attrs))


def test_a_write_the_folder_cannot_keep_is_answered_503_not_acknowledged(
    tmp_path: Path, example_source: str
) -> None:
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    operator = parse_operator_config(
        "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]",
        "test",
        environ={},
    )
    headers = [("Authorization", "Bearer dev-token"), ("Content-Type", "application/json")]
    body = json.dumps({"name": "approve", "source": example_source}).encode()
    path = "/v1/orgs/acme/playbooks/campaigns/definitions/interaction"
    with running(ServeOptions(port=0, clock="manual", data=tmp_path / "data"), operator) as server:
        assert server.data is not None
        journal = server.data.journal
        database, journal._db = journal._db, sqlite3.connect(":memory:")
        journal._db.close()  # the disk is gone: every commit fails from now on
        reply = server.answer("POST", path, headers, body, "127.0.0.1")
        journal._db = database
        assert reply.status == 503
        problem = json.loads(reply.body)
        assert "cannot be written" in problem["detail"] and "not kept" in problem["detail"], problem
