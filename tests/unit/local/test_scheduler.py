"""The local scheduler: EventBridge Scheduler's promises on the manual clock (driven by the advance
call) and on the real clock (its own thread)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from parley.clock import ManualClock, SystemClock
from parley.local import scheduler as scheduler_module
from parley.local.clock_routes import advance
from parley.local.scheduler import LocalScheduler


class Timer:
    """A stand-in timer function: records each piece of work with the clock's time when it ran."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.ran: list[tuple[str, datetime]] = []
        self.done = threading.Event()

    def __call__(self, work: Any) -> None:
        if work.get("fail"):
            raise RuntimeError(f"work {work['id']} is on fire")
        self.ran.append((work["id"], self.clock.now()))
        self.done.set()


def work(identifier: str, **more: Any) -> dict[str, Any]:
    return {"work": "expire", "id": identifier, **more}


@pytest.fixture
def timer(manual_clock: ManualClock) -> Timer:
    return Timer(manual_clock)


@pytest.fixture
def scheduler(manual_clock: ManualClock, timer: Timer) -> LocalScheduler:
    return LocalScheduler(manual_clock, timer)


def test_due_work_runs_in_time_order_each_at_its_time(
    manual_clock: ManualClock, timer: Timer, scheduler: LocalScheduler
) -> None:
    start = manual_clock.now()
    scheduler.schedule("c", start + timedelta(seconds=90), work("c"))
    scheduler.schedule("a", start + timedelta(seconds=30), work("a"))
    scheduler.schedule("b", start + timedelta(seconds=60), work("b"))
    scheduler.schedule("later", start + timedelta(hours=1), work("later"))

    now = advance(manual_clock, 120, [scheduler])

    assert now == start + timedelta(seconds=120)
    assert timer.ran == [
        ("a", start + timedelta(seconds=30)),
        ("b", start + timedelta(seconds=60)),
        ("c", start + timedelta(seconds=90)),
    ]
    assert scheduler.pending() == [(start + timedelta(hours=1), "later")]


def test_work_at_the_same_time_runs_in_the_order_it_was_scheduled(
    manual_clock: ManualClock, timer: Timer, scheduler: LocalScheduler
) -> None:
    at = manual_clock.now() + timedelta(seconds=5)
    for name in ("first", "second", "third"):
        scheduler.schedule(name, at, work(name))

    advance(manual_clock, 5, [scheduler])

    assert [name for name, _ in timer.ran] == ["first", "second", "third"]


def test_work_scheduled_by_work_runs_at_its_own_time(manual_clock: ManualClock) -> None:
    start = manual_clock.now()
    ran: list[datetime] = []
    scheduler: LocalScheduler

    def retrying_timer(event: Any) -> None:
        ran.append(manual_clock.now())
        if len(ran) < 3:
            scheduler.schedule(f"attempt-{len(ran) + 1}", manual_clock.now() + timedelta(minutes=1), event)

    scheduler = LocalScheduler(manual_clock, retrying_timer)
    scheduler.schedule("attempt-1", start + timedelta(minutes=1), work("x"))

    advance(manual_clock, 3600, [scheduler])

    assert ran == [start + timedelta(minutes=n) for n in (1, 2, 3)]


def test_a_name_scheduled_twice_is_scheduled_once(
    manual_clock: ManualClock, timer: Timer, scheduler: LocalScheduler
) -> None:
    start = manual_clock.now()
    scheduler.schedule("expire-r-1", start + timedelta(seconds=10), work("first"))
    scheduler.schedule("expire-r-1", start + timedelta(seconds=20), work("second"))

    advance(manual_clock, 60, [scheduler])
    scheduler.schedule("expire-r-1", start + timedelta(seconds=90), work("after it fired"))
    advance(manual_clock, 60, [scheduler])

    assert [name for name, _ in timer.ran] == ["first", "after it fired"]


def test_a_cancelled_schedule_never_fires_and_cancelling_the_unknown_is_harmless(
    manual_clock: ManualClock, timer: Timer, scheduler: LocalScheduler
) -> None:
    scheduler.schedule("expire-r-1", manual_clock.now() + timedelta(seconds=10), work("cancelled"))
    scheduler.schedule("expire-r-2", manual_clock.now() + timedelta(seconds=20), work("kept"))

    scheduler.cancel("expire-r-1")
    scheduler.cancel("expire-r-1")
    scheduler.cancel("never-made")
    advance(manual_clock, 60, [scheduler])

    assert [name for name, _ in timer.ran] == ["kept"]
    assert scheduler.next_due() is None


def test_advancing_0_seconds_runs_what_is_already_due(
    manual_clock: ManualClock, timer: Timer, scheduler: LocalScheduler
) -> None:
    now = manual_clock.now()
    scheduler.schedule("past", now - timedelta(seconds=5), work("past"))
    scheduler.schedule("now", now, work("now"))
    scheduler.schedule("future", now + timedelta(milliseconds=1), work("future"))

    assert advance(manual_clock, 0, [scheduler]) == now

    assert [name for name, _ in timer.ran] == ["past", "now"]
    assert all(at == now for _, at in timer.ran)


