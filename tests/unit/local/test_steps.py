"""The local ASL interpreter (``parley.local.steps``): every construct it runs, what it refuses, and the
run's real state machine end to end with stand-in functions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from parley.infrastructure.state_machine import (
    INVOKE_RESOURCE,
    SETTLE_ENDING_STATE,
    WAIT_FOR_TOKEN_RESOURCE,
    WAIT_STATE,
    state_machine_definition,
)
from parley.local import steps
from parley.local.steps import (
    ABORTED,
    FAILED,
    RUNNING,
    SUCCEEDED,
    Execution,
    StateMachine,
    TaskFailed,
    TaskSucceeded,
    UnsupportedDefinition,
)

ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:test"


class Functions:
    """Stand-in Lambda functions by name: each answers with ``answers[name](payload)`` (a callable) and
    records its payloads."""

    def __init__(self, **answers: Callable[[Any], Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, Any]] = []
        self.tokens: list[str] = []

    def invoke(self, name: str, payload: Any) -> Any:
        self.calls.append((name, payload))
        return self.answers[name](payload)

    def named(self, name: str) -> list[Any]:
        return [payload for called, payload in self.calls if called == name]

    def on_token(self, execution: Execution, token: str) -> None:
        self.tokens.append(token)


def machine(states: dict[str, Any], functions: Functions, start: str | None = None) -> StateMachine:
    definition = {"StartAt": start or next(iter(states)), "States": states}
    return StateMachine(definition, arn=ARN, invoke=functions.invoke, on_token=functions.on_token)


def run(machine: StateMachine, input_value: Any) -> Execution:
    execution = machine.start(f"{ARN}:execution:x", "x", input_value)
    machine.run(execution)
    return execution


def task(function: str, payload: Any = None, **fields: Any) -> dict[str, Any]:
    parameters: dict[str, Any] = {"FunctionName": function}
    if payload is not None:
        parameters["Payload"] = payload
    return {"Type": "Task", "Resource": INVOKE_RESOURCE, "Parameters": parameters, **fields}


def wait(function: str, **fields: Any) -> dict[str, Any]:
    payload = {"token.$": "$$.Task.Token", "run.$": "$.run"}
    return {**task(function, payload, **fields), "Resource": WAIT_FOR_TOKEN_RESOURCE}


def raising(*errors: Exception, then: Any = None) -> Callable[[Any], Any]:
    left = list(errors)

    def answer(payload: Any) -> Any:
        if left:
            raise left.pop(0)
        return then

    return answer


class Throttled(Exception):
    pass


# -- Task (lambda:invoke) -------------------------------------------------------------------------------


def test_a_task_passes_its_payload_template_and_keeps_its_result() -> None:
    functions = Functions(f=lambda payload: {"seen": payload})
    payload = {
        "run.$": "$.run",
        "nested": {"id.$": "$.run.id", "list": [{"name.$": "$$.Execution.Name"}, 7]},
        "state.$": "$$.State.Name",
        "literal": "as is",
    }
    states = {
        "Call": task("f", payload, ResultSelector={"got.$": "$.Payload.seen"}, ResultPath="$.a.b", End=True)
    }

    execution = run(machine(states, functions), {"run": {"id": "r-1"}, "other": 1})

    sent = {"run": {"id": "r-1"}, "nested": {"id": "r-1", "list": [{"name": "x"}, 7]}, "state": "Call"}
    sent["literal"] = "as is"
    assert functions.named("f") == [sent]
    assert execution.status == SUCCEEDED
    assert execution.output == {"run": {"id": "r-1"}, "other": 1, "a": {"b": {"got": sent}}}


def test_the_task_result_is_the_lambda_integrations_and_result_path_dollar_replaces_the_input() -> None:
    functions = Functions(f=lambda payload: [1, 2])

    execution = run(machine({"Call": task("f", {"x": 1}, End=True)}, functions), {"in": True})

    assert execution.output == {"ExecutedVersion": "$LATEST", "Payload": [1, 2], "StatusCode": 200}


def test_a_null_result_path_keeps_the_input() -> None:
    functions = Functions(f=lambda payload: "ignored")

    execution = run(machine({"Call": task("f", {}, ResultPath=None, End=True)}, functions), {"in": True})

    assert execution.output == {"in": True}


def test_a_path_that_is_not_there_fails_the_execution_past_any_catch() -> None:
    functions = Functions(f=lambda payload: None)
    states = {
        "Call": task(
            "f", {"x.$": "$.missing"}, Catch=[{"ErrorEquals": ["States.ALL"], "Next": "Done"}], Next="Done"
        ),
        "Done": {"Type": "Succeed"},
    }

    execution = run(machine(states, functions), {})

    assert execution.status == FAILED
    assert execution.error == "States.Runtime"
    assert functions.calls == []


def test_retry_runs_the_task_again_up_to_max_attempts_then_catch_takes_it() -> None:
    functions = Functions(f=raising(Throttled("1"), Throttled("2"), then={"ok": True}))
    states = {
        "Call": task(
            "f",
            {},
            Retry=[{"ErrorEquals": ["Throttled"], "IntervalSeconds": 60, "MaxAttempts": 2, "BackoffRate": 2}],
            ResultSelector={"ok.$": "$.Payload.ok"},
            End=True,
        )
    }

    execution = run(machine(states, functions), {})

    assert execution.status == SUCCEEDED  # the intervals are not waited
    assert execution.output == {"ok": True}
    assert len(functions.named("f")) == 3


def test_once_its_retries_are_spent_the_error_goes_to_the_first_catch_that_matches() -> None:
    functions = Functions(f=raising(Throttled("a"), Throttled("b"), Throttled("c")))
    states = {
        "Call": task(
            "f",
            {},
            Retry=[
                {"ErrorEquals": ["Throttled"], "MaxAttempts": 1},
                {"ErrorEquals": ["States.ALL"], "MaxAttempts": 5},  # the first retrier that matches decides
            ],
            Catch=[
                {"ErrorEquals": ["Other"], "Next": "Wrong"},
                {"ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.error", "Next": "Caught"},
            ],
            Next="Wrong",
        ),
        "Wrong": {"Type": "Fail", "Error": "Wrong"},
        "Caught": {"Type": "Pass", "End": True},
    }

    execution = run(machine(states, functions), {"in": 1})

    assert len(functions.named("f")) == 2
    assert execution.status == SUCCEEDED
    error = execution.output["error"]
    assert error["Error"] == "Throttled"
    cause = json.loads(error["Cause"])  # Lambda's error document
    assert (cause["errorType"], cause["errorMessage"]) == ("Throttled", "b")
    assert execution.output["in"] == 1


def test_an_error_no_catch_takes_fails_the_execution() -> None:
    functions = Functions(f=raising(LookupError("gone")))
    states = {"Call": task("f", {}, Retry=[{"ErrorEquals": ["States.ALL"], "MaxAttempts": 0}], End=True)}

    execution = run(machine(states, functions), {})

    assert (execution.status, execution.error) == (FAILED, "LookupError")
    assert len(functions.named("f")) == 1
    assert execution.history[-1] == ("ExecutionFailed", "")


def test_a_task_that_runs_past_its_timeout_seconds_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 100.0 + 61])
    monkeypatch.setattr(steps.time, "monotonic", lambda: next(clock))
    functions = Functions(f=lambda payload: "late")
    states = {
        "Call": task(
            "f",
            {},
            TimeoutSeconds=60,
            Retry=[{"ErrorEquals": ["States.TaskFailed"], "MaxAttempts": 3}],  # not a timeout
            Catch=[{"ErrorEquals": ["States.Timeout"], "Next": "Timed out"}],
            Next="Timed out",
        ),
        "Timed out": {"Type": "Succeed"},
    }

    execution = run(machine(states, functions), {})

    assert execution.status == SUCCEEDED
    assert execution.output["Error"] == "States.Timeout"
    assert ("TaskTimedOut", "Call") in execution.history


# -- Task (waitForTaskToken) -------------------------------------------------------------------------------


def wait_machine(functions: Functions, **fields: Any) -> StateMachine:
    states = {
        "Wait": wait(
            "w",
            TimeoutSecondsPath="$.timeout_seconds",
            ResultPath="$.answered",
            Catch=[{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Ended"}],
            Next="Answered",
            **fields,
        ),
        "Answered": {"Type": "Pass", "End": True},
        "Ended": {"Type": "Pass", "End": True},
    }
    return machine(states, functions)


def test_a_wait_task_parks_on_its_token_with_its_timeout_until_it_is_resumed() -> None:
    functions = Functions(w=lambda payload: {"parked": True})
    state_machine = wait_machine(functions)

    execution = run(state_machine, {"run": {"id": "r"}, "timeout_seconds": 120})

    (token,) = functions.tokens
    assert functions.named("w") == [{"token": token, "run": {"id": "r"}}]
    assert (execution.status, execution.token, execution.timeout_seconds) == (RUNNING, token, 120)
    state_machine.run(execution)  # parked: nothing runs
    assert len(functions.named("w")) == 1

    assert state_machine.resume(execution, "another token", TaskSucceeded({"no": 1})) is False
    assert state_machine.resume(execution, token, TaskSucceeded({"answer_id": "a-1"})) is True
    assert execution.status == SUCCEEDED
    assert execution.output["answered"] == {"answer_id": "a-1"}
    assert state_machine.resume(execution, token, TaskSucceeded({})) is False  # spent


@pytest.mark.parametrize("error", ["Parley.Expired", "States.Timeout"])
def test_a_failed_or_timed_out_wait_goes_to_its_catch(error: str) -> None:
    functions = Functions(w=lambda payload: None)
    state_machine = wait_machine(functions)
    execution = run(state_machine, {"run": {}, "timeout_seconds": 5})

    state_machine.resume(execution, functions.tokens[0], TaskFailed(error, "why"))

    assert execution.status == SUCCEEDED
    assert execution.output["error"] == {"Error": error, "Cause": "why"}
    kind = "TaskTimedOut" if error == "States.Timeout" else "TaskFailed"
    assert (kind, "Wait") in execution.history


def test_a_wait_whose_function_fails_does_not_park() -> None:
    functions = Functions(w=raising(LookupError("no table")))
    execution = run(wait_machine(functions), {"run": {}, "timeout_seconds": 5})

    assert execution.status == SUCCEEDED
    assert execution.token is None
    assert execution.output["error"]["Error"] == "LookupError"


@pytest.mark.parametrize("timeout", [None, 0, 1.5, "60", True])
def test_a_wait_timeout_that_is_not_a_positive_integer_fails_the_execution(timeout: Any) -> None:
    functions = Functions(w=lambda payload: None)
    input_value: dict[str, Any] = {"run": {}}
    if timeout is not None:
        input_value["timeout_seconds"] = timeout

    execution = run(wait_machine(functions), input_value)

    assert (execution.status, execution.error) == (FAILED, "States.Runtime")
    assert functions.calls == []


def test_a_wait_with_fixed_timeout_seconds_and_one_without() -> None:
    functions = Functions(w=lambda payload: None)
    states = {"Wait": wait("w", TimeoutSeconds=30, End=True)}
    assert run(machine(states, functions), {"run": {}}).timeout_seconds == 30
    states = {"Wait": wait("w", End=True)}
    assert run(machine(states, functions), {"run": {}}).timeout_seconds is None


def test_an_execution_can_be_aborted_where_it_waits() -> None:
    functions = Functions(w=lambda payload: None)
    state_machine = wait_machine(functions)
    execution = run(state_machine, {"run": {}, "timeout_seconds": 5})

    state_machine.abort(execution)

    assert (execution.status, execution.token) == (ABORTED, None)
    assert state_machine.resume(execution, functions.tokens[0], TaskSucceeded({})) is False
    assert execution.history[-1] == ("ExecutionAborted", "")


# -- Choice, Pass, Succeed, Fail ----------------------------------------------------------------------------


def choose(rule: dict[str, Any], input_value: Any, default: bool = True) -> Execution:
    states: dict[str, Any] = {
        "Choose": {"Type": "Choice", "Choices": [{**rule, "Next": "Yes"}]},
        "Yes": {"Type": "Pass", "Result": "yes", "End": True},
        "No": {"Type": "Pass", "Result": "no", "End": True},
    }
    if default:
        states["Choose"]["Default"] = "No"
    return run(machine(states, Functions()), input_value)


@pytest.mark.parametrize(
    ("rule", "input_value", "chosen"),
    [
        ({"Variable": "$.a", "StringEquals": "x"}, {"a": "x"}, "yes"),
        ({"Variable": "$.a", "StringEquals": "x"}, {"a": "y"}, "no"),
        ({"Variable": "$.a", "StringEquals": "7"}, {"a": 7}, "no"),  # another type: no match
        ({"Variable": "$.a", "NumericEquals": 7}, {"a": 7}, "yes"),
        ({"Variable": "$.a", "NumericEquals": 7}, {"a": True}, "no"),
        ({"Variable": "$.a", "BooleanEquals": True}, {"a": True}, "yes"),
        ({"Variable": "$.a", "IsNull": True}, {"a": None}, "yes"),
        ({"Variable": "$.a.b", "IsPresent": True}, {"a": {"b": None}}, "yes"),
        ({"Variable": "$.a.b", "IsPresent": True}, {"a": None}, "no"),
        ({"Variable": "$.a.b", "IsPresent": False}, {"a": 3}, "yes"),
        (
            {"And": [{"Variable": "$.a", "IsPresent": True}, {"Variable": "$.a", "StringEquals": "x"}]},
            {},  # And stops at the first rule that does not hold: no States.Runtime
            "no",
        ),
        (
            {"Or": [{"Variable": "$.a", "IsNull": True}, {"Variable": "$.a", "StringEquals": "x"}]},
            {"a": "x"},
            "yes",
        ),
        ({"Not": {"Variable": "$.a", "StringEquals": "x"}}, {"a": "y"}, "yes"),
    ],
)
def test_choice_rules(rule: dict[str, Any], input_value: Any, chosen: str) -> None:
    execution = choose(rule, input_value)

    assert (execution.status, execution.output) == (SUCCEEDED, chosen)
    assert ("ChoiceStateEntered", "Choose") in execution.history


def test_a_comparison_on_a_variable_that_is_not_there_fails_the_execution() -> None:
    execution = choose({"Variable": "$.a", "StringEquals": "x"}, {})

    assert (execution.status, execution.error) == (FAILED, "States.Runtime")


def test_a_choice_with_no_match_and_no_default_fails_the_execution() -> None:
    execution = choose({"Variable": "$.a", "StringEquals": "x"}, {"a": "y"}, default=False)

    assert (execution.status, execution.error) == (FAILED, "States.NoChoiceMatched")


def test_pass_builds_its_output_from_parameters_or_result_at_its_result_path() -> None:
    states = {
        "Rebuild": {"Type": "Pass", "Parameters": {"run.$": "$.run", "n.$": "$.deep.n"}, "Next": "Add"},
        "Add": {"Type": "Pass", "Result": {"added": True}, "ResultPath": "$.extra", "Next": "Done"},
        "Done": {"Type": "Succeed"},
    }

    execution = run(machine(states, Functions()), {"run": "r", "deep": {"n": 4}, "dropped": 1})

    assert execution.output == {"run": "r", "n": 4, "extra": {"added": True}}
    assert [kind for kind, _ in execution.history] == [
        "ExecutionStarted",
        "PassStateEntered",
        "PassStateExited",
        "PassStateEntered",
        "PassStateExited",
        "SucceedStateEntered",
        "SucceedStateExited",
        "ExecutionSucceeded",
    ]


def test_fail_ends_the_execution_with_its_error_and_cause() -> None:
    execution = run(machine({"Stop": {"Type": "Fail", "Error": "E", "Cause": "C"}}, Functions()), {})

    assert (execution.status, execution.error, execution.cause) == (FAILED, "E", "C")


# -- what it refuses ----------------------------------------------------------------------------------------


#: States beside the run's machine's own, so that every kind of state the interpreter takes is refused
#: in its turn: a plain invocation, a Choice and a Succeed after the settle step.
RESUME_STATE, CHOICE_STATE, SETTLED_STATE = "Resume the run", "Resume?", "Settled"


def definition(**changes: Any) -> dict[str, Any]:
    base = state_machine_definition("wait-fn", "settle-fn")
    states = dict(base["States"])
    states[SETTLE_ENDING_STATE] = {
        **{k: v for k, v in states[SETTLE_ENDING_STATE].items() if k != "End"},
        "Next": RESUME_STATE,
    }
    states[RESUME_STATE] = {
        "Type": "Task",
        "Resource": INVOKE_RESOURCE,
        "Parameters": {"FunctionName": "reason-fn", "Payload": {"run.$": "$.run"}},
        "TimeoutSeconds": 960,
        "Next": CHOICE_STATE,
    }
    states[CHOICE_STATE] = {
        "Type": "Choice",
        "Choices": [{"Variable": "$.a", "StringEquals": "x", "Next": SETTLED_STATE}],
        "Default": SETTLED_STATE,
    }
    states[SETTLED_STATE] = {"Type": "Succeed"}
    return {**base, "States": states, **changes}


def test_the_definition_the_refusals_start_from_is_accepted() -> None:
    StateMachine(definition(), arn=ARN, invoke=lambda name, payload: None)


def with_state(name: str, **fields: Any) -> dict[str, Any]:
    base = definition()
    states = dict(base["States"])
    states[name] = {**states.get(name, {}), **fields}
    return {**base, "States": states}


@pytest.mark.parametrize(
    ("broken", "words"),
    [
        (definition(QueryLanguage="JSONata"), "JSONPath"),
        (definition(TimeoutSeconds=60), "top-level"),
        (definition(StartAt="Nowhere"), "Nowhere"),
        (with_state("Pause", Type="Wait", Seconds=5, Next=SETTLED_STATE), "Wait"),
        (with_state("Fan out", Type="Map", End=True), "Map"),
        (with_state(WAIT_STATE, InputPath="$.run"), "InputPath"),
        (with_state(WAIT_STATE, HeartbeatSeconds=60), "HeartbeatSeconds"),
        (with_state(WAIT_STATE, Resource="arn:aws:states:::sqs:sendMessage"), "resource"),
        (
            with_state(WAIT_STATE, Parameters={"FunctionName": "wait-fn", "Payload": {"run.$": "$.run"}}),
            "Token",
        ),
        (
            with_state(RESUME_STATE, Parameters={"FunctionName": "f", "InvocationType": "Event"}),
            "InvocationType",
        ),
        (
            with_state(RESUME_STATE, Parameters={"FunctionName": "f", "Payload": {"x.$": "States.UUID()"}}),
            "intrinsic",
        ),
        (with_state(RESUME_STATE, Parameters={"FunctionName": "f", "Payload": {"x.$": "$.a[0]"}}), "path"),
        (with_state(RESUME_STATE, Parameters={"FunctionName": "f", "Payload": {"x.$": "$..a"}}), "path"),
        (with_state(RESUME_STATE, Retry=[{"ErrorEquals": ["States.ALL", "X"]}]), "alone"),
        (with_state(RESUME_STATE, Retry=[{"ErrorEquals": ["X"], "MaxAttempts": -1}]), "MaxAttempts"),
        (with_state(RESUME_STATE, Catch=[{"ErrorEquals": ["X"], "Next": "Nowhere"}]), "Nowhere"),
        (with_state(RESUME_STATE, TimeoutSecondsPath="$.t"), "not both"),
        (with_state(SETTLED_STATE, Type="Succeed", OutputPath="$.x"), "OutputPath"),
        (
            with_state(
                "Resume?", Choices=[{"Variable": "$.a", "StringMatches": "x*", "Next": SETTLED_STATE}]
            ),
            "StringMatches",
        ),
        (
            with_state("Resume?", Choices=[{"Variable": "$.a", "StringEquals": 1, "Next": SETTLED_STATE}]),
            "takes",
        ),
        (with_state("Resume?", Choices=[{"Variable": "$.a", "StringEquals": "x"}]), "Next"),
        (with_state("Resume?", Choices=[{"And": [], "Next": SETTLED_STATE}]), "And/Or"),
    ],
)
def test_what_it_does_not_interpret_is_refused_when_the_machine_is_built(broken: Any, words: str) -> None:
    with pytest.raises(UnsupportedDefinition, match=words):
        StateMachine(broken, arn=ARN, invoke=lambda name, payload: None)


# -- the run's state machine, end to end ----------------------------------------------------------------


class Run:
    """The real definition with stand-in wait and settle functions."""

    def __init__(self, *, settles: list[Any] | None = None) -> None:
        self.settles = list(settles or [])
        self.functions = Functions(**{"wait-fn": self.wait, "settle-fn": self.settle})
        self.machine = StateMachine(
            state_machine_definition("wait-fn", "settle-fn"),
            arn=ARN,
            invoke=self.functions.invoke,
            on_token=self.functions.on_token,
        )
        self.execution = self.machine.start(
            f"{ARN}:execution:run-1", "run-1", {"run": RUN, "timeout_seconds": 3660}
        )
        self.machine.run(self.execution)

    def wait(self, payload: Any) -> Any:
        return {"run": payload["run"], "outcome": "parked"}

    def settle(self, payload: Any) -> Any:
        answer = self.settles.pop(0) if self.settles else "unchanged"
        if isinstance(answer, Exception):
            raise answer
        return {"run": payload["run"], "outcome": answer}

    @property
    def token(self) -> str:
        return self.functions.tokens[-1]

    def states(self) -> list[str]:
        return [name for kind, name in self.execution.history if kind.endswith("StateEntered")]


RUN = {"org": "acme", "playbook": "campaigns", "run_id": "r-1"}


@pytest.mark.parametrize("ending", ["answered", "expired", "cancelled"])
def test_the_run_state_machine_ends_in_its_wait_whatever_ended_the_request(ending: str) -> None:
    run = Run()
    assert (run.execution.state, run.execution.timeout_seconds) == (WAIT_STATE, 3660)

    run.machine.resume(run.execution, run.token, TaskSucceeded({"ending": ending}))

    assert run.functions.named("settle-fn") == []
    assert run.execution.status == SUCCEEDED
    assert run.states() == [WAIT_STATE]  # one state transition


def test_the_run_state_machine_timed_out_settles_from_the_store() -> None:
    run = Run(settles=["expired"])

    run.machine.resume(run.execution, run.token, TaskFailed("States.Timeout", "the backstop"))

    assert run.functions.named("settle-fn") == [
        {"run": RUN, "error": {"Error": "States.Timeout", "Cause": "the backstop"}}
    ]
    assert run.execution.status == SUCCEEDED
    assert run.states() == [WAIT_STATE, SETTLE_ENDING_STATE]


def test_the_run_state_machine_settle_is_retried_then_the_execution_fails() -> None:
    run = Run(settles=[RuntimeError("throttled")] * 20)

    run.machine.resume(run.execution, run.token, TaskFailed("States.Timeout", ""))

    assert len(run.functions.named("settle-fn")) == 11  # the first try and ten retries
    assert (run.execution.status, run.execution.error) == (FAILED, "RuntimeError")
