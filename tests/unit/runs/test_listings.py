"""Every listing reads in proportion to what it returns (issue 31): a filter with a slot reads its own
index in order and stops at its page, the others are checked on what it reads, within a bounded read; a
status change moves the run's entry in the same write; a request that leaves the list leaves every index
of it; a bounded read answers a short page with a cursor; cursors keep their shape."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock, format_time
from parley.definitions.cursor import encode_cursor
from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.infrastructure.table import FILTER_INDEXES, TABLE
from parley.runs.events import event_id_floor, new_event_id
from parley.runs.items import RUN_SLOTS, request_slot_names, slot_index, with_listing_indexes
from parley.runs.listing import list_scope
from parley.runs.model import Event, Run
from parley.runs.service import RunService

PLAYBOOK = PlaybookRef("acme", "campaigns")
APPROVE = "approve-campaign-brief"
TYPES = ("interaction", "reasoning")
NAMES = ("alpha", "beta")
STATUSES = ("started", "succeeded", "rejected")


def _write(service: RunService, items: Sequence[Mapping[str, Any]]) -> None:
    """Items as the store writes them, put in batches (moto's transactions copy the whole table)."""
    store = service.store
    for start in range(0, len(items), 25):
        store.client.batch_write_item(
            RequestItems={store.table_name: [{"PutRequest": {"Item": i}} for i in items[start : start + 25]]}
        )


def _seed_runs(service: RunService, model: Run, count: int, clock: ManualClock) -> list[Run]:
    """``count`` runs, one a millisecond apart, going through every type, name and status."""
    made = []
    shapes = itertools.cycle(itertools.product(TYPES, NAMES, STATUSES))
    for number in range(count):
        kind, name, status = next(shapes)
        at = format_time(clock.now() + timedelta(milliseconds=number + 1))
        made.append(
            replace(
                model,
                run_id=str(uuid.uuid4()),
                type=kind,
                name=name,
                status=status,  # type: ignore[arg-type]
                started_at=at,
                output=None,
                finished_at=None if status == "started" else at,
                rejection=None,
            )
        )
    _write(service, [service.store._put_run(PLAYBOOK, r, None)["Put"]["Item"] for r in made])
    return made


def pages(read: Any, key: str, **kwargs: Any) -> tuple[list[list[Any]], list[int]]:
    """Every page of a list, following the cursors, and the items each page read."""
    found, scanned, cursor = [], [], None
    while True:
        page = read(PLAYBOOK, cursor=cursor, **kwargs)
        shown = page.as_json()
        found.append(shown[key])
        scanned.append(page.scanned)
        cursor = shown["next_cursor"]
        if cursor is None:
            return found, scanned


FILTERS = [
    {},
    {"definition_type": "reasoning"},
    {"name": "beta"},
    {"status": "rejected"},
    {"definition_type": "interaction", "name": "alpha"},
    {"definition_type": "interaction", "status": "succeeded"},
    {"name": "alpha", "status": "started"},
    {"definition_type": "reasoning", "name": "beta", "status": "started"},
    {"definition_type": "workflow"},
    {"name": "nosuch-name"},
]


@pytest.mark.parametrize(
    "filters", FILTERS, ids=lambda f: "&".join(f"{k}={v}" for k, v in f.items()) or "none"
)
def test_list_runs_reads_the_index_of_its_filters_newest_first_page_by_page(
    run: Any, service: RunService, manual_clock: ManualClock, filters: dict[str, str]
) -> None:
    model = service.store.get_run(PLAYBOOK, run().run_id)
    assert model is not None
    made = _seed_runs(service, model, 60, manual_clock)
    wanted = {"definition_type": "type", "name": "name", "status": "status"}
    expected = [
        r.run_id
        for r in sorted(made, key=lambda r: r.started_at, reverse=True)
        if all(getattr(r, wanted[key]) == value for key, value in filters.items())
    ]

    found, scanned = pages(service.list_runs, "runs", limit=4, **filters)

    if filters:
        assert [r["run_id"] for page in found for r in page] == expected
    else:  # the run the model came from is the oldest
        assert [r["run_id"] for page in found for r in page] == [*expected, model.run_id]
    # A page reads its items and one more (twice, through a slot: its key, then the item), never the rest;
    # with a filter checked on the items read, the page may come short, and says where it stopped.
    assert max(scanned) <= 2 * 5
    if len(filters) <= 1:
        assert all(len(page) == 4 for page in found[:-1])


def test_a_runs_status_change_moves_its_entries_in_the_same_write(
    run: Any, answer: Any, service: RunService
) -> None:
    started = run()
    before = service.list_runs(PLAYBOOK, status="started", name=APPROVE, definition_type="interaction")
    assert [r["run_id"] for r in before.as_json()["runs"]] == [started.run_id]

    answer(started.run_id, {"verdict": "approve"})

    assert service.list_runs(PLAYBOOK, status="started").as_json()["runs"] == []
    assert service.list_runs(PLAYBOOK, status="started", name=APPROVE).as_json()["runs"] == []
    after = service.list_runs(PLAYBOOK, status="succeeded", name=APPROVE, definition_type="interaction")
    assert [r["run_id"] for r in after.as_json()["runs"]] == [started.run_id]
    item = _raw(service, f"RUN#{started.run_id}")
    assert _slot_of(item, slot_index(RUN_SLOTS, "status")).endswith('?["succeeded"]')
    assert _slot_of(item, slot_index(RUN_SLOTS, "name")).endswith(f'?["{APPROVE}"]')
    assert _slot_of(item, slot_index(RUN_SLOTS, "type")).endswith('?["interaction"]')
    assert all(_slot_of(item, index) for index in FILTER_INDEXES)  # every slot of a run holds it


def _raw(service: RunService, sk: str) -> dict[str, Any]:
    store = service.store
    key = {TABLE.partition_key: {"S": "PB#acme#campaigns"}, TABLE.sort_key: {"S": sk}}
    item: dict[str, Any] = store.client.get_item(TableName=store.table_name, Key=key)["Item"]
    return item


def _slot_of(item: dict[str, Any], index: Any) -> str:
    return str(item.get(index.partition_key, {}).get("S", ""))


# --- list_interactions -------------------------------------------------------------------------------


def test_list_interactions_by_to_type_and_function_and_a_request_leaving_leaves_every_index(
    run: Any, answer: Any, service: RunService, manual_clock: ManualClock
) -> None:
    asked = []
    for n in range(3):
        asked.append(run("party-check", {"to": f"p{n % 2}@example.com"}).run_id)
        manual_clock.advance(1)
    approve = run().run_id

    by_to, _ = pages(service.list_interactions, "interactions", to="p0@example.com", limit=1)
    by_function, _ = pages(service.list_interactions, "interactions", function="party-check")
    everything, _ = pages(service.list_interactions, "interactions", definition_type="interaction", limit=2)

    assert [i["run_id"] for p in by_to for i in p] == [asked[2], asked[0]]
    assert [i["run_id"] for p in by_function for i in p] == list(reversed(asked))
    assert [i["run_id"] for p in everything for i in p] == [approve, *reversed(asked)]

    answer(approve, {"verdict": "approve"})

    item = _raw(service, f"REQ#{approve}")
    assert not set(request_slot_names()) & set(item)
    assert service.list_interactions(PLAYBOOK, function=APPROVE).as_json()["interactions"] == []


def test_a_bounded_read_answers_a_short_page_with_a_cursor(
    run: Any, service: RunService, manual_clock: ManualClock
) -> None:
    live = run("party-check", {"to": "p@example.com"})
    request = service.store.get_request(PLAYBOOK, live.run_id)
    assert request is not None
    past = format_time(manual_clock.now() - timedelta(seconds=1))
    expired = []
    for number in range(12):  # newer than the live one, and past their time (the timer has not come)
        at = format_time(manual_clock.now() + timedelta(milliseconds=number + 1))
        expired.append(replace(request, run_id=str(uuid.uuid4()), requested_at=at, expires_at=past))
    _write(service, [service.store._put_request(PLAYBOOK, r)["Put"]["Item"] for r in expired])
    service.store.read_bound = 4

    for filters in ({}, {"to": "p@example.com"}):
        found, scanned = pages(service.list_interactions, "interactions", limit=2, **filters)

        assert found[0] == []  # a short page, with where it stopped
        assert [i["run_id"] for p in found for i in p] == [live.run_id]
        assert max(scanned) <= 4 + 3


# --- list_playbook_events -------------------------------------------------------------------------------


def test_list_playbook_events_by_type_run_since_and_order(
    run: Any, service: RunService, manual_clock: ManualClock
) -> None:
    first = run().run_id
    manual_clock.advance(5)
    middle = manual_clock.now()
    made: list[Event] = []
    for number in range(40):
        at = manual_clock.now() + timedelta(milliseconds=number)
        kind = ("note_a", "note_b")[number % 2]
        made.append(
            Event(new_event_id(kind, at), kind, format_time(at), first if number % 4 == 0 else None, {})
        )
    _write(service, [service.store._put_event(PLAYBOOK, e)["Put"]["Item"] for e in made])

    newest, scanned = pages(service.list_playbook_events, "events", event_type="note_a", limit=3)
    oldest, _ = pages(service.list_playbook_events, "events", event_type="note_a", order="asc", limit=7)
    of_run, _ = pages(service.list_playbook_events, "events", event_type="note_a", run_id=first)
    since, _ = pages(service.list_playbook_events, "events", since=format_time(middle), order="asc", limit=9)
    of_run_since, _ = pages(
        service.list_playbook_events, "events", run_id=first, since=format_time(middle), limit=2
    )

    a = [e.id for e in made if e.type == "note_a"]
    assert [e["id"] for p in newest for e in p] == list(reversed(a))
    assert max(scanned) <= 2 * 4
    assert [e["id"] for p in oldest for e in p] == a
    assert [e["id"] for p in of_run for e in p] == [e.id for e in reversed(made) if e.run_id == first]
    assert [e["id"] for p in since for e in p] == [e.id for e in made]
    assert [e["id"] for p in of_run_since for e in p] == [e.id for e in reversed(made) if e.run_id]
    assert event_id_floor(middle) <= made[0].id


# --- cursors --------------------------------------------------------------------------------------------


def test_cursors_keep_their_shape_and_another_shape_is_refused_with_words_to_list_again(
    run: Any, service: RunService, manual_clock: ManualClock
) -> None:
    older = run()
    manual_clock.advance(1)
    newer = run()
    scope = list_scope("runs", PLAYBOOK, {})

    # A cursor given out before the indexes (the time and the run id) still goes on where it was.
    kept = encode_cursor(scope, [newer.started_at, newer.run_id])
    assert [r["run_id"] for r in service.list_runs(PLAYBOOK, cursor=kept).as_json()["runs"]] == [older.run_id]
    for position in ([f"{newer.started_at}#{newer.run_id}"], [newer.run_id], ["x", "y"]):
        with pytest.raises(Problem) as caught:
            service.list_runs(PLAYBOOK, cursor=encode_cursor(scope, position))
        assert caught.value.status == 400
        assert "start without a cursor" in caught.value.detail


# --- items written before the slots ---------------------------------------------------------------------


def test_items_written_before_the_slots_get_them_back_as_the_store_writes_them(
    run: Any, service: RunService
) -> None:
    started = run()
    slots = {name for index in FILTER_INDEXES for name in (index.partition_key, index.sort_key)}
    for sk in (f"RUN#{started.run_id}", f"REQ#{started.run_id}"):
        written = _raw(service, sk)
        before = {name: value for name, value in written.items() if name not in slots}

        assert with_listing_indexes(before) == written
        assert with_listing_indexes(written) == written


def test_a_cancelled_run_leaves_the_interactions_slots_and_moves_to_rejected(
    run: Any, service: RunService
) -> None:
    started = run()
    assert len(service.list_interactions(PLAYBOOK, function=APPROVE).items) == 1

    service.cancel_run(PLAYBOOK, started.run_id, reason="Launch moved", cancelled_by="dev")

    assert service.list_interactions(PLAYBOOK, function=APPROVE).items == ()
    assert not set(request_slot_names()) & set(_raw(service, f"REQ#{started.run_id}"))
    rejected = service.list_runs(PLAYBOOK, status="rejected", definition_type="interaction")
    assert [r["run_id"] for r in rejected.as_json()["runs"]] == [started.run_id]
    assert service.list_runs(PLAYBOOK, status="started").items == ()