def test_the_advance_returns_after_what_each_piece_of_work_set_off(
    manual_clock: ManualClock, timer: Timer, scheduler: LocalScheduler
) -> None:
    # after_each is the executor's settle: it runs after each piece of work, before the next one.
    order: list[str] = []
    scheduler.after_each = lambda: order.append(f"settled after {timer.ran[-1][0]}")
    original = scheduler._target
    scheduler._target = lambda event: (order.append(f"ran {event['id']}"), original(event))
    scheduler.schedule("a", manual_clock.now() + timedelta(seconds=1), work("a"))
    scheduler.schedule("b", manual_clock.now() + timedelta(seconds=2), work("b"))

    advance(manual_clock, 10, [scheduler])

    assert order == ["ran a", "settled after a", "ran b", "settled after b"]


def test_failed_work_is_dropped_and_raised_once_the_rest_has_run(
    manual_clock: ManualClock, timer: Timer, scheduler: LocalScheduler
) -> None:
    at = manual_clock.now() + timedelta(seconds=1)
    scheduler.schedule("broken", at, work("broken", fail=True))
    scheduler.schedule("fine", at, work("fine"))

    with pytest.raises(RuntimeError, match="on fire"):
        advance(manual_clock, 5, [scheduler])

    assert [name for name, _ in timer.ran] == ["fine"]
    assert scheduler.next_due() is None


def test_a_time_without_a_zone_is_refused(scheduler: LocalScheduler) -> None:
    with pytest.raises(ValueError, match="timezone"):
        scheduler.schedule("naive", datetime(2026, 10, 17, 10, 0), work("x"))


# -- the real clock ------------------------------------------------------------------------------------


def test_under_the_real_clock_work_runs_on_time_in_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # The thread would otherwise look only once an hour: run at all within the wait, the work ran
    # because the thread woke at its due time (no upper bound on a clock).
    monkeypatch.setattr(scheduler_module, "MAX_SLEEP_SECONDS", 3600.0)
    clock = SystemClock()
    timer = Timer(clock)
    scheduler = LocalScheduler(clock, timer)
    lock = threading.RLock()
    scheduler.start(lock)
    try:
        due = clock.now() + timedelta(milliseconds=300)
        scheduler.schedule("soon", due, work("soon"))
        scheduler.schedule("cancelled", due, work("cancelled"))
        scheduler.cancel("cancelled")

        assert timer.done.wait(30)
    finally:
        scheduler.stop()

    ((name, ran_at),) = timer.ran
    assert name == "soon"
    assert due <= ran_at  # not early


def test_under_the_real_clock_work_waits_for_the_servers_lock() -> None:
    clock = SystemClock()
    timer = Timer(clock)
    scheduler = LocalScheduler(clock, timer)
    lock = threading.RLock()
    scheduler.start(lock)
    try:
        with lock:  # a request is being answered
            scheduler.schedule("due", clock.now(), work("due"))
            assert not timer.done.wait(0.3)
        assert timer.done.wait(30)
    finally:
        scheduler.stop()


def test_stopping_the_real_clocks_thread_is_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    # The thread would sleep an hour between looks: only stop's wake-up can end it within stop's wait.
    monkeypatch.setattr(scheduler_module, "MAX_SLEEP_SECONDS", 3600.0)
    scheduler = LocalScheduler(SystemClock(), lambda event: None)
    parked = threading.Event()

    class Watched(threading.Condition):
        def wait(self, timeout: float | None = None) -> bool:
            if scheduler._heap:  # asleep with the far work known: only a wake-up ends this wait
                parked.set()
            return super().wait(timeout)

    scheduler._changed = Watched(threading.Lock())
    scheduler.start()
    scheduler.schedule("far", datetime.now(UTC) + timedelta(days=1), work("far"))
    thread = scheduler._thread
    assert thread is not None
    assert parked.wait(30)

    scheduler.stop(timeout=30)

    assert not thread.is_alive()  # woken by stop, not at the end of its sleep
    with pytest.raises(RuntimeError):
        scheduler.start()
        scheduler.start()
    scheduler.stop()


def test_cancelled_work_does_not_pile_up() -> None:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    scheduler = LocalScheduler(clock, lambda work: None)
    ran: list[str] = []
    scheduler.call_later("kept", 30, lambda: ran.append("kept"))
    for i in range(10_000):
        scheduler.call_later(f"expiry-{i}", 60 + i, lambda: ran.append("cancelled"))
        scheduler.forget(f"expiry-{i}")

    assert len(scheduler._heap) < 200
    assert scheduler.pending() == [(clock.now() + timedelta(seconds=30), "kept")]
    scheduler.run_due(clock.now() + timedelta(days=1))
    assert ran == ["kept"]
