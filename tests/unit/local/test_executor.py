"""The local executor: the local interpreter (``parley.local.steps``) runs the state machine of
``parley.infrastructure.state_machine``, its Lambda tasks run by stand-in wait and settle handlers (the
real ones are exercised in ``test_server``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.infrastructure.state_machine import WAIT_STATE, state_machine_definition
from parley.local.clock_routes import advance
from parley.local.executor import TIMEOUT_ERROR, WORKERS, LocalExecutor, SettleTimeout, local_aws
from parley.local.scheduler import LocalScheduler
from parley.ports.waiting import RunKey

RUN = RunKey("acme", "campaigns", "7f1c1a8e-3f3b-4c63-9a40-0b4b3bfcd2a1")


class Functions:
    """Stand-ins for the wait and settle functions: they record what they were called with.

    Settle answers ``outcomes`` in turn (then ``settled``): a word as the real one does, ``{"run",
    "outcome"}``, anything else as it is.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.tokens: dict[str, str] = {}  # run id -> token
        self.on_wait: Callable[[Any], Any] = lambda event: {"outcome": "parked"}
        self.outcomes: list[Any] = []
        self.settle_seconds = 0.0
        self.lock = threading.Lock()

    def invoke(self, name: str, event: Any) -> Any:
        with self.lock:
            self.calls.append((name, event))
        if name == "wait":
            self.tokens[event["run"]["run_id"]] = event["token"]
            return self.on_wait(event)
        time.sleep(self.settle_seconds)  # a settle step that takes a while: settle() must wait for it
        with self.lock:
            self.calls.append(("settled", event))
            outcome = self.outcomes.pop(0) if self.outcomes else "settled"
        return {"run": event["run"], "outcome": outcome} if isinstance(outcome, str) else outcome

    def named(self, name: str) -> list[Any]:
        with self.lock:
            return [event for called, event in self.calls if called == name]


@pytest.fixture
def functions() -> Functions:
    return Functions()


@pytest.fixture
def executor(functions: Functions) -> Iterator[LocalExecutor]:
    with local_aws():
        local = LocalExecutor(functions.invoke)
        try:
            yield local
        finally:
            local.close()


def status(executor: LocalExecutor, run: RunKey = RUN) -> str:
    return executor.status(executor.execution_arn(run))


def test_the_state_machine_is_the_one_definition(executor: LocalExecutor) -> None:
    assert executor.definition == state_machine_definition(
        executor.function_arn(executor.wait_function), executor.function_arn(executor.settle_function)
    )


def test_a_waiting_execution_holds_no_thread(executor: LocalExecutor, functions: Functions) -> None:
    before = threading.active_count()
    runs = [RunKey("acme", "campaigns", f"r-{i}") for i in range(200)]
    for run in runs:
        executor.start(run, timeout_seconds=3600)
    executor.settle()

    assert {status(executor, run) for run in runs} == {"RUNNING"}
    assert len(functions.named("wait")) == 200
    # The workers that ran the wait steps stay (at most WORKERS), with the one thread that times the
    # backstops: no thread waits per execution.
    assert threading.active_count() - before <= WORKERS + 1


def test_the_history_lists_the_states_as_step_functions_does(
    executor: LocalExecutor, functions: Functions
) -> None:
    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    executor.succeed(functions.tokens[RUN.run_id], {"ending": "answered"})
    executor.settle()

    assert [(e["type"], e["name"]) for e in executor.history(RUN)] == [
        ("ExecutionStarted", ""),
        ("TaskStateEntered", WAIT_STATE),
        ("TaskScheduled", WAIT_STATE),
        ("TaskStarted", WAIT_STATE),
        ("TaskSubmitted", WAIT_STATE),
        ("TaskSucceeded", WAIT_STATE),
        ("TaskStateExited", WAIT_STATE),
        ("ExecutionSucceeded", ""),
    ]
    assert executor.executions() == [
        {"executionArn": executor.execution_arn(RUN), "name": RUN.execution_name, "status": "SUCCEEDED"}
    ]


