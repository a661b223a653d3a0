"""A workflow's schedule at work (workflow-format.md, "Schedules"): the next due time of cron and every,
and a firing's rules — the chain of one-time schedules, one run at a time (``schedule_skipped``), a firing
delivered twice starting one run, a version no longer active stopping the chain."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from parley.clock import ManualClock, format_time
from parley.definitions.model import Definition, PlaybookRef
from parley.dynamo import StoreConflict
from parley.errors import Problem
from parley.runs.events import EVENT_ID_PATTERN, SCHEDULE_SKIPPED
from parley.runs.kinds import TIMED_WORK, work_kind
from parley.runs.model import Event, Run
from parley.runs.store import Found
from parley.workflow.schedules import (
    UNKNOWN,
    WORK,
    Cron,
    Firing,
    Schedule,
    fire,
    saved,
    schedule_name,
    scheduled_run_id,
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def times(cron: str, start: str, count: int) -> list[str]:
    parsed = Cron.parse(cron)
    found: list[str] = []
    moment = at(start)
    for _ in range(count):
        following = parsed.next_after(moment)
        assert following is not None
        found.append(following.strftime("%Y-%m-%d %H:%M %a"))
        moment = following
    return found


# --- cron -----------------------------------------------------------------------------------------------


def test_every_minute_is_the_next_whole_minute_strictly_after() -> None:
    assert times("* * * * *", "2026-03-02 10:00:00", 2) == ["2026-03-02 10:01 Mon", "2026-03-02 10:02 Mon"]
    assert times("* * * * *", "2026-03-02 10:00:30", 1) == ["2026-03-02 10:01 Mon"]


def test_minutes_and_hours_with_lists_ranges_and_steps() -> None:
    assert times("*/15 * * * *", "2026-03-02 10:07:00", 3) == [
        "2026-03-02 10:15 Mon",
        "2026-03-02 10:30 Mon",
        "2026-03-02 10:45 Mon",
    ]
    assert times("0-30/10 8-18/5 * * *", "2026-03-02 13:25:00", 4) == [
        "2026-03-02 13:30 Mon",
        "2026-03-02 18:00 Mon",
        "2026-03-02 18:10 Mon",
        "2026-03-02 18:20 Mon",
    ]
    assert times("5,55 9,17 * * *", "2026-03-02 09:05:00", 3) == [
        "2026-03-02 09:55 Mon",
        "2026-03-02 17:05 Mon",
        "2026-03-02 17:55 Mon",
    ]


def test_a_step_after_one_value_runs_to_the_fields_end() -> None:
    assert times("50/5 10 * * *", "2026-03-02 10:00:00", 3) == [
        "2026-03-02 10:50 Mon",
        "2026-03-02 10:55 Mon",
        "2026-03-03 10:50 Tue",
    ]


def test_the_day_rolls_over_and_so_do_the_month_and_the_year() -> None:
    assert times("30 23 * * *", "2026-12-31 23:30:00", 1) == ["2027-01-01 23:30 Fri"]
    assert times("0 0 1 * *", "2026-01-15 00:00:00", 2) == ["2026-02-01 00:00 Sun", "2026-03-01 00:00 Sun"]


def test_days_of_the_month_past_a_months_end_wait_for_a_month_that_has_them() -> None:
    assert times("0 12 31 * *", "2026-01-31 12:00:00", 3) == [
        "2026-03-31 12:00 Tue",
        "2026-05-31 12:00 Sun",
        "2026-07-31 12:00 Fri",
    ]
    assert times("0 0 29 2 *", "2026-01-01 00:00:00", 1) == ["2028-02-29 00:00 Tue"]
    assert Cron.parse("0 0 30 2 *").next_after(at("2026-01-01 00:00:00")) is None


def test_months_by_number_and_by_name_in_any_case() -> None:
    assert times("0 6 1 jan,Jul *", "2026-02-01 00:00:00", 2) == [
        "2026-07-01 06:00 Wed",
        "2027-01-01 06:00 Fri",
    ]
    assert times("0 6 1 MAR-may *", "2026-03-01 06:00:00", 3) == [
        "2026-04-01 06:00 Wed",
        "2026-05-01 06:00 Fri",
        "2027-03-01 06:00 Mon",
    ]
    assert times("0 0 15 */4 *", "2026-01-01 00:00:00", 3) == [
        "2026-01-15 00:00 Thu",
        "2026-05-15 00:00 Fri",
        "2026-09-15 00:00 Tue",
    ]


def test_days_of_the_week_sunday_as_0_or_7_and_names() -> None:
    sundays = ["2026-03-08 09:00 Sun", "2026-03-15 09:00 Sun"]
    assert times("0 9 * * 0", "2026-03-02 10:00:00", 2) == sundays
    assert times("0 9 * * 7", "2026-03-02 10:00:00", 2) == sundays
    assert times("0 9 * * SUN", "2026-03-02 10:00:00", 2) == sundays
    assert times("0 9 * * MON-FRI", "2026-03-06 09:00:00", 3) == [
        "2026-03-09 09:00 Mon",
        "2026-03-10 09:00 Tue",
        "2026-03-11 09:00 Wed",
    ]
    assert times("0 9 * * 5-7", "2026-03-02 00:00:00", 3) == [
        "2026-03-06 09:00 Fri",
        "2026-03-07 09:00 Sat",
        "2026-03-08 09:00 Sun",
    ]
    assert times("0 9 * * */2", "2026-03-02 00:00:00", 3) == [  # 0, 2, 4, 6: Sun, Tue, Thu, Sat
        "2026-03-03 09:00 Tue",
        "2026-03-05 09:00 Thu",
        "2026-03-07 09:00 Sat",
    ]


def test_a_day_of_the_week_with_a_stepped_day_of_the_month_must_match_both() -> None:
    # cron reads a day field starting with * as "every", and then a day matches both fields.
    assert times("0 9 */2 * MON", "2026-03-01 00:00:00", 2) == [
        "2026-03-09 09:00 Mon",
        "2026-03-23 09:00 Mon",
    ]


def test_both_day_fields_restricted_read_as_either() -> None:
    # The document check refuses it (EventBridge cannot say it); read as cron reads it all the same.
    assert times("0 9 1 * MON", "2026-03-01 00:00:00", 3) == [
        "2026-03-01 09:00 Sun",
        "2026-03-02 09:00 Mon",
        "2026-03-09 09:00 Mon",
    ]


# --- every, and both ------------------------------------------------------------------------------------


def test_every_counts_from_the_versions_save() -> None:
    saved_at = at("2026-03-02 09:20:00.250")
    schedule = Schedule.of({"every": "PT1H"}, saved_at)
    assert schedule is not None
    assert schedule.next_after(saved_at) == at("2026-03-02 10:20:00.250")
    assert schedule.next_after(at("2026-03-02 10:20:00.250")) == at("2026-03-02 11:20:00.250")
    assert schedule.next_after(at("2026-03-02 10:59:00")) == at("2026-03-02 11:20:00.250")
    assert schedule.next_after(at("2026-03-01 00:00:00")) == at("2026-03-02 10:20:00.250")
    minutes = Schedule.of({"every": {"minutes": 90}}, saved_at)
    assert minutes is not None and minutes.next_after(saved_at) == at("2026-03-02 10:50:00.250")


def test_cron_and_every_together_fall_due_at_each_time_of_either() -> None:
    schedule = Schedule.of({"cron": "0 12 * * *", "every": "PT5H"}, at("2026-03-02 09:20:00"))
    assert schedule is not None
    found, moment = [], at("2026-03-02 09:20:00")
    for _ in range(4):
        following = schedule.next_after(moment)
        assert following is not None
        found.append(following.strftime("%d %H:%M"))
        moment = following
    assert found == ["02 12:00", "02 14:20", "02 19:20", "03 00:20"]


def test_no_schedule_is_none() -> None:
    anchor = at("2026-03-02 09:20:00")
    assert Schedule.of(None, anchor) is None
    assert Schedule.of({}, anchor) is None


# --- names, ids and the work ----------------------------------------------------------------------------

PLAYBOOK = PlaybookRef("acme", "campaigns")


def test_names_fit_eventbridge_and_ids_are_derived() -> None:
    due = at("2026-03-02 10:20:00.250")
    name = schedule_name(PLAYBOOK, "x" * 48, 12345, due)
    assert len(name) <= 64 and name.endswith("-v12345-20260302T102000250")
    assert schedule_name(PLAYBOOK, "daily", 1, due) != schedule_name(
        PlaybookRef("acme", "other"), "daily", 1, due
    )
    one = scheduled_run_id(PLAYBOOK, "daily", 1, format_time(due))
    assert one == scheduled_run_id(PLAYBOOK, "daily", 1, format_time(due))
    assert one != scheduled_run_id(PLAYBOOK, "daily", 2, format_time(due))
    assert one != scheduled_run_id(PLAYBOOK, "daily", 1, format_time(due + timedelta(hours=1)))


def test_the_work_goes_to_the_workflow_type_and_reads_back() -> None:
    assert TIMED_WORK[WORK] == "workflow" and work_kind(WORK) == "workflow"
    for previous in (UNKNOWN, None, "a-run"):
        firing = Firing(PLAYBOOK, "daily", 3, "2026-03-02T10:20:00.250Z", previous)
        assert Firing.from_work(firing.work()) == firing
    assert "previous" not in Firing(PLAYBOOK, "daily", 3, "2026-03-02T10:20:00.250Z", UNKNOWN).work()
    with pytest.raises(ValueError, match="version"):
        Firing.from_work({"work": WORK, "playbook": {"org": "a", "playbook": "b"}, "workflow": "w"})


# --- a firing, over fakes of the lifecycle ---------------------------------------------------------------

HOURLY = {"every": "PT1H"}
SAVED_AT = "2026-03-02T09:00:00.000Z"


@dataclass
class FakeScheduler:
    pending: dict[str, tuple[datetime, dict[str, Any]]] = field(default_factory=dict)
    cancelled: list[str] = field(default_factory=list)

    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        self.pending.setdefault(name, (at, dict(work)))

    def cancel(self, name: str) -> None:
        self.cancelled.append(name)
        self.pending.pop(name, None)

    def take_due(self) -> list[dict[str, Any]]:
        due = sorted(self.pending.items(), key=lambda item: item[1][0])
        name, (_, work) = due[0]
        del self.pending[name]
        return [work]


@dataclass
class FakeVersion:
    source: str
    created_at: str


@dataclass
class FakeDefinitions:
    head: Definition | None = None
    versions: dict[int, FakeVersion] = field(default_factory=dict)

    def get(self, playbook: PlaybookRef, definition_type: str, name: str) -> Definition | None:
        return self.head

    def get_version(self, playbook: PlaybookRef, definition_type: str, name: str, version: int) -> Any:
        return self.versions.get(version)


@dataclass
class FakeRuntime:
    clock: ManualClock
    definitions: FakeDefinitions
    scheduler: FakeScheduler | None


@dataclass
class FakeStore:
    runs: dict[str, Run] = field(default_factory=dict)
    events: dict[str, Event] = field(default_factory=dict)

    def get_run(self, playbook: PlaybookRef, run_id: str) -> Run | None:
        return self.runs.get(run_id)

    def list_runs(
        self, playbook: PlaybookRef, *, filters: Mapping[str, str], limit: int, after: Any
    ) -> Found:
        found = [run for run in self.runs.values() if all(getattr(run, k) == v for k, v in filters.items())]
        return Found(found, False, len(found))

    def record_events(self, playbook: PlaybookRef, events: list[Event]) -> None:
        for event in events:
            if event.id in self.events:
                raise StoreConflict("ConditionalCheckFailed")
        self.events.update((event.id, event) for event in events)


@dataclass
class FakeRuns:
    runtime: FakeRuntime
    store: FakeStore = field(default_factory=FakeStore)
    started: list[dict[str, Any]] = field(default_factory=list)
    refuse: Problem | None = None

    def run_definition(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        name: str,
        *,
        input_value: Any,
        run_id: str,
        started_by: str,
    ) -> Run:
        self.started.append({"run_id": run_id, "input": input_value, "started_by": started_by})
        if self.refuse is not None:
            raise self.refuse
        existing = self.store.runs.get(run_id)
        if existing is not None:
            return existing
        run = Run(
            run_id=run_id,
            type=definition_type,
            name=name,
            definition_version=1,
            status="started",
            started_at=format_time(self.runtime.clock.now()),
            started_by=started_by,
            input_digest="x",
            attempt=1,
        )
        self.store.runs[run_id] = run
        return run

    def end(self, run_id: str) -> None:
        self.store.runs[run_id] = replace(self.store.runs[run_id], status="succeeded")


def workflow(
    version: int = 1,
    schedule: Any = HOURLY,
    status: Literal["active", "retired"] = "active",
    at: str = SAVED_AT,
) -> Definition:
    return Definition(
        type="workflow",
        name="hourly",
        version=version,
        status=status,
        media_type="application/yaml",
        description=None,
        source="",
        overview="",
        created_at=SAVED_AT,
        updated_at=at,
        shows={"state_machine": {}, "schedule": schedule},
    )


@pytest.fixture
def runs() -> FakeRuns:
    clock = ManualClock(at("2026-03-02 09:00:00"))
    return FakeRuns(FakeRuntime(clock, FakeDefinitions(workflow()), FakeScheduler()))


def save(runs: FakeRuns, definition: Definition) -> None:
    runs.runtime.definitions.head = definition
    saved(runs.runtime, PLAYBOOK, definition)  # type: ignore[arg-type]


def fire_next(runs: FakeRuns) -> tuple[dict[str, Any], dict[str, Any]]:
    """Move the clock to the earliest pending time and fire it: the work and what happened."""
    scheduler = runs.runtime.scheduler
    assert scheduler is not None
    (work,) = scheduler.take_due()
    due = datetime.fromisoformat(work["due"].replace("Z", "+00:00"))
    runs.runtime.clock.advance((due - runs.runtime.clock.now()).total_seconds())
    return work, fire(runs, work)  # type: ignore[arg-type]


def test_saving_schedules_the_first_time_and_each_firing_the_next(runs: FakeRuns) -> None:
    save(runs, workflow())
    scheduler = runs.runtime.scheduler
    assert scheduler is not None
    assert [work["due"] for _, work in scheduler.pending.values()] == ["2026-03-02T10:00:00.000Z"]
    _, outcome = fire_next(runs)
    assert outcome["outcome"] == "started"
    assert runs.started == [
        {
            "run_id": scheduled_run_id(PLAYBOOK, "hourly", 1, "2026-03-02T10:00:00.000Z"),
            "input": {"schedule": {"due": "2026-03-02T10:00:00.000Z"}},
            "started_by": "schedule:hourly",
        }
    ]
    ((_, following),) = scheduler.pending.values()
    assert following["due"] == "2026-03-02T11:00:00.000Z"
    assert following["previous"] == outcome["run_id"]


def test_a_time_due_while_the_previous_run_is_started_is_skipped_once(runs: FakeRuns) -> None:
    save(runs, workflow())
    _, first = fire_next(runs)
    work, second = fire_next(runs)
    assert second["outcome"] == "skipped" and second["running"] == first["run_id"]
    assert len(runs.started) == 1
    assert fire(runs, work)["outcome"] == "skipped"  # type: ignore[arg-type]  # delivered again
    (event,) = runs.store.events.values()
    assert event.type == SCHEDULE_SKIPPED and event.run_id is None and EVENT_ID_PATTERN.match(event.id)
    assert event.data == {
        "workflow": "hourly",
        "version": 1,
        "due": "2026-03-02T11:00:00.000Z",
        "running": first["run_id"],
    }
    assert event.at == "2026-03-02T11:00:00.000Z"

    runs.end(first["run_id"])
    _, third = fire_next(runs)
    assert third["outcome"] == "started" and third["due"] == "2026-03-02T12:00:00.000Z"
    assert len(runs.started) == 2


def test_a_firing_delivered_twice_starts_one_run(runs: FakeRuns) -> None:
    save(runs, workflow())
    work, first = fire_next(runs)
    again = fire(runs, work)  # type: ignore[arg-type]
    assert again["outcome"] == "unchanged" and again["run_id"] == first["run_id"]
    assert len(runs.started) == 1 and runs.store.events == {}
    scheduler = runs.runtime.scheduler
    assert scheduler is not None and len(scheduler.pending) == 1  # the next time, scheduled once


def test_the_first_firing_after_a_save_finds_a_run_of_an_earlier_version_still_started(
    runs: FakeRuns,
) -> None:
    save(runs, workflow())
    _, first = fire_next(runs)
    runs.runtime.definitions.versions[1] = FakeVersion("schedule: { every: PT1H }\n", SAVED_AT)
    save(runs, workflow(version=2, at="2026-03-02T10:30:00.000Z"))
    scheduler = runs.runtime.scheduler
    assert scheduler is not None
    assert scheduler.cancelled == [schedule_name(PLAYBOOK, "hourly", 1, at("2026-03-02 11:00:00"))]
    _, outcome = fire_next(runs)
    assert outcome["due"] == "2026-03-02T11:30:00.000Z" and outcome["version"] == 2
    assert outcome["outcome"] == "skipped" and outcome["running"] == first["run_id"]


def test_a_firing_of_a_version_no_longer_active_stops_the_chain(runs: FakeRuns) -> None:
    save(runs, workflow())
    scheduler = runs.runtime.scheduler
    assert scheduler is not None
    (work,) = scheduler.take_due()
    for head in (workflow(version=2), workflow(schedule=None), workflow(status="retired"), None):
        runs.runtime.definitions.head = head
        assert fire(runs, work)["outcome"] == "stopped"  # type: ignore[arg-type]
    assert scheduler.pending == {} and runs.started == []


def test_saving_without_a_schedule_or_retiring_cancels_the_next_time(runs: FakeRuns) -> None:
    save(runs, workflow())
    scheduler = runs.runtime.scheduler
    assert scheduler is not None
    runs.runtime.definitions.versions[1] = FakeVersion("schedule: { every: PT1H }\n", SAVED_AT)
    save(runs, workflow(version=2, schedule=None))
    assert scheduler.pending == {}

    save(runs, workflow(version=3, at="2026-03-02T09:10:00.000Z"))
    assert len(scheduler.pending) == 1
    runs.runtime.definitions.versions[3] = FakeVersion("", "2026-03-02T09:10:00.000Z")
    save(runs, workflow(version=3, status="retired", at="2026-03-02T09:40:00.000Z"))
    assert scheduler.pending == {}


def test_saving_again_schedules_the_same_time_once(runs: FakeRuns) -> None:
    save(runs, workflow())
    save(runs, workflow())
    scheduler = runs.runtime.scheduler
    assert scheduler is not None and len(scheduler.pending) == 1


def test_a_runtime_without_a_scheduler_cannot_keep_a_schedule(runs: FakeRuns) -> None:
    runs.runtime.scheduler = None
    with pytest.raises(Problem, match="no scheduler"):
        save(runs, workflow())
    save(runs, workflow(schedule=None))  # nothing to schedule: nothing needed


def test_a_rejected_run_is_its_outcome_and_nothing_written_is_tried_again(runs: FakeRuns) -> None:
    save(runs, workflow())
    runs.refuse = Problem("invalid_input", "The input does not match input.schema.")
    _, outcome = fire_next(runs)
    assert outcome["outcome"] == "rejected" and outcome["reason"] == "invalid_input"
    runs.refuse = Problem("unavailable", "Too many runs are starting at once.")
    with pytest.raises(Problem):
        fire_next(runs)


def test_a_firing_long_late_goes_on_from_now(runs: FakeRuns) -> None:
    save(runs, workflow())
    scheduler = runs.runtime.scheduler
    assert scheduler is not None
    (work,) = scheduler.take_due()
    runs.runtime.clock.advance(timedelta(hours=5, minutes=30).total_seconds())  # 14:30, the work due at 10:00
    assert fire(runs, work)["outcome"] == "started"  # type: ignore[arg-type]
    ((_, following),) = scheduler.pending.values()
    assert following["due"] == "2026-03-02T15:00:00.000Z"


def test_a_schedule_needs_nothing_compiled() -> None:
    import yaml

    from parley.workflow.compiler import compile_workflow, not_yet_compiled

    body = "document: { dsl: '1.0.3', namespace: t, name: n, version: '1' }\ndo:\n  - s: { set: {} }\n"
    scheduled = yaml.safe_load(body + "schedule: { cron: '0 9 * * MON-FRI', every: PT1H }\n")
    assert not_yet_compiled(scheduled) == []
    assert compile_workflow(scheduled).definition == compile_workflow(yaml.safe_load(body)).definition


def test_the_registry_calls_the_saved_hook_of_a_type_that_has_one(runs: FakeRuns) -> None:
    from parley.runs.kinds import definition_saved

    interaction = replace(workflow(), type="interaction", shows=None)
    definition_saved(runs.runtime, PLAYBOOK, interaction)  # type: ignore[arg-type]
    scheduler = runs.runtime.scheduler
    assert scheduler is not None and scheduler.pending == {}
    definition_saved(runs.runtime, PLAYBOOK, workflow())  # type: ignore[arg-type]
    assert len(scheduler.pending) == 1
