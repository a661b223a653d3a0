"""The local executor runs workflows' state machines (the ``WorkflowEngine`` port): versions of a
machine, executions started once by name, their Lambda tasks run as the ``workflow`` function, their
task tokens answered by SendTask calls the stack grants, their Waits and timeouts on the scheduler (the
manual clock drives them), stops, ``settle``, and the history."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.local.clock_routes import advance
from parley.local.executor import WORKERS, LocalExecutor
from parley.local.functions import AccessDenied, LocalFunctions
from parley.local.scheduler import LocalScheduler
from parley.local.steps import TIMEOUT_ERROR, UnsupportedDefinition
from parley.ports.waiting import RunKey
from parley.ports.workflows import WorkflowEngine
from parley.workflow.engine import ENTRY_FUNCTION, INVOKE_RESOURCE, WAIT_FOR_TOKEN_RESOURCE

RUN = RunKey("acme", "campaigns", "7f1c1a8e-3f3b-4c63-9a40-0b4b3bfcd2a1")


class Entry:
    """A stand-in ``workflow`` function (and the others a test needs), each run as its own function:
    ``call`` keeps the token (or answers it at once with ``answer_at_once``), ``end`` records the
    ending."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.tokens: list[str] = []
        self.run_tokens: list[str] = []
        self.answer_at_once: Callable[[str], None] | None = None
        self.end_seconds = 0.0
        self.lock = threading.Lock()
        self.functions = LocalFunctions(
            {
                "workflow": lambda: self.workflow,
                "wait": lambda: self.wait,
                "settle": lambda: lambda event, context: event["call"](),
                "reason": lambda: lambda event, context: event["call"](),
                "timer": lambda: lambda event, context: event["call"](),
            }
        )

    def workflow(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        with self.lock:
            self.events.append(event)
        if event["action"] == "call":
            with self.lock:
                self.tokens.append(event["token"])
            if self.answer_at_once is not None:
                self.answer_at_once(event["token"])
            return {"outcome": "started"}
        time.sleep(self.end_seconds)
        return {"outcome": "ended"}

    def wait(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        if "call" in event:
            event["call"]()
            return {}
        with self.lock:
            self.run_tokens.append(event["token"])
        return {"outcome": "parked"}

    def as_function(self, name: str, call: Callable[[], Any]) -> None:
        """Run ``call`` inside an invocation of the function ``name`` (its grants, as on AWS)."""
        self.functions.invoke(name, {"call": call})

    def ends(self) -> list[dict[str, Any]]:
        with self.lock:
            return [event for event in self.events if event["action"] == "end"]


@pytest.fixture
def entry() -> Entry:
    return Entry()


@pytest.fixture
def executor(entry: Entry) -> Iterator[LocalExecutor]:
    local = LocalExecutor(entry.functions.invoke)
    try:
        yield local
    finally:
        local.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(entry: Entry, clock: ManualClock) -> Iterator[tuple[LocalExecutor, LocalScheduler]]:
    scheduler = LocalScheduler(clock, lambda work: None)
    local = LocalExecutor(entry.functions.invoke, scheduler=scheduler)
    scheduler.after_each = local.settle
    try:
        yield local, scheduler
    finally:
        local.close()


def machine(*states: tuple[str, dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {"QueryLanguage": "JSONata", "StartAt": states[0][0], "States": dict(states), **top}


def call(task: str = "/do/0/ask", **fields: Any) -> dict[str, Any]:
    """A compiled ``call: run_definition``: a token task on the workflow entry."""
    return {
        "Type": "Task",
        "Resource": WAIT_FOR_TOKEN_RESOURCE,
        "Arguments": {
            "FunctionName": ENTRY_FUNCTION,
            "Payload": {"action": "call", "token": "{% $states.context.Task.Token %}", "task": task},
        },
        **fields,
    }


def end(**fields: Any) -> dict[str, Any]:
    """The compiled end: the entry writes the run's ending."""
    return {
        "Type": "Task",
        "Resource": INVOKE_RESOURCE,
        "Arguments": {
            "FunctionName": ENTRY_FUNCTION,
            "Payload": {"action": "end", "output": "{% $states.input %}"},
        },
        "Output": "{% $states.input %}",
        "End": True,
        **fields,
    }


def in_try(*states: tuple[str, dict[str, Any]], next_state: str = "End") -> dict[str, Any]:
    """A one-branch Parallel (a DSL ``try``) whose catch outputs the error."""
    return {
        "Type": "Parallel",
        "Branches": [{"StartAt": states[0][0], "States": dict(states)}],
        "Output": "{% $states.result[0] %}",
        "Catch": [
            {
                "ErrorEquals": ["States.ALL"],
                "Output": {"caught": "{% $states.errorOutput %}"},
                "Next": next_state,
            }
        ],
        "Next": next_state,
    }


ASK = machine(("Try", in_try(("Ask", call(Output="{% $states.result.output %}", End=True)))), ("End", end()))


def status(executor: LocalExecutor, arn: str) -> str:
    return str(executor.describe_execution(arn)["status"])


def test_the_executor_is_a_workflow_engine(executor: LocalExecutor) -> None:
    engine: WorkflowEngine = executor
    assert engine.workflow_function_arn == executor.function_arn(executor.workflow_function)


def test_a_state_machine_has_a_version_per_definition(executor: LocalExecutor) -> None:
    first = machine(("End", end()))
    second = machine(("Wait", {"Type": "Wait", "Seconds": 1, "Next": "End"}), ("End", end()))

    one = executor.create_state_machine("wf-abc-review", first)
    assert one.endswith(":stateMachine:wf-abc-review:1")
    assert one.startswith("arn:aws:states:")
    assert executor.create_state_machine("wf-abc-review", first) == one
    two = executor.create_state_machine("wf-abc-review", second)
    assert two.endswith(":stateMachine:wf-abc-review:2")
    assert executor.create_state_machine("wf-abc-review", first) == one
    assert executor.create_state_machine("wf-abc-other", first).endswith(":stateMachine:wf-abc-other:1")

    with pytest.raises(UnsupportedDefinition):
        executor.create_state_machine(
            "wf-abc-review", {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}
        )
    with pytest.raises(ValueError, match="name"):
        executor.create_state_machine("no spaces", first)
    # A refused definition made no version.
    assert executor.create_state_machine("wf-abc-review", second) == two


def test_an_execution_runs_to_its_end_through_the_workflow_function(
    executor: LocalExecutor, entry: Entry
) -> None:
    arn = executor.create_state_machine(
        "wf-abc-review",
        machine(
            ("Shape", {"Type": "Pass", "Output": {"n": "{% $states.input.n + 1 %}"}, "Next": "End"}),
            ("End", end()),
        ),
    )
    execution = executor.start_execution(arn, RUN.execution_name, {"n": 1})
    executor.settle()

    assert execution.endswith(f":execution:wf-abc-review:{RUN.execution_name}")
    assert entry.ends() == [{"action": "end", "output": {"n": 2}}]
    described = executor.describe_execution(execution)
    assert (described["status"], described["output"], described["error"]) == ("SUCCEEDED", {"n": 2}, None)
    assert described["input"] == {"n": 1}
    assert described["stateMachineArn"] == arn
    history = executor.execution_history(execution)
    assert [event["id"] for event in history] == list(range(1, len(history) + 1))
    assert [(event["type"], event["name"]) for event in history] == [
        ("ExecutionStarted", ""),
        ("PassStateEntered", "Shape"),
        ("PassStateExited", "Shape"),
        ("TaskStateEntered", "End"),
        ("TaskScheduled", "End"),
        ("TaskStarted", "End"),
        ("TaskSucceeded", "End"),
        ("TaskStateExited", "End"),
        ("ExecutionSucceeded", ""),
    ]

    # Started again under its name: the same execution, nothing run again.
    assert executor.start_execution(arn, RUN.execution_name, {"n": 5}) == execution
    executor.settle()
    assert len(entry.ends()) == 1


def test_an_arn_without_a_version_starts_the_latest(executor: LocalExecutor, entry: Entry) -> None:
    executor.create_state_machine("wf-abc-review", machine(("End", end())))
    executor.create_state_machine(
        "wf-abc-review", machine(("Mark", {"Type": "Pass", "Output": "v2", "Next": "End"}), ("End", end()))
    )
    unqualified = executor.create_state_machine("wf-abc-review", machine(("End", end()))).rsplit(":", 1)[0]
    executor.start_execution(unqualified, "latest", {})
    executor.settle()
    assert entry.ends() == [{"action": "end", "output": "v2"}]
    with pytest.raises(LookupError):
        executor.start_execution(unqualified.replace("wf-abc-review", "wf-none"), "x", {})
    with pytest.raises(LookupError):
        executor.start_execution(unqualified + ":9", "x", {})
    assert (
        executor.describe_execution(unqualified.replace(":stateMachine:", ":execution:") + ":none")["status"]
        == "UNKNOWN"
    )
    assert executor.execution_history("arn:aws:states:us-east-1:123456789012:execution:x:y") == []


def test_a_call_parks_in_a_try_until_its_token_is_answered(executor: LocalExecutor, entry: Entry) -> None:
    arn = executor.create_state_machine("wf-abc-ask", ASK)
    execution = executor.start_execution(arn, "run-1", {})
    executor.settle()

    (token,) = entry.tokens
    assert status(executor, execution) == "RUNNING"
    assert entry.events[0] == {"action": "call", "token": token, "task": "/do/0/ask"}

    executor.succeed(token, {"output": {"verdict": "approve"}})
    executor.settle()
    assert executor.describe_execution(execution)["output"] == {"verdict": "approve"}
    assert entry.ends() == [{"action": "end", "output": {"verdict": "approve"}}]
    executor.succeed(token, {"output": "again"})  # spent: nothing happens
    executor.settle()
    assert len(entry.ends()) == 1


def test_a_failed_call_is_caught_by_its_try(executor: LocalExecutor, entry: Entry) -> None:
    execution = executor.start_execution(executor.create_state_machine("wf-abc-ask", ASK), "run-1", {})
    executor.settle()
    executor.fail(entry.tokens[0], "Parley.Error", '{"status": 410}')
    executor.settle()
    assert executor.describe_execution(execution)["output"] == {
        "caught": {"Error": "Parley.Error", "Cause": '{"status": 410}'}
    }


def test_two_branches_wait_at_once_and_are_answered_by_the_functions_that_end_runs(
    executor: LocalExecutor, entry: Entry
) -> None:
    fork = {
        "Type": "Parallel",
        "Branches": [
            {
                "StartAt": "A",
                "States": {"A": call("/do/0/a", Output="{% $states.result.output %}", End=True)},
            },
            {
                "StartAt": "B",
                "States": {"B": call("/do/0/b", Output="{% $states.result.output %}", End=True)},
            },
        ],
        "Next": "End",
    }
    execution = executor.start_execution(
        executor.create_state_machine("wf-abc-fork", machine(("Fork", fork), ("End", end()))), "run-1", {}
    )
    executor.settle()
    first, second = entry.tokens

    entry.as_function("settle", lambda: executor.succeed(second, {"output": "b"}))
    executor.settle()
    assert status(executor, execution) == "RUNNING"
    entry.as_function("reason", lambda: executor.succeed(first, {"output": "a"}))
    executor.settle()
    assert executor.describe_execution(execution)["output"] == ["a", "b"]


def test_an_answer_that_comes_during_the_call_itself_resumes_the_execution(
    executor: LocalExecutor, entry: Entry
) -> None:
    entry.answer_at_once = lambda token: executor.succeed(token, {"output": "at once"})
    execution = executor.start_execution(executor.create_state_machine("wf-abc-ask", ASK), "run-1", {})
    executor.settle()
    assert executor.describe_execution(execution)["output"] == "at once"


def test_sendtask_grants_follow_whose_token_it_is(executor: LocalExecutor, entry: Entry) -> None:
    execution = executor.start_execution(executor.create_state_machine("wf-abc-ask", ASK), "run-1", {})
    executor.start(RUN, timeout_seconds=3600)
    executor.settle()
    (workflow_token,) = entry.tokens
    (run_token,) = entry.run_tokens

    # A workflow's call is answered by the functions that end called runs, not by the wait function.
    with pytest.raises(AccessDenied, match="the wait function may not answer a workflow's call"):
        entry.as_function("wait", lambda: executor.succeed(workflow_token, {"output": 1}))
    # A run's wait is still ended by its own functions only: settle may answer calls, not end waits.
    with pytest.raises(AccessDenied, match="the settle function may not end a wait"):
        entry.as_function("settle", lambda: executor.fail(run_token, "Parley.Cancelled", "{}"))
    # A token that is spent (or unknown) is no error to a function that may send either.
    entry.as_function("settle", lambda: executor.succeed("spent-token", {}))
    entry.as_function("wait", lambda: executor.succeed("spent-token", {}))

    entry.as_function("timer", lambda: executor.fail(workflow_token, "Parley.Error", "expired"))
    executor.settle()
    assert executor.describe_execution(execution)["output"]["caught"]["Cause"] == "expired"


@pytest.mark.parametrize(
    "operation",
    [
        lambda executor: executor.create_state_machine("wf-abc-ask", ASK),
        lambda executor: executor.start_execution(
            "arn:aws:states:us-east-1:123456789012:stateMachine:x:1", "r", {}
        ),
        lambda executor: executor.stop_execution(
            "arn:aws:states:us-east-1:123456789012:execution:x:r", "e", "c"
        ),
        lambda executor: executor.describe_execution("arn:aws:states:us-east-1:123456789012:execution:x:r"),
        lambda executor: executor.execution_history("arn:aws:states:us-east-1:123456789012:execution:x:r"),
    ],
)
def test_only_the_functions_that_run_workflows_may_make_and_start_them(
    executor: LocalExecutor, entry: Entry, operation: Callable[[LocalExecutor], Any]
) -> None:
    with pytest.raises(AccessDenied, match="the settle function may not"):
        entry.as_function("settle", lambda: operation(executor))


def test_a_wait_parks_until_the_manual_clock_reaches_its_end(
    timed: tuple[LocalExecutor, LocalScheduler], entry: Entry, clock: ManualClock
) -> None:
    executor, scheduler = timed
    definition = machine(
        (
            "Pause",
            {
                "Type": "Wait",
                "Seconds": "{% $states.input.seconds %}",
                "Output": {"woke": "{% $now() %}"},
                "Next": "End",
            },
        ),
        ("End", end()),
    )
    execution = executor.start_execution(
        executor.create_state_machine("wf-abc-wait", definition), "run-1", {"seconds": 3600}
    )
    executor.settle()
    ((due, name),) = scheduler.pending()
    assert due == clock.now() + timedelta(seconds=3600)
    assert name.startswith("workflow-")

    advance(clock, 3599, [scheduler])
    assert status(executor, execution) == "RUNNING"
    advance(clock, 1, [scheduler])
    assert status(executor, execution) == "SUCCEEDED"
    assert entry.ends()[0]["output"]["woke"] == clock.now().strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert scheduler.pending() == []


def test_a_call_past_its_timeout_seconds_fails_with_states_timeout(
    timed: tuple[LocalExecutor, LocalScheduler], entry: Entry, clock: ManualClock
) -> None:
    executor, scheduler = timed
    definition = machine(("Try", in_try(("Ask", call(TimeoutSeconds=600, End=True)))), ("End", end()))
    execution = executor.start_execution(executor.create_state_machine("wf-abc-ask", definition), "run-1", {})
    executor.settle()
    (token,) = entry.tokens

    advance(clock, 600, [scheduler])
    output = executor.describe_execution(execution)["output"]
    assert output["caught"]["Error"] == TIMEOUT_ERROR
    events = [event["type"] for event in executor.execution_history(execution)]
    assert "TaskTimedOut" in events
    executor.succeed(token, {"output": "too late"})  # spent
    executor.settle()
    assert executor.describe_execution(execution)["output"]["caught"]["Error"] == TIMEOUT_ERROR


def test_an_answer_drops_the_timeout(timed: tuple[LocalExecutor, LocalScheduler], entry: Entry) -> None:
    executor, scheduler = timed
    definition = machine(("Ask", call(TimeoutSeconds=600, Next="End")), ("End", end()))
    executor.start_execution(executor.create_state_machine("wf-abc-ask", definition), "run-1", {})
    executor.settle()
    assert len(scheduler.pending()) == 1
    executor.succeed(entry.tokens[0], {"output": 1})
    executor.settle()
    assert scheduler.pending() == []


def test_stopping_a_parked_execution_spends_its_tokens_and_timers(
    timed: tuple[LocalExecutor, LocalScheduler], entry: Entry
) -> None:
    executor, scheduler = timed
    fork = {
        "Type": "Parallel",
        "Branches": [
            {"StartAt": "A", "States": {"A": call(TimeoutSeconds=600, End=True)}},
            {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 60, "End": True}}},
        ],
        "Next": "End",
    }
    execution = executor.start_execution(
        executor.create_state_machine("wf-abc-fork", machine(("Fork", fork), ("End", end()))), "run-1", {}
    )
    executor.settle()
    assert len(scheduler.pending()) == 2

    executor.stop_execution(execution, "Parley.Cancelled", "cancel_run")
    described = executor.describe_execution(execution)
    assert (described["status"], described["error"], described["cause"]) == (
        "ABORTED",
        "Parley.Cancelled",
        "cancel_run",
    )
    assert described["stopDate"] is not None
    assert scheduler.pending() == []
    executor.succeed(entry.tokens[0], {"output": 1})
    executor.settle()
    assert status(executor, execution) == "ABORTED"
    assert entry.ends() == []
    executor.stop_execution(execution, "again", "again")  # ended: nothing
    assert executor.describe_execution(execution)["error"] == "Parley.Cancelled"
    assert executor.execution_history(execution)[-1]["type"] == "ExecutionAborted"


def test_settle_waits_for_workflow_executions_to_come_to_rest(executor: LocalExecutor, entry: Entry) -> None:
    entry.end_seconds = 0.3
    execution = executor.start_execution(
        executor.create_state_machine("wf-abc-end", machine(("End", end()))), "run-1", {}
    )
    executor.settle()
    assert status(executor, execution) == "SUCCEEDED"


def test_a_waiting_workflow_holds_no_thread(executor: LocalExecutor, entry: Entry) -> None:
    before = threading.active_count()
    arn = executor.create_state_machine("wf-abc-ask", ASK)
    executions = [executor.start_execution(arn, f"run-{index}", {}) for index in range(100)]
    executor.settle()
    assert {status(executor, execution) for execution in executions} == {"RUNNING"}
    assert len(entry.tokens) == 100
    assert threading.active_count() - before <= WORKERS + 1


def test_closing_stops_running_workflows(entry: Entry) -> None:
    executor = LocalExecutor(entry.functions.invoke)
    execution = executor.start_execution(executor.create_state_machine("wf-abc-ask", ASK), "run-1", {})
    executor.settle()
    executor.close()
    assert status(executor, execution) == "ABORTED"
    with pytest.raises(RuntimeError, match="closed"):
        executor.start_execution(executor.create_state_machine("wf-abc-ask", ASK), "run-2", {})


def test_on_the_real_clock_a_wait_ends_on_its_own(executor: LocalExecutor, entry: Entry) -> None:
    definition = machine(("Pause", {"Type": "Wait", "Seconds": 1, "Next": "End"}), ("End", end()))
    execution = executor.start_execution(
        executor.create_state_machine("wf-abc-wait", definition), "run-1", {}
    )
    deadline = time.monotonic() + 20
    while status(executor, execution) == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status(executor, execution) == "SUCCEEDED"


def test_a_stop_during_a_step_waits_for_the_step_and_one_from_within_it_does_not(
    executor: LocalExecutor, entry: Entry
) -> None:
    arn = executor.create_state_machine("wf-abc-ask", ASK)
    calling = threading.Event()
    release = threading.Event()

    def slow_call(token: str) -> None:
        calling.set()
        release.wait(10)

    entry.answer_at_once = slow_call
    first = executor.start_execution(arn, "run-1", {})
    assert calling.wait(10)
    stopper = threading.Thread(
        target=lambda: executor.stop_execution(first, "Parley.Cancelled", "cancel_run")
    )
    stopper.start()
    release.set()
    stopper.join(10)
    assert status(executor, first) == "ABORTED"
    assert entry.ends() == []

    # The execution's own function stops it (a workflow cancelled from its own call): no deadlock.
    second = arn.replace(":stateMachine:", ":execution:").rsplit(":", 1)[0] + ":run-2"
    entry.answer_at_once = lambda token: executor.stop_execution(second, "Parley.Cancelled", "within")
    assert executor.start_execution(arn, "run-2", {}) == second
    executor.settle()
    assert (status(executor, second), executor.describe_execution(second)["cause"]) == ("ABORTED", "within")