@pytest.mark.parametrize("ending", ["answered", "expired", "cancelled", "delivered", "undelivered"])
def test_every_ending_ends_the_execution_in_its_wait_without_the_settle_step(
    executor: LocalExecutor, functions: Functions, ending: str
) -> None:
    executor.start(RUN, timeout_seconds=3600)
    executor.settle()

    assert functions.named("wait") == [{"token": functions.tokens[RUN.run_id], "run": RUN.as_json()}]
    assert status(executor) == "RUNNING"

    executor.succeed(functions.tokens[RUN.run_id], {"ending": ending})
    executor.settle()

    assert functions.named("settle") == []
    assert status(executor) == "SUCCEEDED"


def test_starting_twice_and_ending_a_spent_token_are_harmless(
    executor: LocalExecutor, functions: Functions
) -> None:
    executor.start(RUN, timeout_seconds=3600)
    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    token = functions.tokens[RUN.run_id]
    executor.succeed(token, {"ending": "answered"})
    executor.settle()

    executor.start(RUN, timeout_seconds=3600)
    executor.succeed(token, {"ending": "answered"})
    executor.settle()

    assert len(functions.named("wait")) == 1
    assert functions.named("settled") == []
    assert status(executor) == "SUCCEEDED"


def test_an_answer_that_raced_ahead_of_the_token_is_sent_by_the_wait_function(
    executor: LocalExecutor, functions: Functions
) -> None:
    # The request was answered before the token was kept: the wait function ends the wait itself.
    def answered_already(event: Any) -> Any:
        executor.succeed(event["token"], {"ending": "answered"})
        return {"outcome": "answered"}

    functions.on_wait = answered_already

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()

    assert functions.named("settled") == []
    assert status(executor) == "SUCCEEDED"


def test_a_failing_wait_function_still_settles_the_run(executor: LocalExecutor, functions: Functions) -> None:
    def broken(event: Any) -> Any:
        raise LookupError("the table is gone")

    functions.on_wait = broken

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()

    (settled,) = functions.named("settled")
    assert settled["error"]["Error"] == "LookupError"
    assert "the table is gone" in settled["error"]["Cause"]
    assert status(executor) == "SUCCEEDED"


def test_settle_is_bounded(executor: LocalExecutor, functions: Functions) -> None:
    functions.settle_seconds = 1.0
    functions.on_wait = lambda event: (_ for _ in ()).throw(LookupError("the table is gone"))
    executor.start(RUN, timeout_seconds=3600)

    with pytest.raises(SettleTimeout, match=RUN.execution_name):
        executor.settle(timeout=0.2)
    executor.settle()  # what timed out is not waited for again

    executor.settle(timeout=5)  # nothing left
    deadline = time.monotonic() + 30  # a generous wait, not a speed target
    while status(executor) == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert status(executor) == "SUCCEEDED"


def test_the_real_clock_backstop_is_the_wait_tasks_own_timeout(
    executor: LocalExecutor, functions: Functions
) -> None:
    executor.start(RUN, timeout_seconds=1)
    executor.settle()

    deadline = time.monotonic() + 10
    while not functions.named("settled") and time.monotonic() < deadline:
        time.sleep(0.02)

    (settled,) = functions.named("settled")
    assert settled["error"]["Error"] == TIMEOUT_ERROR


def test_under_the_manual_clock_the_backstop_follows_the_clock(functions: Functions) -> None:
    clock = ManualClock()
    scheduler = LocalScheduler(clock, lambda work: None)
    with local_aws():
        executor = LocalExecutor(functions.invoke, scheduler=scheduler)
        scheduler.after_each = executor.settle
        try:
            executor.start(RUN, timeout_seconds=2 * 86400 + 60)
            executor.settle()
            assert scheduler.pending() == [
                (clock.now() + timedelta(seconds=2 * 86400 + 60), f"backstop-{RUN.execution_name}")
            ]

            advance(clock, 2 * 86400 + 59, [scheduler])
            assert functions.named("settled") == []

            advance(clock, 1, [scheduler])
            (settled,) = functions.named("settled")
            assert settled["error"]["Error"] == TIMEOUT_ERROR
            assert status(executor) == "SUCCEEDED"
        finally:
            executor.close()


