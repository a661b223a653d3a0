"""The local executor: the local interpreter (``parley.local.steps``) runs the state machine of
``parley.infrastructure.state_machine``, its Lambda tasks run by stand-in wait, settle and reason handlers
(the real ones are exercised in ``test_server``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.infrastructure.state_machine import (
    RESUME_CHOICE_STATE,
    SETTLE_ANSWER_STATE,
    SETTLED_STATE,
    WAIT_STATE,
    state_machine_definition,
)
from parley.local.clock_routes import advance
from parley.local.executor import TIMEOUT_ERROR, WORKERS, LocalExecutor, SettleTimeout, local_aws
from parley.local.scheduler import LocalScheduler
from parley.ports.waiting import CANCELLED_ERROR, EXPIRED_ERROR, RunKey

RUN = RunKey("acme", "campaigns", "7f1c1a8e-3f3b-4c63-9a40-0b4b3bfcd2a1")


class Functions:
    """Stand-ins for the wait, settle and reason functions: they record what they were called with.

    Settle answers ``outcomes`` in turn (then ``settled``): a word as the real one does, ``{"run",
    "outcome"}``, anything else as it is. Reason answers ``on_reason(event)``.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.tokens: dict[str, str] = {}  # run id -> token
        self.on_wait: Callable[[Any], Any] = lambda event: {"outcome": "parked"}
        self.outcomes: list[Any] = []
        self.on_reason: Callable[[Any], Any] = lambda event: {"run": event["run"], "outcome": "succeeded"}
        self.settle_seconds = 0.0
        self.lock = threading.Lock()

    def invoke(self, name: str, event: Any) -> Any:
        with self.lock:
            self.calls.append((name, event))
        if name == "wait":
            self.tokens[event["run"]["run_id"]] = event["token"]
            return self.on_wait(event)
        if name == "reason":
            return self.on_reason(event)
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
        executor.function_arn(executor.wait_function),
        executor.function_arn(executor.settle_function),
        executor.function_arn(executor.reason_function),
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
    executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "a-1"})
    executor.settle()

    assert [(e["type"], e["name"]) for e in executor.history(RUN)] == [
        ("ExecutionStarted", ""),
        ("TaskStateEntered", WAIT_STATE),
        ("TaskScheduled", WAIT_STATE),
        ("TaskStarted", WAIT_STATE),
        ("TaskSubmitted", WAIT_STATE),
        ("TaskSucceeded", WAIT_STATE),
        ("TaskStateExited", WAIT_STATE),
        ("TaskStateEntered", SETTLE_ANSWER_STATE),
        ("TaskScheduled", SETTLE_ANSWER_STATE),
        ("TaskStarted", SETTLE_ANSWER_STATE),
        ("TaskSucceeded", SETTLE_ANSWER_STATE),
        ("TaskStateExited", SETTLE_ANSWER_STATE),
        ("ChoiceStateEntered", RESUME_CHOICE_STATE),
        ("ChoiceStateExited", RESUME_CHOICE_STATE),
        ("SucceedStateEntered", SETTLED_STATE),
        ("SucceedStateExited", SETTLED_STATE),
        ("ExecutionSucceeded", ""),
    ]
    assert executor.executions() == [
        {"executionArn": executor.execution_arn(RUN), "name": RUN.execution_name, "status": "SUCCEEDED"}
    ]


def test_an_answer_settles_the_run_and_the_execution_succeeds(
    executor: LocalExecutor, functions: Functions
) -> None:
    functions.settle_seconds = 0.3

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()

    assert functions.named("wait") == [{"token": functions.tokens[RUN.run_id], "run": RUN.as_json()}]
    assert status(executor) == "RUNNING"
    assert functions.named("settle") == []

    executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "a-1"})
    executor.settle()

    assert functions.named("settled") == [{"run": RUN.as_json(), "answered": {"answer_id": "a-1"}}]
    assert status(executor) == "SUCCEEDED"


@pytest.mark.parametrize("error", [EXPIRED_ERROR, CANCELLED_ERROR])
def test_an_expiry_or_a_cancel_settles_the_run_with_its_error(
    executor: LocalExecutor, functions: Functions, error: str
) -> None:
    executor.start(RUN, timeout_seconds=3600)
    executor.settle()

    executor.fail(functions.tokens[RUN.run_id], error, "The request expired.")
    executor.settle()

    (settled,) = functions.named("settled")
    assert settled["run"] == RUN.as_json()
    assert settled["error"]["Error"] == error
    assert "answered" not in settled
    assert status(executor) == "SUCCEEDED"


