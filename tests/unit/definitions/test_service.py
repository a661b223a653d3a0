"""The definition rules of http-api.md "Definitions", against the DynamoDB adapter on moto."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.definitions.model import Definition, PlaybookRef
from parley.definitions.service import DefinitionService
from parley.definitions.store import DynamoDefinitionStore
from parley.documents.definition import CheckedDocument
from parley.errors import Problem

PLAYBOOK = PlaybookRef("acme", "campaigns")
SOURCE = "---\ndescription: First\n---\nHello\n"


@pytest.fixture
def store(dynamodb: tuple[Any, str]) -> DynamoDefinitionStore:
    client, table = dynamodb
    return DynamoDefinitionStore(client, table)


@pytest.fixture
def service(store: DynamoDefinitionStore, manual_clock: ManualClock, stub_check: Any) -> DefinitionService:
    return DefinitionService(store, manual_clock, stub_check)


def problem_of(call: Callable[[], object]) -> Problem:
    with pytest.raises(Problem) as caught:
        call()
    return caught.value


# --- create and get -----------------------------------------------------------------------------


def test_create_saves_version_one_active_with_the_clock_time(service: DefinitionService) -> None:
    created = service.create_definition(PLAYBOOK, "interaction", "approve-campaign-brief", SOURCE)

    assert created.as_json() == {
        "type": "interaction",
        "name": "approve-campaign-brief",
        "version": 1,
        "status": "active",
        "media_type": "text/markdown",
        "description": "First",
        "source": SOURCE,
        "overview": "Overview of interaction: First",
        "warnings": [],
        "created_at": "2026-10-17T10:18:42.000Z",
        "updated_at": "2026-10-17T10:18:42.000Z",
    }
    assert service.get_definition(PLAYBOOK, "interaction", "approve-campaign-brief") == created


def test_definitions_belong_to_their_playbook_and_type(service: DefinitionService) -> None:
    service.create_definition(PLAYBOOK, "interaction", "shared-name", SOURCE)

    for playbook, definition_type in [(PlaybookRef("acme", "other"), "interaction"), (PLAYBOOK, "reasoning")]:
        assert (
            problem_of(
                lambda p=playbook, t=definition_type: service.get_definition(p, t, "shared-name")
            ).status
            == 404
        )
    # The same name in another playbook is another definition.
    other = service.create_definition(PlaybookRef("acme", "other"), "interaction", "shared-name", SOURCE)
    assert other.version == 1


@pytest.mark.parametrize("name", ["abc", "a-1", "a" * 48, "approve-campaign-brief"])
def test_names_that_are_allowed(service: DefinitionService, name: str) -> None:
    assert service.create_definition(PLAYBOOK, "interaction", name, SOURCE).name == name


@pytest.mark.parametrize("name", ["ab", "a" * 49, "1abc", "-abc", "Abc", "a_bc", "abc def", "abé", ""])
def test_names_that_are_refused(service: DefinitionService, name: str) -> None:
    problem = problem_of(lambda: service.create_definition(PLAYBOOK, "interaction", name, SOURCE))

    assert (problem.status, problem.reason) == (422, "invalid_input")
    assert [e.pointer for e in problem.errors] == ["/name"]


def test_a_source_is_at_most_65536_bytes(service: DefinitionService) -> None:
    base = "---\n---\n"
    at_limit = base + "x" * (65_536 - len(base))
    assert service.create_definition(PLAYBOOK, "interaction", "at-limit", at_limit).source == at_limit

    over = base + "é" * ((65_536 - len(base)) // 2 + 1)  # fewer characters than bytes
    problem = problem_of(lambda: service.create_definition(PLAYBOOK, "interaction", "over-limit", over))
    assert problem.status == 422
    assert [e.pointer for e in problem.errors] == ["/source"]
    assert "65,536" in problem.errors[0].detail


def test_every_problem_of_the_name_and_the_source_is_reported_together(service: DefinitionService) -> None:
    problem = problem_of(lambda: service.create_definition(PLAYBOOK, "interaction", "X", "no front matter"))

    assert problem.status == 422
    assert [e.pointer for e in problem.errors] == ["/name", "/source"]
    assert problem.errors[1].detail.startswith("Line 1")


def test_a_document_with_problems_is_not_saved(service: DefinitionService) -> None:
    problem = problem_of(
        lambda: service.create_definition(PLAYBOOK, "interaction", "broken", "no front matter")
    )

    assert problem.reason == "invalid_input"
    assert problem_of(lambda: service.get_definition(PLAYBOOK, "interaction", "broken")).status == 404


@pytest.mark.parametrize("definition_type", ["agent", "Interaction", ""])
def test_other_types_have_no_definitions(service: DefinitionService, definition_type: str) -> None:
    for call in (
        lambda: service.create_definition(PLAYBOOK, definition_type, "abc", SOURCE),
        lambda: service.get_definition(PLAYBOOK, definition_type, "abc"),
        lambda: service.list_definitions(PLAYBOOK, definition_type),
    ):
        assert problem_of(call).status == 404


def test_get_of_an_unknown_or_impossible_name_is_not_found(service: DefinitionService) -> None:
    assert problem_of(lambda: service.get_definition(PLAYBOOK, "interaction", "never-saved")).status == 404
    assert problem_of(lambda: service.get_definition(PLAYBOOK, "interaction", "NOT#A#NAME")).status == 404


# --- names are never reused --------------------------------------------------------------------


def test_a_taken_name_is_a_conflict(service: DefinitionService) -> None:
    service.create_definition(PLAYBOOK, "interaction", "taken", SOURCE)

    problem = problem_of(lambda: service.create_definition(PLAYBOOK, "interaction", "taken", SOURCE + "more"))
    assert (problem.status, problem.reason) == (409, "conflict")
    assert service.get_definition(PLAYBOOK, "interaction", "taken").source == SOURCE


def test_a_retired_name_is_still_taken(service: DefinitionService) -> None:
    service.create_definition(PLAYBOOK, "interaction", "old-name", SOURCE)
    service.retire_definition(PLAYBOOK, "interaction", "old-name")

    assert (
        problem_of(lambda: service.create_definition(PLAYBOOK, "interaction", "old-name", SOURCE)).status
        == 409
    )


# --- versions ----------------------------------------------------------------------------------


def test_update_makes_a_new_version_and_keeps_every_version(
    service: DefinitionService, store: DynamoDefinitionStore, manual_clock: ManualClock
) -> None:
    service.create_definition(PLAYBOOK, "interaction", "versioned", SOURCE)
    manual_clock.advance(60)
    second = service.update_definition(
        PLAYBOOK, "interaction", "versioned", SOURCE.replace("First", "Second")
    )
    manual_clock.advance(60)
    third = service.update_definition(PLAYBOOK, "interaction", "versioned", SOURCE.replace("First", "Third"))

    assert (second.version, second.description) == (2, "Second")
    assert (third.version, third.description, third.status) == (3, "Third", "active")
    assert third.created_at == "2026-10-17T10:18:42.000Z"
    assert third.updated_at == "2026-10-17T10:20:42.000Z"
    assert service.get_definition(PLAYBOOK, "interaction", "versioned") == third
    versions = [store.get_version(PLAYBOOK, "interaction", "versioned", n) for n in (1, 2, 3)]
    assert [(v.version, v.description, v.created_at) for v in versions if v] == [
        (1, "First", "2026-10-17T10:18:42.000Z"),
        (2, "Second", "2026-10-17T10:19:42.000Z"),
        (3, "Third", "2026-10-17T10:20:42.000Z"),
    ]
    assert store.get_version(PLAYBOOK, "interaction", "versioned", 4) is None


def test_an_identical_source_makes_no_new_version(
    service: DefinitionService, store: DynamoDefinitionStore, manual_clock: ManualClock
) -> None:
    created = service.create_definition(PLAYBOOK, "interaction", "same", SOURCE)
    manual_clock.advance(60)

    again = service.update_definition(PLAYBOOK, "interaction", "same", SOURCE)

    assert again == created
    assert store.get_version(PLAYBOOK, "interaction", "same", 2) is None


def test_an_update_with_problems_changes_nothing(service: DefinitionService) -> None:
    created = service.create_definition(PLAYBOOK, "interaction", "kept", SOURCE)

    problem = problem_of(lambda: service.update_definition(PLAYBOOK, "interaction", "kept", "broken"))
    too_big = "---\n---\n" + "x" * 65_536
    assert (
        problem_of(lambda: service.update_definition(PLAYBOOK, "interaction", "kept", too_big)).status == 422
    )

    assert problem.status == 422
    assert service.get_definition(PLAYBOOK, "interaction", "kept") == created


def test_updating_an_unknown_definition_is_not_found(service: DefinitionService) -> None:
    assert (
        problem_of(lambda: service.update_definition(PLAYBOOK, "interaction", "nothing", SOURCE)).status
        == 404
    )


def test_a_retired_definition_cannot_be_updated(service: DefinitionService) -> None:
    service.create_definition(PLAYBOOK, "interaction", "done", SOURCE)
    retired = service.retire_definition(PLAYBOOK, "interaction", "done")

    for source in (SOURCE + "changed", SOURCE):
        problem = problem_of(lambda s=source: service.update_definition(PLAYBOOK, "interaction", "done", s))
        assert (problem.status, problem.reason) == (409, "conflict")
    assert service.get_definition(PLAYBOOK, "interaction", "done") == retired


# --- retire ------------------------------------------------------------------------------------


def test_retire_keeps_the_definition_with_status_retired(
    service: DefinitionService, manual_clock: ManualClock
) -> None:
    created = service.create_definition(PLAYBOOK, "interaction", "to-retire", SOURCE)
    manual_clock.advance(5)

    retired = service.retire_definition(PLAYBOOK, "interaction", "to-retire")

    assert retired.status == "retired"
    assert (retired.version, retired.source, retired.created_at) == (1, SOURCE, created.created_at)
    assert retired.updated_at == "2026-10-17T10:18:47.000Z"
    assert service.get_definition(PLAYBOOK, "interaction", "to-retire") == retired


def test_retiring_twice_answers_the_retired_definition_unchanged(
    service: DefinitionService, manual_clock: ManualClock
) -> None:
    service.create_definition(PLAYBOOK, "interaction", "twice", SOURCE)
    first = service.retire_definition(PLAYBOOK, "interaction", "twice")
    manual_clock.advance(30)

    assert service.retire_definition(PLAYBOOK, "interaction", "twice") == first


def test_retiring_an_unknown_definition_is_not_found(service: DefinitionService) -> None:
    assert problem_of(lambda: service.retire_definition(PLAYBOOK, "interaction", "nothing")).status == 404


# --- lists -------------------------------------------------------------------------------------


def create_many(service: DefinitionService, clock: ManualClock, names: list[str]) -> None:
    for name in names:
        service.create_definition(PLAYBOOK, "interaction", name, SOURCE)
        clock.advance(1)


def all_pages(service: DefinitionService, limit: int, include_retired: bool = False) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = service.list_definitions(
            PLAYBOOK, "interaction", include_retired=include_retired, limit=limit, cursor=cursor
        )
        pages.append([d.name for d in page.definitions])
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor
        assert len(pages) < 50, "paging does not end"


def test_lists_are_newest_first(service: DefinitionService, manual_clock: ManualClock) -> None:
    create_many(service, manual_clock, ["first-one", "second-one", "third-one"])

    page = service.list_definitions(PLAYBOOK, "interaction")

    assert [d.name for d in page.definitions] == ["third-one", "second-one", "first-one"]
    assert page.next_cursor is None


def test_an_update_does_not_move_a_definition_in_the_list(
    service: DefinitionService, manual_clock: ManualClock
) -> None:
    create_many(service, manual_clock, ["older", "newer"])
    service.update_definition(PLAYBOOK, "interaction", "older", SOURCE + "changed")

    assert [d.name for d in service.list_definitions(PLAYBOOK, "interaction").definitions] == [
        "newer",
        "older",
    ]


def test_an_empty_list(service: DefinitionService) -> None:
    assert service.list_definitions(PLAYBOOK, "interaction").as_json() == {
        "definitions": [],
        "next_cursor": None,
    }


def test_paging_ends_with_a_null_cursor_and_no_empty_page(
    service: DefinitionService, manual_clock: ManualClock
) -> None:
    create_many(service, manual_clock, [f"def-{n}" for n in range(4)])

    assert all_pages(service, limit=2) == [["def-3", "def-2"], ["def-1", "def-0"]]
    assert all_pages(service, limit=3) == [["def-3", "def-2", "def-1"], ["def-0"]]
    assert all_pages(service, limit=4) == [["def-3", "def-2", "def-1", "def-0"]]


def test_pages_stay_full_when_retired_definitions_are_left_out(
    service: DefinitionService, manual_clock: ManualClock
) -> None:
    names = [f"def-{n:02d}" for n in range(12)]
    create_many(service, manual_clock, names)
    retired = {"def-10", "def-09", "def-08", "def-07", "def-03", "def-00"}
    for name in retired:
        service.retire_definition(PLAYBOOK, "interaction", name)
    active = [n for n in reversed(names) if n not in retired]

    pages = all_pages(service, limit=2)

    assert pages == [active[0:2], active[2:4], active[4:6]]
    with_retired = all_pages(service, limit=5, include_retired=True)
    assert [n for page in with_retired for n in page] == list(reversed(names))
    assert [len(page) for page in with_retired] == [5, 5, 2]


def test_definitions_saved_at_the_same_moment_all_appear(service: DefinitionService) -> None:
    for name in ["same-a", "same-b", "same-c"]:
        service.create_definition(PLAYBOOK, "interaction", name, SOURCE)

    assert all_pages(service, limit=1) == [["same-c"], ["same-b"], ["same-a"]]


@pytest.mark.parametrize("limit", [0, 101, -1])
def test_limit_is_1_to_100(service: DefinitionService, limit: int) -> None:
    problem = problem_of(lambda: service.list_definitions(PLAYBOOK, "interaction", limit=limit))
    assert (problem.status, problem.reason) == (400, "bad_request")


def test_a_cursor_only_works_for_its_own_list(service: DefinitionService, manual_clock: ManualClock) -> None:
    create_many(service, manual_clock, ["one-def", "two-def"])
    cursor = service.list_definitions(PLAYBOOK, "interaction", limit=1).next_cursor
    assert cursor is not None

    for call in (
        lambda: service.list_definitions(PlaybookRef("acme", "other"), "interaction", cursor=cursor),
        lambda: service.list_definitions(PLAYBOOK, "reasoning", cursor=cursor),
        lambda: service.list_definitions(PLAYBOOK, "interaction", cursor="not-a-cursor"),
        lambda: service.list_definitions(PLAYBOOK, "interaction", cursor=cursor[:-3]),
    ):
        assert problem_of(call).status == 400


# --- concurrency -------------------------------------------------------------------------------


class SlowReads:
    """The store, pausing after each read so that concurrent writers all act on what they read before
    any of them writes: the interleaving that conditional writes exist for."""

    def __init__(self, store: DynamoDefinitionStore, pause: float = 0.05) -> None:
        self._store = store
        self._pause = pause

    def get(self, *args: Any) -> Definition | None:
        found = self._store.get(*args)
        time.sleep(self._pause)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.fixture
def racing(store: DynamoDefinitionStore, manual_clock: ManualClock, stub_check: Any) -> DefinitionService:
    return DefinitionService(SlowReads(store), manual_clock, stub_check)  # type: ignore[arg-type]


def run_together(count: int, work: Callable[[int], object]) -> list[object]:
    """Run ``work(i)`` in ``count`` threads released at the same moment; results or exceptions."""
    barrier = threading.Barrier(count)
    results: list[object] = [None] * count

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = work(index)
        except Exception as exc:
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_exactly_one_of_concurrent_creates_wins(
    racing: DefinitionService, store: DynamoDefinitionStore
) -> None:
    results = run_together(
        8, lambda i: racing.create_definition(PLAYBOOK, "interaction", "contested", f"{SOURCE}writer {i}\n")
    )

    winners = [r for r in results if isinstance(r, Definition)]
    losers = [r for r in results if isinstance(r, Problem)]
    assert len(winners) == 1
    assert len(losers) == 7
    assert all(p.status == 409 for p in losers)
    assert racing.get_definition(PLAYBOOK, "interaction", "contested") == winners[0]
    version = store.get_version(PLAYBOOK, "interaction", "contested", 1)
    assert version is not None and version.source == winners[0].source


def test_concurrent_updates_each_become_a_version(
    racing: DefinitionService, store: DynamoDefinitionStore
) -> None:
    racing.create_definition(PLAYBOOK, "interaction", "raced", SOURCE)
    writers = 6

    results = run_together(
        writers, lambda i: racing.update_definition(PLAYBOOK, "interaction", "raced", f"{SOURCE}writer {i}\n")
    )

    assert all(isinstance(r, Definition) for r in results), results
    versions = [store.get_version(PLAYBOOK, "interaction", "raced", n) for n in range(1, writers + 3)]
    saved = [v for v in versions if v is not None]
    assert [v.version for v in saved] == list(range(1, writers + 2))
    assert sorted(v.source for v in saved[1:]) == sorted(f"{SOURCE}writer {i}\n" for i in range(writers))
    head = racing.get_definition(PLAYBOOK, "interaction", "raced")
    assert head.version == writers + 1
    assert head.source == saved[-1].source
    assert sorted(r.version for r in results if isinstance(r, Definition)) == list(range(2, writers + 2))


def test_an_update_that_read_before_a_retire_is_refused_after_it(
    racing: DefinitionService, service: DefinitionService, store: DynamoDefinitionStore
) -> None:
    service.create_definition(PLAYBOOK, "interaction", "retired-first", SOURCE)

    # The update reads the active head, then pauses; the retire lands during the pause.
    results = run_together(
        2,
        lambda i: (
            racing.update_definition(PLAYBOOK, "interaction", "retired-first", SOURCE + "late\n")
            if i == 0
            else (time.sleep(0.01), service.retire_definition(PLAYBOOK, "interaction", "retired-first"))[1]
        ),
    )

    update, retired = results
    assert isinstance(update, Problem) and update.status == 409
    assert isinstance(retired, Definition)
    assert service.get_definition(PLAYBOOK, "interaction", "retired-first") == retired
    assert store.get_version(PLAYBOOK, "interaction", "retired-first", 2) is None


def test_a_retire_that_read_before_an_update_retires_the_new_version(
    racing: DefinitionService, service: DefinitionService
) -> None:
    service.create_definition(PLAYBOOK, "interaction", "updated-first", SOURCE)

    # The retire reads version 1, then pauses; the update lands during the pause.
    results = run_together(
        2,
        lambda i: (
            racing.retire_definition(PLAYBOOK, "interaction", "updated-first")
            if i == 0
            else (
                time.sleep(0.01),
                service.update_definition(PLAYBOOK, "interaction", "updated-first", SOURCE + "v2\n"),
            )[1]
        ),
    )

    retired, update = results
    assert isinstance(update, Definition) and update.version == 2
    assert isinstance(retired, Definition)
    assert (retired.status, retired.version, retired.source) == ("retired", 2, SOURCE + "v2\n")
    assert service.get_definition(PLAYBOOK, "interaction", "updated-first") == retired


# --- messages of a taken name (issue 18, point 5) ---------------------------------------------------


def test_a_name_taken_by_an_active_definition_says_to_update_it(service: DefinitionService) -> None:
    service.create_definition(PLAYBOOK, "interaction", "active-one", SOURCE)

    problem = problem_of(lambda: service.create_definition(PLAYBOOK, "interaction", "active-one", SOURCE))

    assert problem.detail == (
        "The name 'active-one' is taken by an interaction definition of this playbook; names are never "
        "reused. Update it, or choose another name."
    )


def test_a_name_taken_by_a_retired_definition_does_not_say_to_update_it(service: DefinitionService) -> None:
    service.create_definition(PLAYBOOK, "reasoning", "retired-one", SOURCE)
    service.retire_definition(PLAYBOOK, "reasoning", "retired-one")

    problem = problem_of(lambda: service.create_definition(PLAYBOOK, "reasoning", "retired-one", SOURCE))

    assert (problem.status, problem.reason) == (409, "conflict")
    assert problem.detail == (
        "The name 'retired-one' belongs to a retired reasoning definition of this playbook; names are "
        "never reused, also after a definition is retired, and a retired definition cannot be updated. "
        "Choose another name."
    )
    assert "Update it" not in problem.detail


# --- warnings (issue 18, point 3) ----------------------------------------------------------------------

SERVER_SOURCE = """\
---
description: Sent through the chat
deliver:
  server: chat
  tool: post_message
