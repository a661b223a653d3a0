"""The scheduler port on one machine (``http-api.md``, "Local server"), with the same promises as
EventBridge Scheduler: one-time work by name, a name scheduled twice is scheduled once, cancelling
what is gone is no error, and work runs once it falls due.

- With the manual clock, :class:`LocalScheduler` is the runtime's ``DueWork``: ``POST
  /_local/clock/advance`` steps the clock from one due time to the next and calls :meth:`run_due` at
  each (``parley.local.clock_routes.advance``), so due work runs in time order with ``now`` at its time.
- With the real clock, :meth:`LocalScheduler.start` runs a thread that runs due work on time.

Each piece of work goes to the timer function (``work`` is its event). After each, ``after_each`` runs:
the local executor's ``settle``, so that what the work set off (a run's execution ending through its
token, and the settle step) has happened before the next work or the advance call's answer.

With a data folder, ``journal`` is told each schedule of timer work and its end (run, after what it set
off has settled, or cancelled), under a key of its own, so that a schedule of the same name made while
the first one ran is not ended with it (``parley.local.persistence``, issue 27).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

from parley.clock import Clock
from parley.infrastructure.functions import MAY_SCHEDULE
from parley.local.functions import require_grant

LOG: Final = logging.getLogger("parley.local")
#: The real clock's thread wakes at least this often (a clock that jumps is noticed within it).
MAX_SLEEP_SECONDS: Final = 5.0


@dataclass(order=True)
class _Entry:
    at: datetime
    order: int
    name: str = field(compare=False)
    action: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)
    #: The timer's work of a schedule (``None`` for the runtime's own calls): what a restart gets back.
    work: dict[str, Any] | None = field(default=None, compare=False)
    #: The schedule's key in the journal (timer work only).
    key: str = field(default="", compare=False)


class ScheduleJournal(Protocol):
    """Told each pending schedule of timer work and its end (``parley.local.persistence``)."""

    def scheduled(self, name: str, key: str, at: datetime, work: Mapping[str, Any]) -> None: ...

    def unscheduled(self, name: str, key: str) -> None: ...


class LocalScheduler:
    """``Scheduler`` and ``DueWork`` in process. ``target`` runs one piece of work (the timer function)."""

    def __init__(
        self,
        clock: Clock,
        target: Callable[[Mapping[str, Any]], Any],
        *,
        after_each: Callable[[], None] = lambda: None,
    ) -> None:
        self.clock = clock
        self._target = target
        self.after_each = after_each
        self._heap: list[_Entry] = []
        self._pending: dict[str, _Entry] = {}
        self._order = itertools.count()
        self._changed = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.journal: ScheduleJournal | None = None

    # -- the Scheduler port --------------------------------------------------------------------------

    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        require_grant(MAY_SCHEDULE, "create a schedule (scheduler:CreateSchedule)")
        event = dict(work)
        self.call_at(name, at, lambda: self._target(event), work=event)

    def restore(self, name: str, key: str, at: datetime, work: Mapping[str, Any]) -> None:
        """A schedule the data folder kept, under its key (a start's, before ``journal`` is set)."""
        event = dict(work)
        self.call_at(name, at, lambda: self._target(event), work=event, key=key)

    def cancel(self, name: str) -> None:
        require_grant(MAY_SCHEDULE, "delete a schedule (scheduler:DeleteSchedule)")
        self.forget(name)

    def forget(self, name: str) -> None:
        """Drop pending work ``name`` (the local runtime's own calls; the port's is :meth:`cancel`)."""
        with self._changed:
            entry = self._pending.pop(name, None)
            if entry is not None:
                entry.cancelled = True
                self._ended(entry)
                self._compact()
                self._changed.notify_all()

    def _compact(self) -> None:
        """Rebuild the heap without its cancelled entries once they outnumber the pending ones (answered
        requests cancel their expiries by the thousand): memory bounded by what is pending, at an
        amortized constant cost a cancel."""
        if len(self._heap) > 2 * len(self._pending) + 64:
            self._heap = [entry for entry in self._heap if not entry.cancelled]
            heapq.heapify(self._heap)

    # -- the local runtime's own timed calls -----------------------------------------------------------

    def call_at(
        self,
        name: str,
        at: datetime,
        action: Callable[[], None],
        *,
        work: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> None:
        """Call ``action`` at ``at`` under ``name`` (ignored while that name is pending, as a schedule is)."""
        if at.tzinfo is None:
            raise ValueError("a schedule's time is timezone-aware")
        with self._changed:
            if name in self._pending:
                return
            entry = _Entry(at=at, order=next(self._order), name=name, action=action, work=work)
            if work is not None:
                entry.key = key or uuid.uuid4().hex
                if self.journal is not None:
                    self.journal.scheduled(name, entry.key, at, work)
            self._pending[name] = entry
            heapq.heappush(self._heap, entry)
            self._changed.notify_all()

    def call_later(self, name: str, seconds: float, action: Callable[[], None]) -> None:
        self.call_at(name, self.clock.now() + timedelta(seconds=seconds), action)

    def saved(self) -> list[dict[str, Any]]:
        """The pending schedules of timer work, as the local data keeps them."""
        from parley.clock import format_time

        with self._changed:
            return [
                {"name": e.name, "key": e.key, "at": format_time(e.at), "work": e.work}
                for e in sorted(self._heap)
                if not e.cancelled and e.work is not None
            ]

    def pending(self) -> list[tuple[datetime, str]]:
        """What is scheduled, in the order it will run."""
        with self._changed:
            return [(e.at, e.name) for e in sorted(self._heap) if not e.cancelled]

    # -- DueWork ---------------------------------------------------------------------------------------

    def next_due(self) -> datetime | None:
        with self._changed:
            self._drop_cancelled()
            return self._heap[0].at if self._heap else None

    def run_due(self, now: datetime) -> None:
        """Run everything due at or before ``now`` in time order (work it schedules too, if due by then).

        Work that fails is dropped (a schedule whose retries ran out) and the first failure is raised
        once the rest has run, so that the advance call answers ``500`` and the failure is seen.
        """
        failures: list[BaseException] = []
        while (entry := self._pop_due(now)) is not None:
            try:
                entry.action()
            except Exception as exc:
                LOG.exception("timed work %s failed", entry.name)
                failures.append(exc)
            try:
                self.after_each()
            except Exception as exc:
                LOG.warning("after timed work %s: %s", entry.name, exc)
                failures.append(exc)
            self._ended(entry)
        if failures:
            raise failures[0]

    def _pop_due(self, now: datetime) -> _Entry | None:
        with self._changed:
            self._drop_cancelled()
            if not self._heap or self._heap[0].at > now:
                return None
            entry = heapq.heappop(self._heap)
            del self._pending[entry.name]
            return entry

    def _ended(self, entry: _Entry) -> None:
        if entry.work is not None and self.journal is not None:
            self.journal.unscheduled(entry.name, entry.key)

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)

    # -- the real clock's thread -----------------------------------------------------------------------

    def start(self, lock: contextlib.AbstractContextManager[Any] | None = None) -> None:
        """Run due work on time in a thread, each run under ``lock`` (the server's: one event at a time)."""
        if self._thread is not None:
            raise RuntimeError("the scheduler runs already")
        self._stopping = False
        self._thread = threading.Thread(
            target=self._run, args=(lock or contextlib.nullcontext(),), name="parley-scheduler", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self, lock: contextlib.AbstractContextManager[Any]) -> None:
        while True:
            with self._changed:
                if self._stopping:
                    return
                self._drop_cancelled()
                now = self.clock.now()
                if not self._heap or self._heap[0].at > now:
                    wait = (self._heap[0].at - now).total_seconds() if self._heap else MAX_SLEEP_SECONDS
                    self._changed.wait(min(wait, MAX_SLEEP_SECONDS))
                    continue
            # A failure is logged where it happened; the thread carries on with the next work.
            with lock, contextlib.suppress(Exception):
                self.run_due(self.clock.now())
