"""A workflow's schedule at work (``workflow-format.md``, "Schedules"): ``schedule.cron`` and
``schedule.every`` start runs on their own.

**One time at a time.** A schedule is a chain of one-time pieces of timed work on the scheduler port
(EventBridge Scheduler's ``at()`` schedules on AWS, the local scheduler and its clock under ``parley
serve``): saving a version with a schedule schedules its first due time, and each firing schedules the
next one before it starts its run. So AWS and the local runtime share one port and one code path, and a
cron expression is never handed to EventBridge (its day of the week would need translating; here
:class:`Cron` reads the five fields itself, in UTC).

- The work (``{"work": "schedule", "playbook", "workflow", "version", "due", "previous"?}``) goes to the
  timer function, which hands it to the workflow type (``parley.runs.kinds.TIMED_WORK``) and so to
  :func:`fire`.
- Each firing belongs to the version that scheduled it: when the workflow's active version is another
  one, when that version has no schedule, or when the workflow is retired, the firing does nothing and
  schedules nothing, so the chain stops (``stopped``). Saving also cancels the next time the version
  before had pending (:func:`saved`), so on AWS no schedule is left to fire for nothing.
- ``every`` counts from the moment its version was saved: saved at 09:20 with ``PT1H``, it falls due at
  10:20, 11:20, …; ``cron`` at the minutes its fields name. Both together: each time of either.
- A run's ``run_id`` is derived from the workflow, the version and the due time, so a firing delivered
  twice starts one run. Its input is ``{"schedule": {"due": "<time>"}}``, its ``started_by``
  ``schedule:<workflow name>``.
- One run at a time: a time that falls due while the schedule's previous run is still ``started`` is
  skipped and recorded as a ``schedule_skipped`` playbook event (once, whatever the deliveries). The
  previous run is carried from firing to firing in the work (``previous``); the first firing after a
  save finds it among the workflow's started runs (runs of an earlier version count).
- A firing later than :data:`CATCH_UP` past the time after it (the timer was down) goes on from now:
  the times missed meanwhile are not run.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import Definition, PlaybookRef
from parley.dynamo import StoreConflict
from parley.errors import Problem
from parley.runs import events
from parley.runs.model import Event
from parley.workflow.document_durations import ReadDuration, read_duration
from parley.workflow.document_schedule import CRON_FIELDS, CronField

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime
    from parley.runs.service import RunService

LOG: Final = logging.getLogger("parley.workflow")

#: The timer's work of a schedule (``parley.runs.kinds.TIMED_WORK``).
WORK: Final = "schedule"
TYPE: Final = "workflow"
#: Where a scheduled run's id is derived from (uuid5 of the workflow, the version and the due time).
_RUN_NAMESPACE: Final = uuid.UUID("0b7e3f52-2d4c-4c8e-8f0a-5e6d1c9a7b31")
#: A firing later than this past the next time goes on from now instead of running each time missed.
CATCH_UP: Final = timedelta(minutes=5)
#: How far :meth:`Cron.next_after` looks: past it, a cron expression never falls due (``0 0 30 2 *``).
_HORIZON_DAYS: Final = 366 * 10
#: The runs listed a page at a time when the first firing after a save looks for one still started.
_PAGE: Final = 100


# --- when a schedule falls due --------------------------------------------------------------------


@dataclass(frozen=True)
class Cron:
    """A five-field cron expression in UTC (``parley.workflow.document_schedule`` checked it): the values
    each field allows. The day of the month and the day of the week are read as cron reads them: when
    either field starts with ``*`` a day must match both, otherwise either (the document check lets one
    of them only be restricted)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    #: 0 is Sunday (cron's 7 read as 0).
    weekdays: frozenset[int]
    either_day: bool

    @classmethod
    def parse(cls, text: str) -> Cron:
        """The expression's fields; ``ValueError`` for text the document check would refuse."""
        fields = text.split()
        if len(fields) != len(CRON_FIELDS):
            raise ValueError(f"a cron expression has five fields: {text!r}")
        minutes, hours, days, months, weekdays = (
            _field_values(written, field) for written, field in zip(fields, CRON_FIELDS, strict=True)
        )
        either = not fields[2].startswith("*") and not fields[4].startswith("*")
        return cls(minutes, hours, days, months, frozenset(d % 7 for d in weekdays), either)

    def next_after(self, moment: datetime) -> datetime | None:
        """The first time strictly after ``moment`` (a whole minute, UTC) the expression names, or
        ``None`` when none comes within ten years (a day no month has)."""
        start = (moment.astimezone(UTC) + timedelta(minutes=1)).replace(second=0, microsecond=0)
        day = start.date()
        least = (start.hour, start.minute)
        last = day + timedelta(days=_HORIZON_DAYS)
        while day <= last:
            if day.month not in self.months:
                day = _first_of_next_month(day)
                least = (0, 0)
                continue
            if self._day_matches(day):
                found = self._time_from(*least)
                if found is not None:
                    return datetime(day.year, day.month, day.day, found[0], found[1], tzinfo=UTC)
            day += timedelta(days=1)
            least = (0, 0)
        return None

    def _day_matches(self, day: date) -> bool:
        in_month = day.day in self.days
        in_week = (day.weekday() + 1) % 7 in self.weekdays  # Python's Monday is 0, cron's Sunday is 0
        return (in_month or in_week) if self.either_day else (in_month and in_week)

    def _time_from(self, hour: int, minute: int) -> tuple[int, int] | None:
        for h in sorted(h for h in self.hours if h >= hour):
            later = [m for m in self.minutes if h > hour or m >= minute]
            if later:
                return h, min(later)
        return None