def test_starting_twice_and_ending_a_spent_token_are_harmless(
    executor: LocalExecutor, functions: Functions
) -> None:
    executor.start(RUN, timeout_seconds=3600)
    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    token = functions.tokens[RUN.run_id]
    executor.succeed(token, {"answer_id": "a-1"})
    executor.settle()

    executor.start(RUN, timeout_seconds=3600)
    executor.succeed(token, {"answer_id": "a-1"})
    executor.fail(token, EXPIRED_ERROR, "late")
    executor.settle()

    assert len(functions.named("wait")) == 1
    assert len(functions.named("settled")) == 1


def test_an_answer_that_raced_ahead_of_the_token_is_sent_by_the_wait_function(
    executor: LocalExecutor, functions: Functions
) -> None:
    # The request was answered before the token was kept: the wait function ends the wait itself.
    def answered_already(event: Any) -> Any:
        executor.succeed(event["token"], {"answer_id": "a-early"})
        return {"outcome": "answered"}

    functions.on_wait = answered_already

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()

    assert functions.named("settled") == [{"run": RUN.as_json(), "answered": {"answer_id": "a-early"}}]
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
    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    functions.settle_seconds = 1.0
    executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "a-1"})

    with pytest.raises(SettleTimeout, match=RUN.execution_name):
        executor.settle(timeout=0.2)
    executor.settle()  # what timed out is not waited for again

    executor.settle(timeout=5)  # nothing left
    deadline = time.monotonic() + 5
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
            executor.fail(functions.tokens[RUN.run_id], CANCELLED_ERROR, "cancelled")
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


# -- a reasoning run that waits, resumes, and may wait again ------------------------------------------------


def replies(*answers: Any) -> Callable[[Any], Any]:
    """A stand-in reason function answering ``answers`` in turn (each a dict, or an exception to raise)."""
    left = list(answers)

    def reason(event: Any) -> Any:
        answer = left.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return {"run": event["run"], **answer}

    return reason


RESUMED = {"run": RUN.as_json(), "resume": True}


def test_a_resumed_run_that_asks_again_parks_on_a_new_token_until_its_last_answer(
    executor: LocalExecutor, functions: Functions
) -> None:
    functions.outcomes = ["resume", "resume"]
    waiting = replies({"outcome": "waiting", "timeout_seconds": 120}, {"outcome": "succeeded"})

    def reason(event: Any) -> Any:
        # As the real function does for each request it opens: on AWS ExecutionAlreadyExists (here too:
        # the input differs), which is ignored.
        if len(functions.named("reason")) == 1:
            executor.start(RUN, timeout_seconds=120)
        return waiting(event)

    functions.on_reason = reason

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    first = functions.tokens[RUN.run_id]

    executor.succeed(first, {"answer_id": "a-1"})
    executor.settle()  # returns once the execution has parked again

    second = functions.tokens[RUN.run_id]
    assert second != first
    assert functions.named("wait") == [{"token": t, "run": RUN.as_json()} for t in (first, second)]
    assert functions.named("settled") == [{"run": RUN.as_json(), "answered": {"answer_id": "a-1"}}]
    assert functions.named("reason") == [RESUMED]
    assert status(executor) == "RUNNING"

    # A late signal on the spent token changes nothing, and is not waited for.
    executor.succeed(first, {"answer_id": "a-1"})
    executor.settle(timeout=5)
    assert status(executor) == "RUNNING"
    assert len(functions.named("settled")) == 1

    executor.succeed(second, {"answer_id": "a-2"})
    executor.settle()

    assert functions.named("settled") == [
        {"run": RUN.as_json(), "answered": {"answer_id": "a-1"}},
        {"run": RUN.as_json(), "answered": {"answer_id": "a-2"}},
    ]
    assert functions.named("reason") == [RESUMED, RESUMED]
    assert len(functions.named("wait")) == 2
    assert status(executor) == "SUCCEEDED"