---
Hello
"""
OWN = "Line 2, /description: the type's own"


def test_a_server_that_does_not_serve_the_playbook_is_warned_of_when_saved(
    store: DynamoDefinitionStore, manual_clock: ManualClock, stub_check: Any
) -> None:
    asked: list[PlaybookRef] = []

    def servers(playbook: PlaybookRef) -> list[str]:
        asked.append(playbook)
        return ["mail"] if playbook == PLAYBOOK else ["chat"]

    def check(definition_type: str, source: str) -> CheckedDocument:
        return replace(stub_check(definition_type, source), warnings=[OWN])

    service = DefinitionService(store, manual_clock, check, servers=servers)

    created = service.create_definition(PLAYBOOK, "interaction", "through-chat", SERVER_SOURCE)
    elsewhere = service.create_definition(
        PlaybookRef("acme", "other"), "interaction", "through-chat", SERVER_SOURCE
    )

    assert created.warnings == (
        OWN,
        "Line 4, /deliver/server: no tool server named 'chat' serves this playbook; runs will end "
        "unavailable until the operator adds it",
    )
    assert service.get_definition(PLAYBOOK, "interaction", "through-chat").warnings == created.warnings
    assert elsewhere.warnings == (OWN,)
    assert asked == [PLAYBOOK, PlaybookRef("acme", "other")]


def test_an_update_is_warned_of_anew(
    store: DynamoDefinitionStore, manual_clock: ManualClock, stub_check: Any
) -> None:
    service = DefinitionService(store, manual_clock, stub_check, servers=lambda playbook: ["chat"])
    assert service.create_definition(PLAYBOOK, "interaction", "moving", SERVER_SOURCE).warnings == ()

    moved = SERVER_SOURCE.replace("server: chat", "server: mail")
    updated = service.update_definition(PLAYBOOK, "interaction", "moving", moved)

    assert updated.warnings == (
        "Line 4, /deliver/server: no tool server named 'mail' serves this playbook; runs will end "
        "unavailable until the operator adds it",
    )


def test_without_the_servers_no_server_is_warned_of(service: DefinitionService) -> None:
    assert service.create_definition(PLAYBOOK, "interaction", "unknown", SERVER_SOURCE).warnings == ()