def _field_values(written: str, field: CronField) -> frozenset[int]:
    values: set[int] = set()
    for item in written.split(","):
        span, _, step_text = item.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(f"a step is at least 1: {item!r}")
        if span == "*":
            low, high = field.least, field.most
        else:
            low_text, _, high_text = span.partition("-")
            low = _value(low_text, field)
            # A step after a single value runs to the field's end, as cron reads it.
            high = _value(high_text, field) if high_text else (field.most if step_text else low)
        if high < low:
            raise ValueError(f"a range goes from the lower value to the higher: {item!r}")
        values.update(range(low, high + 1, step))
    return frozenset(values)


def _value(text: str, field: CronField) -> int:
    lowered = text.lower()
    if lowered in field.names:
        return field.names.index(lowered) + field.first_name
    number = int(text)
    if not field.least <= number <= field.most:
        raise ValueError(f"{text!r} is not a {field.name}")
    return number


def _first_of_next_month(day: date) -> date:
    return date(day.year + 1, 1, 1) if day.month == 12 else date(day.year, day.month + 1, 1)


@dataclass(frozen=True)
class Schedule:
    """A version's schedule: its ``cron``, its ``every`` and the moment ``every`` counts from (the
    version's save)."""

    cron: Cron | None
    every: timedelta | None
    anchor: datetime

    @classmethod
    def of(cls, value: Any, anchor: datetime) -> Schedule | None:
        """The schedule a document's ``schedule`` (as saved and shown) says, or ``None`` for none."""
        if not isinstance(value, Mapping):
            return None
        cron = Cron.parse(value["cron"]) if isinstance(value.get("cron"), str) else None
        every: timedelta | None = None
        if value.get("every") is not None:
            read = read_duration(value["every"])
            if isinstance(read, ReadDuration) and read.length is not None and read.length > timedelta(0):
                every = read.length
        if cron is None and every is None:
            return None
        return cls(cron, every, anchor)

    def next_after(self, moment: datetime) -> datetime | None:
        """The first due time strictly after ``moment``; ``None`` when it never falls due again."""
        found: list[datetime] = []
        if self.cron is not None:
            at = self.cron.next_after(moment)
            if at is not None:
                found.append(at)
        if self.every is not None:
            count = max((moment - self.anchor) // self.every + 1, 1)
            found.append(self.anchor + count * self.every)
        return min(found) if found else None


# --- names and ids ------------------------------------------------------------------------------------


def _workflow_digest(playbook: PlaybookRef, name: str) -> str:
    return hashlib.sha256(f"{playbook.org}/{playbook.playbook}/{name}".encode()).hexdigest()[:16]


def schedule_name(playbook: PlaybookRef, name: str, version: int, due: datetime) -> str:
    """The one-time schedule of one due time of a version (at most 64 of EventBridge's characters)."""
    utc = due.astimezone(UTC)
    stamp = utc.strftime("%Y%m%dT%H%M%S") + f"{utc.microsecond // 1000:03d}"
    return f"wfs-{_workflow_digest(playbook, name)}-v{version}-{stamp}"


def scheduled_run_id(playbook: PlaybookRef, name: str, version: int, due: str) -> str:
    """The run a due time starts: the same workflow, version and time give the same run."""
    seed = f"{playbook.org}/{playbook.playbook}\n{name}\n{version}\n{due}"
    return str(uuid.uuid5(_RUN_NAMESPACE, seed))


def started_by(name: str) -> str:
    return f"schedule:{name}"


def _skipped_event(playbook: PlaybookRef, firing: Firing, running: str) -> Event:
    """``schedule_skipped``, its id made from the time skipped so that a firing delivered again records
    it once (the store writes an event id once)."""
    due = parse_time(firing.due)
    millis = (due - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    seed = f"{playbook.org}/{playbook.playbook}\n{firing.workflow}\n{firing.version}\n{firing.due}"
    digest = hashlib.sha256(seed.encode()).hexdigest()[:16]
    step = events.step_of(events.SCHEDULE_SKIPPED)
    data = {"workflow": firing.workflow, "version": firing.version, "due": firing.due, "running": running}
    return Event(f"{millis:013d}{step:02d}{digest}", events.SCHEDULE_SKIPPED, firing.due, None, data)


# --- the work -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Firing:
    """One due time of a version's schedule, as the timer's work carries it. ``previous`` is the run the
    schedule started last (``None``: none), or :data:`UNKNOWN` for the first firing after a save."""

    playbook: PlaybookRef
    workflow: str
    version: int
    due: str
    previous: str | _Unknown | None

    def work(self) -> dict[str, Any]:
        work: dict[str, Any] = {
            "work": WORK,
            "playbook": {"org": self.playbook.org, "playbook": self.playbook.playbook},
            "workflow": self.workflow,
            "version": self.version,
            "due": self.due,
        }
        if not isinstance(self.previous, _Unknown):
            work["previous"] = self.previous
        return work

    @classmethod
    def from_work(cls, work: Mapping[str, Any]) -> Firing:
        playbook, version = work.get("playbook"), work.get("version")
        if not isinstance(playbook, Mapping) or not isinstance(version, int) or isinstance(version, bool):
            raise ValueError("the timer's schedule work names its playbook and its version")
        previous: str | _Unknown | None = UNKNOWN
        if "previous" in work:
            previous = None if work["previous"] is None else str(work["previous"])
        return cls(
            PlaybookRef(str(playbook["org"]), str(playbook["playbook"])),
            str(work["workflow"]),
            version,
            str(work["due"]),
            previous,
        )

    @property
    def name(self) -> str:
        return schedule_name(self.playbook, self.workflow, self.version, parse_time(self.due))


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()


# --- saving and retiring --------------------------------------------------------------------------------


def saved(runtime: Runtime, playbook: PlaybookRef, definition: Definition) -> None:
    """A workflow was saved or retired (``definition`` is its head now): cancel the next time the version
    before had pending, and schedule the first time of this version's schedule, if it has one and is
    active (else cancel this version's next time). Harmless to call again."""
    now = runtime.clock.now()
    name, version = definition.name, definition.version
    if version > 1:
        earlier = runtime.definitions.get_version(playbook, TYPE, name, version - 1)
        if earlier is not None:
            schedule = Schedule.of(_schedule_in(earlier.source), parse_time(earlier.created_at))
            _cancel_next(runtime, playbook, name, version - 1, schedule, now)
    shown = (definition.shows or {}).get("schedule")
    if definition.status != "active":
        current = runtime.definitions.get_version(playbook, TYPE, name, version)
        anchor = parse_time(current.created_at) if current is not None else now
        _cancel_next(runtime, playbook, name, version, Schedule.of(shown, anchor), now)
        return
    schedule = Schedule.of(shown, parse_time(definition.updated_at))
    if schedule is None:
        return
    first = schedule.next_after(now)
    if first is None:
        return
    scheduler = runtime.scheduler
    if scheduler is None:
        raise Problem(
            "unavailable",
            f"The workflow {name!r} is saved, but this runtime has no scheduler to start its scheduled runs.",
        )
    firing = Firing(playbook, name, version, format_time(first), UNKNOWN)
    try:
        scheduler.schedule(firing.name, first, firing.work())
    except Problem as problem:
        raise Problem(
            "unavailable",
            f"The workflow {name!r} is saved, but its schedule could not be set ({problem.detail}); save it "
            "again with the same source to set it.",
        ) from None


def _cancel_next(
    runtime: Runtime,
    playbook: PlaybookRef,
    name: str,
    version: int,
    schedule: Schedule | None,
    now: datetime,
) -> None:
    """Cancel the time a version's schedule has pending (a firing under way finds the version no longer
    active and stops)."""
    if schedule is None or runtime.scheduler is None:
        return
    pending = schedule.next_after(now)
    if pending is not None:
        runtime.scheduler.cancel(schedule_name(playbook, name, version, pending))


def _schedule_in(source: str) -> Any:
    """The ``schedule`` of a saved document's source (saved, so it is YAML and a mapping)."""
    import yaml

    try:
        data = yaml.safe_load(source)
    except yaml.YAMLError:
        return None
    return data.get("schedule") if isinstance(data, dict) else None


# --- a firing -------------------------------------------------------------------------------------------


def fire(runs: RunService, work: Mapping[str, Any]) -> dict[str, Any]:
    """A due time of a version's schedule: schedule the next, then start the run (or skip it while the
    previous run is still started). What happened: ``stopped`` (the version is not the active one, or
    has no schedule), ``started``, ``succeeded``, ``rejected`` (its run's ending), ``unchanged`` (this
    time's run exists: the firing came again) or ``skipped``."""
    firing = Firing.from_work(work)
    playbook, name = firing.playbook, firing.workflow
    runtime = runs.runtime
    answer: dict[str, Any] = {"work": WORK, "workflow": name, "version": firing.version, "due": firing.due}
    head = runtime.definitions.get(playbook, TYPE, name)
    schedule = (
        Schedule.of((head.shows or {}).get("schedule"), parse_time(head.updated_at))
        if head is not None and head.status == "active" and head.version == firing.version
        else None
    )
    if schedule is None:
        return {**answer, "outcome": "stopped"}
    run_id = scheduled_run_id(playbook, name, firing.version, firing.due)
    answer["run_id"] = run_id
    existing = runs.store.get_run(playbook, run_id)
    running: str | None = None
    if existing is None:
        running = _still_started(runs, playbook, name, firing.previous, run_id)
    _schedule_next(runtime, firing, schedule, running or run_id)
    if existing is not None:
        return {**answer, "outcome": "unchanged"}
    if running is not None:
        with contextlib.suppress(StoreConflict):  # recorded by an earlier delivery of this firing
            runs.store.record_events(playbook, [_skipped_event(playbook, firing, running)])
        return {**answer, "outcome": "skipped", "running": running}
    try:
        run = runs.run_definition(
            playbook,
            TYPE,
            name,
            input_value={"schedule": {"due": firing.due}},
            run_id=run_id,
            started_by=started_by(name),
        )
    except Problem as problem:
        if problem.reason == "unavailable" and runs.store.get_run(playbook, run_id) is None:
            raise  # nothing written: the timer's delivery is tried again
        return {**answer, "outcome": "rejected", "reason": problem.reason}
    return {**answer, "outcome": run.status}


def _still_started(
    runs: RunService, playbook: PlaybookRef, name: str, previous: str | _Unknown | None, own: str
) -> str | None:
    """The schedule's previous run when it is still ``started``, else ``None``."""
    if previous is None:
        return None
    if isinstance(previous, str):
        run = runs.store.get_run(playbook, previous)
        return previous if run is not None and run.status == "started" and previous != own else None
    # The first firing after a save: a run the schedule started under any version may still be going.
    after: str | None = None
    while True:
        found = runs.store.list_runs(
            playbook, filters={"type": TYPE, "name": name, "status": "started"}, limit=_PAGE, after=after
        )
        for run in found.items:
            if run.started_by == started_by(name) and run.run_id != own:
                current = runs.store.get_run(playbook, run.run_id)  # the list's index may lag
                if current is not None and current.status == "started":
                    return str(run.run_id)
        if not found.more or found.resume is None:
            return None
        after = found.resume


def _schedule_next(runtime: Runtime, firing: Firing, schedule: Schedule, previous: str) -> None:
    now = runtime.clock.now()
    due = parse_time(firing.due)
    following = schedule.next_after(due)
    if following is not None and following < now - CATCH_UP:
        following = schedule.next_after(now)
    if following is None:
        return
    scheduler = runtime.scheduler
    if scheduler is None:
        raise Problem("unavailable", "This runtime has no scheduler to start scheduled runs.")
    after = Firing(firing.playbook, firing.workflow, firing.version, format_time(following), previous)
    scheduler.schedule(after.name, following, after.work())
