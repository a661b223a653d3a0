"""Races: one of many answers wins; an answer, an expiry and a cancel end a request exactly once; the
open-requests counter stays exact ("Answering a request"; "How a run ends"; the contract of issue 3)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from parley.clock import ManualClock
from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.ports.waiting import RunKey
from parley.runs.service import RunService

PLAYBOOK = PlaybookRef("acme", "campaigns")
APPROVE = "approve-campaign-brief"
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}


def at_once(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` in ``count`` threads released together; each result, or the Problem raised."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def one(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except Problem as problem:
            results[i] = problem

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


class ThreadClock:
    """A manual clock each thread may see at its own offset (to race an answer against the expiry)."""

    def __init__(self, base: ManualClock) -> None:
        self.base = base
        self.offsets = threading.local()

    def now(self) -> datetime:
        return self.base.now() + getattr(self.offsets, "delta", timedelta(0))


def test_many_different_answers_at_once_one_is_taken_the_others_are_conflict(
    run: Any, answer: Any, service: RunService
) -> None:
    started = run()
    notes = [f"note {i}" for i in range(12)]

    results = at_once(12, lambda i: answer(started.run_id, {"verdict": "approve", "note": notes[i]}))

    facts = [r for r in results if not isinstance(r, Problem)]
    problems = [r for r in results if isinstance(r, Problem)]
    assert len(facts) == 1
    assert len(problems) == 11 and {p.reason for p in problems} == {"conflict"}
    done = service.get_run(PLAYBOOK, started.run_id)
    assert done.output == facts[0].answer
    history = [e["type"] for e in service.get_run_history(PLAYBOOK, started.run_id).items]
    assert history == ["interaction_requested", "request_answered", "run_succeeded"]
    assert service.store.open_requests(PLAYBOOK) == 0


def test_the_same_answer_many_times_at_once_gives_one_fact(run: Any, answer: Any) -> None:
    started = run()

    results = at_once(8, lambda _: answer(started.run_id, {"verdict": "approve"}))

    assert all(not isinstance(r, Problem) for r in results), results
    assert len({r.answer_id for r in results}) == 1


def test_an_answer_a_cancel_and_the_expiry_racing_end_the_request_exactly_once(
    run: Any, answer: Any, runtime: Any, service: RunService, manual_clock: ManualClock, waits: Any
) -> None:
    clock = ThreadClock(manual_clock)
    runtime.clock = clock
    for _round in range(4):
        started = run()
        key = RunKey("acme", "campaigns", started.run_id)

        def contender(i: int, run_id: str = started.run_id, key: RunKey = key) -> str:
            if i == 0:  # the answer comes a moment before the expiry
                clock.offsets.delta = timedelta(days=2) - timedelta(milliseconds=1)
                answer(run_id, {"verdict": "approve"})
                return "answered"
            if i == 1:  # the timer fires at the expiry
                clock.offsets.delta = timedelta(days=2)
                return service.expire_request(key)
            clock.offsets.delta = timedelta(days=1)
            service.cancel_run(PLAYBOOK, run_id, reason=None, cancelled_by="dev")
            return "cancelled"

        results = at_once(3, contender)

        winners = [r for r in results if r in ("answered", "expired", "cancelled")]
        assert len(winners) == 1, results
        for result in results:
            assert result in (*winners, "unchanged") or (isinstance(result, Problem) and result.status == 409)
        ended = service.get_run(PLAYBOOK, started.run_id)
        expected = {"answered": "succeeded", "expired": "rejected", "cancelled": "rejected"}[winners[0]]
        assert ended.status == expected
        types = [e["type"] for e in service.get_run_history(PLAYBOOK, started.run_id).items]
        assert types.count("run_succeeded") + types.count("run_rejected") == 1
        assert len(waits.ended) == _round + 1
    assert service.store.open_requests(PLAYBOOK) == 0


def test_the_open_requests_bound_is_exact_under_concurrency(run: Any, service: RunService) -> None:
    results = at_once(20, lambda _: run())

    started = [r for r in results if not isinstance(r, Problem)]
    full = [r for r in results if isinstance(r, Problem)]
    assert len(started) == 5
    assert len(full) == 15 and {(p.reason, p.kind) for p in full} == {("unavailable", "requests_full")}
    assert service.store.open_requests(PLAYBOOK) == 5
    assert len(service.list_interactions(PLAYBOOK).items) == 5


def test_concurrent_runs_under_one_id_start_one_run(run: Any, service: RunService) -> None:
    run_id = "0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"

    results = at_once(6, lambda _: run(APPROVE, BRIEF, run_id))

    assert all(not isinstance(r, Problem) for r in results), results
    assert {r.run_id for r in results} == {run_id}
    assert service.store.open_requests(PLAYBOOK) == 1
    assert len(service.list_interactions(PLAYBOOK).items) == 1
