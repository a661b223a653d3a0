"""get_run, list_runs, list_interactions, get_run_history, list_playbook_events and get_event
(http-api.md, "Runs" and "Events"; interaction-format.md, "Listing requests", "The run's history")."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.runs.service import RunService

PLAYBOOK = PlaybookRef("acme", "campaigns")
APPROVE = "approve-campaign-brief"


def refused(call: Any, *args: Any, **kwargs: Any) -> Problem:
    with pytest.raises(Problem) as caught:
        call(*args, **kwargs)
    return caught.value


def allow_open_requests(runtime: Any, limit: int) -> None:
    limits = replace(runtime.operator.limits, interaction_open_requests=limit)
    runtime.operator = replace(runtime.operator, limits=limits)


def pages(read: Any, key: str, **kwargs: Any) -> list[list[Any]]:
    """Every page of a list, following the cursors."""
    found, cursor = [], None
    while True:
        page = read(PLAYBOOK, cursor=cursor, **kwargs).as_json()
        found.append(page[key])
        cursor = page["next_cursor"]
        if cursor is None:
            return found


# --- runs ------------------------------------------------------------------------------------------------


def test_get_run_of_an_unknown_id_is_not_found(service: RunService) -> None:
    for run_id in (str(uuid.uuid4()), "nope"):
        assert refused(service.get_run, PLAYBOOK, run_id).status == 404


def test_list_runs_newest_first_with_filters_and_pages(
    run: Any, service: RunService, manual_clock: ManualClock
) -> None:
    made = []
    for n in range(3):
        made.append(run().run_id)
        manual_clock.advance(1)
        made.append(run("brief-sent", {"owner": "o", "campaign": f"c{n}"}).run_id)
        manual_clock.advance(1)
    rejected = str(uuid.uuid4())
    refused(run, APPROVE, {}, rejected)

    everything = [r["run_id"] for page in pages(service.list_runs, "runs", limit=3) for r in page]
    questions = pages(service.list_runs, "runs", name=APPROVE, limit=2)
    succeeded = pages(service.list_runs, "runs", status="succeeded")

    assert everything == [rejected, *reversed(made)]
    assert [len(p) for p in questions] == [2, 2]
    assert [r["run_id"] for p in questions for r in p] == [rejected, made[4], made[2], made[0]]
    assert [r["status"] for r in succeeded[0]] == ["succeeded"] * 3
    assert pages(service.list_runs, "runs", definition_type="reasoning") == [[]]
    assert refused(service.list_runs, PLAYBOOK, status="done").status == 400
    assert refused(service.list_runs, PLAYBOOK, definition_type="agent").status == 400
    assert refused(service.list_runs, PLAYBOOK, limit=0).status == 400


def test_a_cursor_belongs_to_its_list_and_its_filters(run: Any, service: RunService) -> None:
    run()
    run()
    cursor = service.list_runs(PLAYBOOK, limit=1).next_cursor
    assert cursor is not None

    assert refused(service.list_runs, PLAYBOOK, status="started", cursor=cursor).status == 400
    assert refused(service.list_interactions, PLAYBOOK, cursor=cursor).status == 400
    assert refused(service.list_runs, PLAYBOOK, cursor="garbage").status == 400


# --- open requests -----------------------------------------------------------------------------------------


def test_list_interactions_filters_by_to_type_and_function_and_a_page_is_full(
    run: Any, answer: Any, runtime: Any, service: RunService, manual_clock: ManualClock
) -> None:
    allow_open_requests(runtime, 20)
    to_lee = []
    for n in range(4):
        to_lee.append(run("party-check", {"to": "lee"}).run_id)
        manual_clock.advance(1)
        run("party-check", {"to": f"kim-{n}"})
        manual_clock.advance(1)
    # an answered request leaves the list
    answer(to_lee[0], {"ok": True})

    lee = pages(service.list_interactions, "interactions", to="lee", limit=2)
    by_function = pages(service.list_interactions, "interactions", function=APPROVE)
    interactions = pages(service.list_interactions, "interactions", definition_type="interaction", limit=100)

    assert [[r["run_id"] for r in page] for page in lee] == [[to_lee[3], to_lee[2]], [to_lee[1]]]
    assert by_function == [[]]
    assert len(interactions[0]) == 7
    assert refused(service.list_interactions, PLAYBOOK, definition_type="nope").status == 400


def test_the_first_page_of_open_requests_reads_a_page_however_many_are_open(
    runtime: Any, run: Any, service: RunService
) -> None:
    allow_open_requests(runtime, 100)
    for _ in range(4):
        run()
    few = service.list_interactions(PLAYBOOK, limit=3)
    for _ in range(20):
        run()
    many = service.list_interactions(PLAYBOOK, limit=3)

    assert len(few.items) == len(many.items) == 3
    assert few.scanned == many.scanned == 4


# --- events --------------------------------------------------------------------------------------------


def test_history_in_order_and_events_newest_first_by_default(
    run: Any, answer: Any, service: RunService, manual_clock: ManualClock
) -> None:
    first = run()
    manual_clock.advance(10)
    second = run("brief-sent", {"owner": "o", "campaign": "c"})
    manual_clock.advance(10)
    answer(first.run_id, {"verdict": "approve"})

    history = [
        e["type"] for p in pages(service.get_run_history, "events", run_id=first.run_id, limit=1) for e in p
    ]
    newest = pages(service.list_playbook_events, "events")[0]
    oldest = pages(service.list_playbook_events, "events", order="asc", limit=2)

    assert history == ["interaction_requested", "request_answered", "run_succeeded"]
    assert [(e["type"], e["run_id"]) for e in newest] == [
        ("run_succeeded", first.run_id),
        ("request_answered", first.run_id),
        ("run_succeeded", second.run_id),
        ("interaction_requested", second.run_id),
        ("interaction_requested", first.run_id),
    ]
    assert [e for p in oldest for e in p] == list(reversed(newest))
    assert [len(p) for p in oldest] == [2, 2, 1]
    for event in newest:
        assert set(event) == {"id", "type", "at", "run_id", "data"}


def test_events_filtered_by_type_run_and_since(
    run: Any, answer: Any, service: RunService, manual_clock: ManualClock
) -> None:
    first = run()
    manual_clock.advance(60)
    second = run()
    answer(second.run_id, {"verdict": "revise"})

    requested = pages(service.list_playbook_events, "events", event_type="interaction_requested")[0]
    of_first = pages(service.list_playbook_events, "events", run_id=first.run_id)[0]
    since = pages(service.list_playbook_events, "events", since="2026-10-17T10:19:42Z", order="asc")[0]
    since_offset = pages(service.list_playbook_events, "events", since="2026-10-17T12:19:42.001+02:00")[0]
    of_second_since = pages(
        service.list_playbook_events, "events", run_id=second.run_id, since="2026-10-17T10:19:42.000Z"
    )[0]

    assert [e["run_id"] for e in requested] == [second.run_id, first.run_id]
    assert [e["type"] for e in of_first] == ["interaction_requested"]
    assert [(e["type"], e["run_id"]) for e in since] == [
        ("interaction_requested", second.run_id),
        ("request_answered", second.run_id),
        ("run_succeeded", second.run_id),
    ]
    assert since_offset == []
    assert len(of_second_since) == 3
    assert refused(service.list_playbook_events, PLAYBOOK, since="yesterday").status == 400
    assert refused(service.list_playbook_events, PLAYBOOK, since="2026-10-17T10:19:42").status == 400
    assert refused(service.list_playbook_events, PLAYBOOK, order="up").status == 400
    assert refused(service.list_playbook_events, PLAYBOOK, run_id="nope").status == 400


def test_content_over_2_kib_is_shown_as_its_size_in_lists_and_whole_in_get_event(
    run: Any, answer: Any, service: RunService
) -> None:
    started = run("party-check", {"to": "lee"})
    note = "n" * 2100
    fact = answer(started.run_id, {"ok": False, "note": note})
    small = run("party-check", {"to": "lee"})
    answer(small.run_id, {"ok": True})

    listed = {e["type"]: e for e in service.get_run_history(PLAYBOOK, started.run_id).items}
    whole = service.get_event(PLAYBOOK, fact.answer_id)
    size = len(f'{{"ok":false,"note":"{note}"}}')

    assert size > 2048
    assert listed["request_answered"]["data"]["answer"] == {"size": size}
    assert listed["request_answered"]["omitted"] == ["answer"]
    assert listed["run_succeeded"]["data"]["output"] == {"size": size}
    assert whole["data"]["answer"] == {"ok": False, "note": note}
    assert "omitted" not in whole
    small_events = {e["type"]: e for e in service.get_run_history(PLAYBOOK, small.run_id).items}
    assert small_events["request_answered"]["data"]["answer"] == {"ok": True}
    assert "omitted" not in small_events["request_answered"]


def test_get_event_of_an_unknown_id_is_not_found(service: RunService) -> None:
    for event_id in ("1792232322000101234567890abcdef", "x"):
        assert refused(service.get_event, PLAYBOOK, event_id).status == 404


def test_history_of_an_unknown_run_is_not_found(service: RunService) -> None:
    assert refused(service.get_run_history, PLAYBOOK, str(uuid.uuid4())).status == 404


def test_event_ids_sort_in_time_order(run: Any, service: RunService, manual_clock: ManualClock) -> None:
    ids = []
    for _ in range(3):
        ids.extend(e["id"] for e in service.get_run_history(PLAYBOOK, run().run_id).items)
        manual_clock.advance(0.001)

    assert ids == sorted(ids)
    assert all(len(i) == 31 for i in ids)