def test_the_next_wait_takes_its_timeout_from_the_resumption(
    executor: LocalExecutor, functions: Functions
) -> None:
    # Real clock: moto's own task timeout is the backstop, and the second wait's is the reason
    # function's timeout_seconds, not the execution's input.
    functions.outcomes = ["resume"]
    functions.on_reason = replies({"outcome": "waiting", "timeout_seconds": 1})

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "a-1"})
    executor.settle()

    deadline = time.monotonic() + 10
    while status(executor) == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.02)
    _, ending = functions.named("settled")
    assert ending["error"]["Error"] == TIMEOUT_ERROR
    assert status(executor) == "SUCCEEDED"


@pytest.mark.parametrize(
    "outcome",
    ["unchanged", "answered", "expired", None, {"run": RUN.as_json()}, {"outcome": 7}],
    ids=["unchanged", "answered", "expired", "null", "no-outcome", "not-a-word"],
)
def test_a_settled_run_that_need_not_resume_ends_without_the_reason_function(
    executor: LocalExecutor, functions: Functions, outcome: Any
) -> None:
    functions.outcomes = [outcome]

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "a-1"})
    executor.settle()

    assert len(functions.named("settled")) == 1
    assert functions.named("reason") == []
    assert status(executor) == "SUCCEEDED"


def test_an_expired_request_settles_the_ending_and_resumes_the_run(
    executor: LocalExecutor, functions: Functions
) -> None:
    functions.outcomes = ["resume"]

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    executor.fail(functions.tokens[RUN.run_id], EXPIRED_ERROR, "The request expired.")
    executor.settle()

    (settled,) = functions.named("settled")
    assert settled["error"]["Error"] == EXPIRED_ERROR
    assert functions.named("reason") == [RESUMED]
    assert status(executor) == "SUCCEEDED"


@pytest.mark.parametrize(
    "answer",
    [RuntimeError("the model call failed"), {"outcome": "rejected"}, {"outcome": "unchanged"}],
    ids=["failed", "rejected", "unchanged"],
)
def test_a_resumption_that_fails_or_does_not_wait_again_ends_the_execution_at_once(
    executor: LocalExecutor, functions: Functions, answer: Any
) -> None:
    # A failure is never run again (the step may send a call a person approved): the run's backstop
    # ends a run whose work was lost.
    functions.outcomes = ["resume"]
    functions.on_reason = replies(answer)

    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "a-1"})
    executor.settle()

    assert functions.named("reason") == [RESUMED]
    assert len(functions.named("wait")) == 1
    assert status(executor) == "SUCCEEDED"


def test_under_the_manual_clock_each_wait_has_its_own_backstop(functions: Functions) -> None:
    clock = ManualClock()
    scheduler = LocalScheduler(clock, lambda work: None)
    backstop = f"backstop-{RUN.execution_name}"
    with local_aws():
        executor = LocalExecutor(functions.invoke, scheduler=scheduler)
        scheduler.after_each = executor.settle
        try:
            functions.outcomes = ["resume"]
            waiting = replies({"outcome": "waiting", "timeout_seconds": 180})

            def reason(event: Any) -> Any:
                executor.start(RUN, timeout_seconds=180)  # as the real function, for its new request
                return waiting(event)

            functions.on_reason = reason

            executor.start(RUN, timeout_seconds=3600)
            executor.settle()
            advance(clock, 1000, [scheduler])
            executor.succeed(functions.tokens[RUN.run_id], {"answer_id": "a-1"})
            executor.settle()

            # The first wait's backstop is gone; the second's counts from the clock's now.
            assert scheduler.pending() == [(clock.now() + timedelta(seconds=180), backstop)]
            assert len(functions.named("wait")) == 2

            advance(clock, 179, [scheduler])
            assert len(functions.named("settled")) == 1

            advance(clock, 1, [scheduler])
            _, ending = functions.named("settled")
            assert ending["error"]["Error"] == TIMEOUT_ERROR
            assert status(executor) == "SUCCEEDED"
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

            executor.fail(functions.tokens[RUN.run_id], CANCELLED_ERROR, "cancelled")
            executor.settle()
            executor.start(RUN, timeout_seconds=3600)  # it ended: nothing to back up
            executor.settle()

            assert scheduler.pending() == []
            assert status(executor) == "SUCCEEDED"
        finally:
            executor.close()