def test_a_run_that_ended_drops_its_backstop(functions: Functions) -> None:
    clock = ManualClock()
    scheduler = LocalScheduler(clock, lambda work: None)
    with local_aws():
        executor = LocalExecutor(functions.invoke, scheduler=scheduler)
        try:
            executor.start(RUN, timeout_seconds=3600)
            executor.settle()
            executor.succeed(functions.tokens[RUN.run_id], {"ending": "cancelled"})
            executor.settle()

            assert scheduler.pending() == []
        finally:
            executor.close()


def test_two_executors_route_their_own_functions(functions: Functions) -> None:
    others = Functions()
    with local_aws():
        first, second = LocalExecutor(functions.invoke), LocalExecutor(others.invoke)
        try:
            first.start(RUN, timeout_seconds=3600)
            second.start(RunKey("acme", "other", "r-2"), timeout_seconds=3600)
            first.settle()
            second.settle()

            assert [e["run"]["run_id"] for e in functions.named("wait")] == [RUN.run_id]
            assert [e["run"]["run_id"] for e in others.named("wait")] == ["r-2"]
        finally:
            first.close()
            second.close()


def test_closing_stops_waiting_executions(functions: Functions) -> None:
    with local_aws():
        executor = LocalExecutor(functions.invoke)
        executor.start(RUN, timeout_seconds=1)
        executor.settle()
        arn = executor.execution_arn(RUN)

        executor.close()
        time.sleep(1.5)  # its backstop is gone with it

        assert executor.status(arn) == "ABORTED"
        assert functions.named("settle") == []  # stopping a run's execution does not settle it
        executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "late"})  # a token of the past
        with pytest.raises(RuntimeError, match="closed"):
            executor.start(RunKey("acme", "campaigns", "r-2"), timeout_seconds=3600)


# -- an agent run's later waits ---------------------------------------------------------------------------


def test_each_wait_of_a_run_is_its_own_execution_with_its_own_backstop(functions: Functions) -> None:
    clock = ManualClock()
    scheduler = LocalScheduler(clock, lambda work: None)
    with local_aws():
        executor = LocalExecutor(functions.invoke, scheduler=scheduler)
        scheduler.after_each = executor.settle
        try:
            executor.start(RUN, timeout_seconds=3600)
            executor.settle()
            first = functions.tokens[RUN.run_id]
            advance(clock, 1000, [scheduler])
            executor.succeed(first, {"ending": "answered"})
            executor.start(RUN, timeout_seconds=180, number=2)  # the step that asked again
            executor.settle()

            second = functions.tokens[RUN.run_id]
            assert second != first
            assert status(executor) == "SUCCEEDED"
            assert executor.status(executor.execution_arn(RUN, 2)) == "RUNNING"
            backstop = f"backstop-{RUN.wait_execution_name(2)}"
            assert scheduler.pending() == [(clock.now() + timedelta(seconds=180), backstop)]

            advance(clock, 180, [scheduler])
            (ending,) = functions.named("settled")
            assert ending["error"]["Error"] == TIMEOUT_ERROR
            assert executor.status(executor.execution_arn(RUN, 2)) == "SUCCEEDED"
            assert scheduler.pending() == []
        finally:
            executor.close()


def test_under_the_manual_clock_a_second_start_leaves_the_backstop_as_it_was(functions: Functions) -> None:
    # As on AWS: the execution exists already (ExecutionAlreadyExists), so its wait keeps its own
    # timeout, counted from when it parked.
    clock = ManualClock()
    scheduler = LocalScheduler(clock, lambda work: None)
    backstop = f"backstop-{RUN.execution_name}"
    with local_aws():
        executor = LocalExecutor(functions.invoke, scheduler=scheduler)
        scheduler.after_each = executor.settle
        try:
            executor.start(RUN, timeout_seconds=3600)
            executor.settle()
            advance(clock, 600, [scheduler])

            executor.start(RUN, timeout_seconds=7200)
            executor.settle()

            assert scheduler.pending() == [(clock.now() + timedelta(seconds=3000), backstop)]
            assert len(functions.named("wait")) == 1
            assert status(executor) == "RUNNING"

            executor.succeed(functions.tokens[RUN.run_id], {"ending": "cancelled"})
            executor.settle()
            executor.start(RUN, timeout_seconds=3600)  # it ended: nothing to back up
            executor.settle()

            assert scheduler.pending() == []
            assert status(executor) == "SUCCEEDED"
        finally:
            executor.close()
