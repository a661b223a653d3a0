"""The local interpreter of JSONata state machines (``parley.local.jsonata_states``): each state type and
field as Step Functions runs them, variables and their scopes, errors, Retry and Catch, executions parked
on task tokens (in one Parallel branch, in several at once) and on Wait timers, stops and timeouts, and
the definitions it refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock, format_time
from parley.local.jsonata_states import (
    DATA_LIMIT_ERROR,
    QUERY_EVALUATION_ERROR,
    TIMED_OUT,
    TaskFailed,
    TaskSucceeded,
    UnsupportedDefinition,
    WorkflowExecution,
    WorkflowMachine,
)
from parley.local.steps import RUNTIME_ERROR, TIMEOUT_ERROR

INVOKE = "arn:aws:states:::lambda:invoke"
WAIT_FOR_TOKEN = "arn:aws:states:::lambda:invoke.waitForTaskToken"
MACHINE_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:wf-test:1"
EXECUTION_ARN = "arn:aws:states:us-east-1:123456789012:execution:wf-test:run-1"


class Functions:
    """Stand-in Lambda functions: ``echo`` answers ``{"echo": payload}``, ``park`` keeps the token it
    is sent, ``fail`` raises ``ValueError``, ``flaky`` raises until ``flaky_after`` calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.tokens: list[str] = []
        self.flaky_after = 0
        self.on_park: Callable[[str], None] = lambda token: None

    def invoke(self, function: str, payload: Any) -> Any:
        self.calls.append((function, payload))
        if function == "echo":
            return {"echo": payload}
        if function == "park":
            self.tokens.append(payload["token"])
            self.on_park(payload["token"])
            return {"outcome": "parked"}
        if function == "fail":
            raise ValueError(f"failed on {json.dumps(payload)}")
        if function == "flaky":
            if len([c for c in self.calls if c[0] == "flaky"]) <= self.flaky_after:
                raise ConnectionError("try again")
            return "ok"
        raise LookupError(f"no function {function}")


@pytest.fixture
def functions() -> Functions:
    return Functions()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def machine_of(
    states: dict[str, Any], functions: Functions, clock: ManualClock, start_at: str | None = None, **top: Any
) -> WorkflowMachine:
    definition = {
        "QueryLanguage": "JSONata",
        "StartAt": start_at or next(iter(states)),
        "States": states,
        **top,
    }
    return WorkflowMachine(definition, arn=MACHINE_ARN, invoke=functions.invoke, now=clock.now)


def run(machine: WorkflowMachine, input_value: Any = None) -> WorkflowExecution:
    execution = machine.start(EXECUTION_ARN, "run-1", {} if input_value is None else input_value)
    machine.run(execution)
    return execution


def task(function: str, payload: Any = None, **fields: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {"FunctionName": function}
    if payload is not None:
        arguments["Payload"] = payload
    return {"Type": "Task", "Resource": INVOKE, "Arguments": arguments, **fields}


def parked(function: str = "park", **fields: Any) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": WAIT_FOR_TOKEN,
        "Arguments": {"FunctionName": function, "Payload": {"token": "{% $states.context.Task.Token %}"}},
        **fields,
    }


def types(execution: WorkflowExecution) -> list[tuple[str, str]]:
    return [(event["type"], event["name"]) for event in execution.history]


# -- Pass, Succeed, variables ----------------------------------------------------------------------------


def test_pass_shapes_its_output_and_assigns_variables_later_states_read(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Shape": {
                "Type": "Pass",
                "Assign": {"name": "{% $states.input.name %}", "count": 2},
                "Output": {"greeting": "{% 'Hello ' & $states.input.name %}", "literal": "$states.input"},
                "Next": "Read",
            },
            "Read": {
                "Type": "Pass",
                "Output": "{% $merge([$states.input, {'n': $count, 'who': $name}]) %}",
                "End": True,
            },
        },
        functions,
        clock,
    )
    execution = run(machine, {"name": "Ada"})
    assert execution.status == "SUCCEEDED"
    assert execution.output == {"greeting": "Hello Ada", "literal": "$states.input", "n": 2, "who": "Ada"}
    assert types(execution) == [
        ("ExecutionStarted", ""),
        ("PassStateEntered", "Shape"),
        ("PassStateExited", "Shape"),
        ("PassStateEntered", "Read"),
        ("PassStateExited", "Read"),
        ("ExecutionSucceeded", ""),
    ]


def test_without_output_a_pass_hands_its_input_on(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of({"Same": {"Type": "Pass", "End": True}}, functions, clock)
    assert run(machine, {"a": [1, None]}).output == {"a": [1, None]}


def test_assignments_of_one_state_all_see_the_values_from_before_it(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Set": {"Type": "Pass", "Assign": {"x": 3, "y": 6}, "Next": "Swap"},
            "Swap": {
                "Type": "Pass",
                "Assign": {"x": "{% $y %}", "y": "{% $x %}"},
                "Output": {"x_in_output": "{% $x %}"},
                "Next": "Show",
            },
            "Show": {
                "Type": "Succeed",
                "Output": {"x": "{% $x %}", "y": "{% $y %}", "before": "{% $states.input %}"},
            },
        },
        functions,
        clock,
    )
    assert run(machine).output == {"x": 6, "y": 3, "before": {"x_in_output": 3}}


def test_a_variable_never_assigned_is_a_query_evaluation_error(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of({"Read": {"Type": "Pass", "Output": "{% $never %}", "End": True}}, functions, clock)
    execution = run(machine)
    assert execution.status == "FAILED"
    assert execution.error == QUERY_EVALUATION_ERROR
    assert "Output" in (execution.cause or "") and "undefined" in (execution.cause or "")


def test_the_context_object(functions: Functions, clock: ManualClock) -> None:
    start = format_time(clock.now())
    machine = machine_of(
        {
            "Wait": {"Type": "Wait", "Seconds": 5, "Next": "Look"},
            "Look": {
                "Type": "Pass",
                "Output": {
                    "execution": "{% $states.context.Execution %}",
                    "state": "{% $states.context.State %}",
                    "machine": "{% $states.context.StateMachine %}",
                    "now": "{% $now() %}",
                },
                "End": True,
            },
        },
        functions,
        clock,
    )
    execution = run(machine, {"x": 1})
    clock.advance(5)
    (timer,) = execution.due()
    machine.fire(execution, timer)
    output = execution.output
    assert output["execution"]["Id"] == EXECUTION_ARN
    assert output["execution"]["Name"] == "run-1"
    assert output["execution"]["Input"] == {"x": 1}
    assert output["execution"]["StartTime"] == start
    assert output["state"] == {"Name": "Look", "EnteredTime": format_time(clock.now()), "RetryCount": 0}
    assert output["machine"] == {"Id": MACHINE_ARN, "Name": "wf-test"}
    assert output["now"] == format_time(clock.now())


# -- Choice ----------------------------------------------------------------------------------------------


def choice_machine(functions: Functions, clock: ManualClock) -> WorkflowMachine:
    return machine_of(
        {
            "Route": {
                "Type": "Choice",
                "Choices": [
                    {"Condition": "{% $states.input.n > 10 %}", "Next": "Big"},
                    {
                        "Condition": "{% $states.input.n > 5 %}",
                        "Assign": {"how": "middling"},
                        "Output": {"m": "{% $states.input.n * 2 %}"},
                        "Next": "Middle",
                    },
                ],
                "Default": "Small",
                "Assign": {"how": "small"},
                "Output": {"s": "{% $states.input.n %}"},
            },
            "Big": {"Type": "Succeed"},
            "Middle": {"Type": "Succeed", "Output": {"in": "{% $states.input %}", "how": "{% $how %}"}},
            "Small": {"Type": "Succeed", "Output": {"in": "{% $states.input %}", "how": "{% $how %}"}},
        },
        functions,
        clock,
    )


def test_choice_takes_the_first_rule_that_holds_with_its_output_and_assign(
    functions: Functions, clock: ManualClock
) -> None:
    machine = choice_machine(functions, clock)
    assert run(machine, {"n": 20}).output == {"n": 20}
    assert run(machine, {"n": 7}).output == {"in": {"m": 14}, "how": "middling"}


def test_choice_default_takes_the_states_own_output_and_assign(
    functions: Functions, clock: ManualClock
) -> None:
    machine = choice_machine(functions, clock)
    execution = run(machine, {"n": 1})
    assert execution.output == {"in": {"s": 1}, "how": "small"}
    assert ("ChoiceStateExited", "Route") in types(execution)


def test_choice_without_a_match_or_default_fails(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Route": {"Type": "Choice", "Choices": [{"Condition": "{% $states.input.ok %}", "Next": "Done"}]},
            "Done": {"Type": "Succeed"},
        },
        functions,
        clock,
    )
    assert run(machine, {"ok": True}).status == "SUCCEEDED"
    execution = run(machine, {"ok": False})
    assert (execution.status, execution.error) == ("FAILED", "States.NoChoiceMatched")
    # A condition that is not a boolean is an expression's failure.
    execution = run(machine, {"ok": "yes"})
    assert (execution.status, execution.error) == ("FAILED", QUERY_EVALUATION_ERROR)
    assert "not a boolean" in (execution.cause or "")


# -- Fail ------------------------------------------------------------------------------------------------


def test_fail_with_literal_and_expression_error_and_cause(functions: Functions, clock: ManualClock) -> None:
    literal = machine_of(
        {"Stop": {"Type": "Fail", "Error": "Parley.Error", "Cause": '{"a": 1}'}}, functions, clock
    )
    execution = run(literal)
    assert (execution.status, execution.error, execution.cause) == ("FAILED", "Parley.Error", '{"a": 1}')
    assert types(execution)[-2:] == [("FailStateEntered", "Stop"), ("ExecutionFailed", "")]
    assert execution.history[-1]["error"] == "Parley.Error"

    computed = machine_of(
        {
            "Stop": {
                "Type": "Fail",
                "Error": "{% 'Custom.' & $states.input.code %}",
                "Cause": "{% $string({'type': 'x', 'status': $states.input.status}) %}",
            }
        },
        functions,
        clock,
    )
    execution = run(computed, {"code": "Denied", "status": 422})
    assert execution.error == "Custom.Denied"
    assert json.loads(execution.cause or "") == {"type": "x", "status": 422}

    not_a_string = machine_of({"Stop": {"Type": "Fail", "Error": "{% 42 %}"}}, functions, clock)
    assert run(not_a_string).error == QUERY_EVALUATION_ERROR


# -- Task ------------------------------------------------------------------------------------------------


def test_a_lambda_task_invokes_with_its_arguments_and_outputs_its_result(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Call": task("echo", {"n": "{% $states.input.n + 1 %}"}, Next="Shaped"),
            "Shaped": task(
                "echo",
                "{% $states.input %}",
                Output={"payload": "{% $states.result.Payload %}", "input": "{% $states.input.StatusCode %}"},
                Assign={"version": "{% $states.result.ExecutedVersion %}"},
                Next="Done",
            ),
            "Done": {"Type": "Succeed", "Output": "{% $merge([$states.input, {'version': $version}]) %}"},
        },
        functions,
        clock,
    )
    execution = run(machine, {"n": 1})
    assert functions.calls[0] == ("echo", {"n": 2})
    assert functions.calls[1] == (
        "echo",
        {"ExecutedVersion": "$LATEST", "Payload": {"echo": {"n": 2}}, "StatusCode": 200},
    )
    assert execution.output == {
        "payload": {"echo": {"ExecutedVersion": "$LATEST", "Payload": {"echo": {"n": 2}}, "StatusCode": 200}},
        "input": 200,
        "version": "$LATEST",
    }
    assert types(execution)[1:6] == [
        ("TaskStateEntered", "Call"),
        ("TaskScheduled", "Call"),
        ("TaskStarted", "Call"),
        ("TaskSucceeded", "Call"),
        ("TaskStateExited", "Call"),
    ]
    # A task's success records no result in the history.
    assert all("output" not in event for event in execution.history)


def test_arguments_as_one_expression(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Call": {
                "Type": "Task",
                "Resource": INVOKE,
                "Arguments": "{% {'FunctionName': 'echo', 'Payload': $states.input} %}",
                "End": True,
            }
        },
        functions,
        clock,
    )
    assert run(machine, {"a": 1}).output["Payload"] == {"echo": {"a": 1}}


def test_a_function_that_raises_fails_its_task_with_its_type_and_lambdas_error_document(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of({"Call": task("fail", {"x": 1}, End=True)}, functions, clock)
    execution = run(machine)
    assert (execution.status, execution.error) == ("FAILED", "ValueError")
    cause = json.loads(execution.cause or "")
    assert cause["errorType"] == "ValueError"
    assert cause["errorMessage"] == 'failed on {"x": 1}'
    failed = [event for event in execution.history if event["type"] == "TaskFailed"]
    assert failed[0]["error"] == "ValueError"


def test_catch_takes_the_error_with_its_output_and_assign(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Call": task(
                "fail",
                Assign={"never": 1},
                Output="never",
                Catch=[
                    {"ErrorEquals": ["KeyError"], "Next": "Wrong"},
                    {
                        "ErrorEquals": ["ValueError"],
                        "Assign": {
                            "caught": "{% $states.errorOutput.Error %}",
                            "seen": "{% $states.input %}",
                        },
                        "Output": {"error": "{% $states.errorOutput.Error %}", "in": "{% $states.input %}"},
                        "Next": "Handled",
                    },
                ],
                Next="Wrong",
            ),
            "Wrong": {"Type": "Fail", "Error": "Wrong"},
            "Handled": {
                "Type": "Succeed",
                "Output": {
                    "out": "{% $states.input %}",
                    "caught": "{% $caught %}",
                    "seen": "{% $seen %}",
                    "never": "{% $exists($never) %}",
                },
            },
        },
        functions,
        clock,
    )
    execution = run(machine, {"n": 1})
    assert execution.output == {
        "out": {"error": "ValueError", "in": {"n": 1}},
        "caught": "ValueError",
        "seen": {"n": 1},
        "never": False,
    }
    assert ("TaskStateExited", "Call") in types(execution)


def test_a_catch_without_output_outputs_the_error(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Call": task("fail", Catch=[{"ErrorEquals": ["States.ALL"], "Next": "Done"}], End=True),
            "Done": {"Type": "Pass", "End": True},
        },
        functions,
        clock,
    )
    output = run(machine).output
    assert output["Error"] == "ValueError"
    assert json.loads(output["Cause"])["errorType"] == "ValueError"


def test_states_task_failed_takes_everything_but_a_timeout(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Call": parked(
                TimeoutSeconds=10,
                Catch=[{"ErrorEquals": ["States.TaskFailed"], "Next": "Failed"}],
                End=True,
            ),
            "Failed": {"Type": "Succeed", "Output": "caught"},
        },
        functions,
        clock,
    )
    execution = run(machine)
    machine.resume(execution, functions.tokens[-1], TaskFailed("Parley.Error", "{}"))
    assert execution.output == "caught"
    execution = run(machine)
    clock.advance(10)
    (timer,) = execution.due()
    machine.fire(execution, timer)
    assert (execution.status, execution.error) == ("FAILED", TIMEOUT_ERROR)


def test_retry_runs_the_task_again_until_its_attempts_are_spent(
    functions: Functions, clock: ManualClock
) -> None:
    functions.flaky_after = 2
    retried = machine_of(
        {
            "Call": task(
                "flaky",
                Retry=[
                    {"ErrorEquals": ["KeyError"], "MaxAttempts": 5},
                    {
                        "ErrorEquals": ["ConnectionError"],
                        "IntervalSeconds": 2,
                        "MaxAttempts": 3,
                        "BackoffRate": 2.0,
                        "MaxDelaySeconds": 30,
                        "JitterStrategy": "FULL",
                    },
                ],
                Output={
                    "payload": "{% $states.result.Payload %}",
                    "retries": "{% $states.context.State.RetryCount %}",
                },
                End=True,
            )
        },
        functions,
        clock,
    )
    execution = run(retried)
    assert execution.output == {"payload": "ok", "retries": 2}
    assert [kind for kind, _ in types(execution)].count("TaskScheduled") == 3
    assert [kind for kind, _ in types(execution)].count("TaskStateEntered") == 1

    functions.calls.clear()
    functions.flaky_after = 10
    spent = machine_of(
        {
            "Call": task(
                "flaky",
                Retry=[{"ErrorEquals": ["States.ALL"], "MaxAttempts": 2}],
                Catch=[{"ErrorEquals": ["ConnectionError"], "Next": "Gave up"}],
                End=True,
            ),
            "Gave up": {"Type": "Succeed", "Output": "{% $states.input.Error %}"},
        },
        functions,
        clock,
    )
    assert run(spent).output == "ConnectionError"
    assert len(functions.calls) == 3


def test_an_expression_that_fails_is_a_query_evaluation_error_a_catch_takes(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Call": task(
                "echo",
                {"n": "{% $states.input.n + 1 %}"},
                Catch=[
                    {
                        "ErrorEquals": [QUERY_EVALUATION_ERROR],
                        "Output": "{% $states.errorOutput %}",
                        "Next": "Caught",
                    }
                ],
                End=True,
            ),
            "Caught": {"Type": "Pass", "End": True},
        },
        functions,
        clock,
    )
    execution = run(machine, {"n": "one"})
    assert execution.output["Error"] == QUERY_EVALUATION_ERROR
    assert "Arguments" in execution.output["Cause"]
    assert functions.calls == []  # the function was never invoked
    assert ("EvaluationFailed", "Call") in types(execution)


def test_a_catchers_own_failure_ends_the_execution(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Call": task(
                "fail",
                Catch=[{"ErrorEquals": ["States.ALL"], "Output": "{% $nothing.here %}", "Next": "Done"}],
                End=True,
            ),
            "Done": {"Type": "Succeed"},
        },
        functions,
        clock,
    )
    assert run(machine).error == QUERY_EVALUATION_ERROR


def test_timeout_seconds_of_an_invoked_task_as_an_expression(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Call": task("echo", TimeoutSeconds="{% $states.input.t %}", End=True),
        },
        functions,
        clock,
    )
    assert run(machine, {"t": 30}).status == "SUCCEEDED"
    execution = run(machine, {"t": 0})
    assert (execution.error, "TimeoutSeconds" in (execution.cause or "")) == (QUERY_EVALUATION_ERROR, True)
    assert run(machine, {"t": "x"}).error == QUERY_EVALUATION_ERROR


# -- task tokens -----------------------------------------------------------------------------------------


def test_a_token_task_parks_until_its_token_is_answered(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {"Ask": parked(Output="{% $states.result.answer %}", End=True)},
        functions,
        clock,
    )
    execution = run(machine)
    (token,) = functions.tokens
    assert execution.status == "RUNNING"
    assert list(execution.tokens) == [token]
    assert types(execution)[-1] == ("TaskSubmitted", "Ask")
    assert not machine.resume(execution, "another", TaskSucceeded({"answer": 1}))
    assert machine.resume(execution, token, TaskSucceeded({"answer": 42}))
    assert (execution.status, execution.output) == ("SUCCEEDED", 42)
    assert not machine.resume(execution, token, TaskSucceeded({"answer": 43}))  # spent


def test_the_token_reaches_the_function_before_it_is_invoked(
    functions: Functions, clock: ManualClock
) -> None:
    told: list[str] = []

    def invoke(function: str, payload: Any) -> Any:
        told.append("invoked")
        return {}

    definition = {"QueryLanguage": "JSONata", "StartAt": "Ask", "States": {"Ask": parked(End=True)}}
    machine = WorkflowMachine(
        definition,
        arn=MACHINE_ARN,
        invoke=invoke,
        on_token=lambda execution, token: told.append("token"),
        now=clock.now,
    )
    run(machine)
    assert told == ["token", "invoked"]


def test_a_token_parked_in_a_one_branch_parallel_resumed_by_success_and_by_failure(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Try": {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": "Ask", "States": {"Ask": parked(Output="{% $states.result %}", End=True)}}
                ],
                "Output": "{% $states.result[0] %}",
                "Catch": [
                    {
                        "ErrorEquals": ["States.ALL"],
                        "Assign": {"error": "{% $states.errorOutput %}"},
                        "Next": "Caught",
                    }
                ],
                "End": True,
            },
            "Caught": {"Type": "Succeed", "Output": {"caught": "{% $error %}"}},
        },
        functions,
        clock,
    )
    answered = run(machine)
    assert answered.status == "RUNNING"
    machine.resume(answered, functions.tokens[-1], TaskSucceeded({"output": "yes"}))
    assert (answered.status, answered.output) == ("SUCCEEDED", {"output": "yes"})

    refused = run(machine)
    machine.resume(refused, functions.tokens[-1], TaskFailed("Parley.Error", '{"status": 410}'))
    assert refused.output == {"caught": {"Error": "Parley.Error", "Cause": '{"status": 410}'}}
    assert ("ParallelStateFailed", "Try") in types(refused)


def two_asks(functions: Functions, clock: ManualClock) -> WorkflowMachine:
    branch = {"StartAt": "Ask", "States": {"Ask": parked(Output="{% $states.result.n %}", End=True)}}
    other = {"StartAt": "Ask too", "States": {"Ask too": parked(Output="{% $states.result.n %}", End=True)}}
    return machine_of(
        {
            "Fork": {
                "Type": "Parallel",
                "Branches": [branch, other],
                "Catch": [{"ErrorEquals": ["Parley.Error"], "Next": "Caught"}],
                "End": True,
            },
            "Caught": {"Type": "Succeed", "Output": "{% $states.input.Cause %}"},
        },
        functions,
        clock,
    )


def test_two_branches_park_at_once_and_the_parallel_ends_when_both_are_answered(
    functions: Functions, clock: ManualClock
) -> None:
    machine = two_asks(functions, clock)
    execution = run(machine)
    first, second = functions.tokens
    assert set(execution.tokens) == {first, second}
    machine.resume(execution, second, TaskSucceeded({"n": 2}))
    assert execution.status == "RUNNING"
    assert list(execution.tokens) == [first]
    machine.resume(execution, first, TaskSucceeded({"n": 1}))
    assert (execution.status, execution.output) == ("SUCCEEDED", [1, 2])


def test_a_failing_branch_fails_the_parallel_with_its_error_and_spends_the_others_tokens(
    functions: Functions, clock: ManualClock
) -> None:
    machine = two_asks(functions, clock)
    execution = run(machine)
    first, second = functions.tokens
    machine.resume(execution, first, TaskFailed("Parley.Error", "first failed"))
    assert (execution.status, execution.output) == ("SUCCEEDED", "first failed")
    assert execution.tokens == {}
    assert not machine.resume(execution, second, TaskSucceeded({"n": 2}))
    assert ("TaskStateAborted", "Ask too") in types(execution)


def test_a_branch_error_no_catch_takes_fails_the_execution(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Fork": {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": "Ask", "States": {"Ask": parked(End=True)}},
                    {
                        "StartAt": "Stop",
                        "States": {"Stop": {"Type": "Fail", "Error": "Custom.Stop", "Cause": "why"}},
                    },
                ],
                "End": True,
            }
        },
        functions,
        clock,
    )
    execution = run(machine)
    assert (execution.status, execution.error, execution.cause) == ("FAILED", "Custom.Stop", "why")
    assert execution.tokens == {}


# -- Parallel --------------------------------------------------------------------------------------------


def test_parallel_branches_take_its_arguments_and_give_their_outputs_in_order(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Fork": {
                "Type": "Parallel",
                "Arguments": {"n": "{% $states.input.n * 10 %}"},
                "Branches": [
                    {
                        "StartAt": "A",
                        "States": {"A": {"Type": "Pass", "Output": "{% $states.input.n + 1 %}", "End": True}},
                    },
                    {
                        "StartAt": "B",
                        "States": {
                            "B": task(
                                "echo", "{% $states.input %}", Output="{% $states.result.Payload %}", End=True
                            )
                        },
                    },
                ],
                "Assign": {"first": "{% $states.result[0] %}"},
                "Next": "Done",
            },
            "Done": {"Type": "Succeed", "Output": {"all": "{% $states.input %}", "first": "{% $first %}"}},
        },
        functions,
        clock,
    )
    execution = run(machine, {"n": 1})
    assert execution.output == {"all": [11, {"echo": {"n": 10}}], "first": 11}
    assert types(execution)[1:3] == [("ParallelStateEntered", "Fork"), ("ParallelStateStarted", "Fork")]
    assert types(execution)[-5:-2] == [
        ("ParallelStateSucceeded", "Fork"),
        ("ParallelStateExited", "Fork"),
        ("SucceedStateEntered", "Done"),
    ]


def test_branches_read_outer_variables_and_their_own_assignments_do_not_leak(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Set": {"Type": "Pass", "Assign": {"outer": "O"}, "Next": "Fork"},
            "Fork": {
                "Type": "Parallel",
                "Branches": [
                    {
                        "StartAt": "Inner",
                        "States": {
                            "Inner": {
                                "Type": "Pass",
                                "Assign": {"inner": "{% $outer & '-a' %}"},
                                "Next": "Read",
                            },
                            "Read": {
                                "Type": "Pass",
                                "Output": {"outer": "{% $outer %}", "inner": "{% $inner %}"},
                                "End": True,
                            },
                        },
                    },
                    {
                        "StartAt": "Other",
                        "States": {
                            "Other": {
                                "Type": "Pass",
                                "Output": {"sees_inner": "{% $exists($inner) %}"},
                                "End": True,
                            }
                        },
                    },
                ],
                "Next": "After",
            },
            "After": {
                "Type": "Succeed",
                "Output": {"branches": "{% $states.input %}", "inner_leaked": "{% $exists($inner) %}"},
            },
        },
        functions,
        clock,
    )
    assert run(machine).output == {
        "branches": [{"outer": "O", "inner": "O-a"}, {"sees_inner": False}],
        "inner_leaked": False,
    }


def test_a_branch_may_not_assign_an_outer_variable(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Set": {"Type": "Pass", "Assign": {"attempt": 1}, "Next": "Fork"},
            "Fork": {
                "Type": "Parallel",
                "Branches": [
                    {
                        "StartAt": "Again",
                        "States": {"Again": {"Type": "Pass", "Assign": {"attempt": 2}, "End": True}},
                    }
                ],
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}],
                "End": True,
            },
            "Caught": {"Type": "Succeed"},
        },
        functions,
        clock,
    )
    execution = run(machine)
    assert (execution.status, execution.error) == ("FAILED", RUNTIME_ERROR)
    assert "outer scope" in (execution.cause or "")


def test_a_parallels_catch_assigns_in_the_scope_around_it(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Fork": {
                "Type": "Parallel",
                "Branches": [{"StartAt": "Boom", "States": {"Boom": task("fail", End=True)}}],
                "Catch": [
                    {
                        "ErrorEquals": ["States.ALL"],
                        "Assign": {"failed": "{% $states.errorOutput.Error %}"},
                        "Next": "Done",
                    }
                ],
                "End": True,
            },
            "Done": {"Type": "Succeed", "Output": "{% $failed %}"},
        },
        functions,
        clock,
    )
    assert run(machine).output == "ValueError"


def test_a_parallel_is_retried_from_its_branches_first_states(
    functions: Functions, clock: ManualClock
) -> None:
    functions.flaky_after = 1
    machine = machine_of(
        {
            "Fork": {
                "Type": "Parallel",
                "Branches": [
                    {
                        "StartAt": "Call",
                        "States": {"Call": task("flaky", Output="{% $states.result.Payload %}", End=True)},
                    }
                ],
                "Retry": [{"ErrorEquals": ["ConnectionError"], "MaxAttempts": 1}],
                "End": True,
            }
        },
        functions,
        clock,
    )
    assert run(machine).output == ["ok"]


def test_nested_parallels_park_on_tokens_deep_inside(functions: Functions, clock: ManualClock) -> None:
    inner = {
        "StartAt": "Inner fork",
        "States": {
            "Inner fork": {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": "A", "States": {"A": parked(Output="{% $states.result.v %}", End=True)}},
                    {"StartAt": "B", "States": {"B": parked(Output="{% $states.result.v %}", End=True)}},
                ],
                "End": True,
            }
        },
    }
    machine = machine_of(
        {
            "Outer": {
                "Type": "Parallel",
                "Branches": [
                    inner,
                    {"StartAt": "C", "States": {"C": parked(Output="{% $states.result.v %}", End=True)}},
                ],
                "End": True,
            }
        },
        functions,
        clock,
    )
    execution = run(machine)
    assert len(execution.tokens) == 3
    c, a, b = functions.tokens  # the branches advance side by side, a state of each in turn
    for token, value in ((c, "c"), (a, "a"), (b, "b")):
        machine.resume(execution, token, TaskSucceeded({"v": value}))
    assert execution.output == [["a", "b"], "c"]


# -- Wait ------------------------------------------------------------------------------------------------


def test_a_wait_parks_until_its_timer_fires(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Pause": {
                "Type": "Wait",
                "Seconds": "{% $states.input.s %}",
                "Assign": {"woke": "{% $now() %}"},
                "Next": "Done",
            },
            "Done": {"Type": "Succeed", "Output": {"woke": "{% $woke %}", "in": "{% $states.input %}"}},
        },
        functions,
        clock,
    )
    execution = run(machine, {"s": 90})
    ((timer, due),) = execution.due().items()
    assert due == clock.now() + timedelta(seconds=90)
    assert types(execution)[-1] == ("WaitStateEntered", "Pause")
    clock.advance(90)
    assert machine.fire(execution, timer)
    assert execution.output == {"woke": format_time(clock.now()), "in": {"s": 90}}
    assert not machine.fire(execution, timer)  # spent


def test_a_wait_until_a_timestamp(functions: Functions, clock: ManualClock) -> None:
    later = clock.now() + timedelta(hours=2)
    machine = machine_of(
        {"Pause": {"Type": "Wait", "Timestamp": "{% $states.input.at %}", "End": True}},
        functions,
        clock,
    )
    execution = run(machine, {"at": format_time(later)})
    assert list(execution.due().values()) == [later]
    # A time gone by, or no wait at all, goes on at once.
    assert run(machine, {"at": "2000-01-01T00:00:00Z"}).status == "SUCCEEDED"
    zero = machine_of({"Pause": {"Type": "Wait", "Seconds": 0, "End": True}}, functions, clock)
    assert run(zero).status == "SUCCEEDED"
    bad = run(machine, {"at": "tomorrow"})
    assert (bad.status, bad.error) == ("FAILED", QUERY_EVALUATION_ERROR)


def test_a_wait_in_a_branch_beside_a_token(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of(
        {
            "Fork": {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": "Ask", "States": {"Ask": parked(Output="asked", End=True)}},
                    {
                        "StartAt": "Pause",
                        "States": {
                            "Pause": {"Type": "Wait", "Seconds": 60, "Next": "Late"},
                            "Late": {"Type": "Pass", "Output": "waited", "End": True},
                        },
                    },
                ],
                "End": True,
            }
        },
        functions,
        clock,
    )
    execution = run(machine)
    (timer,) = execution.due()
    clock.advance(60)
    machine.fire(execution, timer)
    assert execution.status == "RUNNING"
    machine.resume(execution, functions.tokens[0], TaskSucceeded({}))
    assert execution.output == ["asked", "waited"]


# -- timeouts and stops ----------------------------------------------------------------------------------


def test_a_token_task_past_its_timeout_seconds_fails_with_states_timeout(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Ask": parked(
                TimeoutSeconds="{% $states.input.limit %}",
                Catch=[
                    {
                        "ErrorEquals": ["States.Timeout"],
                        "Output": "{% $states.errorOutput.Error %}",
                        "Next": "Late",
                    }
                ],
                End=True,
            ),
            "Late": {"Type": "Succeed"},
        },
        functions,
        clock,
    )
    execution = run(machine, {"limit": 300})
    ((timer, due),) = execution.due().items()
    assert due == clock.now() + timedelta(seconds=300)
    clock.advance(300)
    assert machine.fire(execution, timer)
    assert execution.output == TIMEOUT_ERROR
    assert ("TaskTimedOut", "Ask") in types(execution)
    assert execution.tokens == {}

    answered = run(machine, {"limit": 300})
    machine.resume(answered, functions.tokens[-1], TaskSucceeded({}))
    assert answered.due() == {}  # the answer dropped the timeout


def test_abort_stops_a_parked_execution(functions: Functions, clock: ManualClock) -> None:
    machine = two_asks(functions, clock)
    execution = run(machine)
    machine.abort(execution, "Cancelled", "asked to")
    assert (execution.status, execution.error, execution.cause) == ("ABORTED", "Cancelled", "asked to")
    assert execution.tokens == {} and execution.due() == {}
    assert types(execution)[-1] == ("ExecutionAborted", "")
    assert not machine.resume(execution, functions.tokens[0], TaskSucceeded({}))


def test_the_machines_own_timeout(functions: Functions, clock: ManualClock) -> None:
    machine = machine_of({"Ask": parked(End=True)}, functions, clock, TimeoutSeconds=3600)
    execution = run(machine)
    assert execution.due() == {"execution-timeout": clock.now() + timedelta(seconds=3600)}
    clock.advance(3600)
    machine.fire(execution, "execution-timeout")
    assert (execution.status, execution.error) == (TIMED_OUT, TIMEOUT_ERROR)
    assert types(execution)[-1] == ("ExecutionTimedOut", "")


def test_a_state_output_past_the_payload_limit_ends_the_execution(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Big": {
                "Type": "Pass",
                "Output": "{% $join($map($range(1, 300, 1), function($i){ $pad('', 1000, 'x') })) %}",
                "End": True,
            }
        },
        functions,
        clock,
    )
    execution = run(machine)
    assert (execution.status, execution.error) == ("FAILED", DATA_LIMIT_ERROR)


# -- what is refused -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "reason"),
    [
        ({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}, "JSONata"),
        (
            {"QueryLanguage": "JSONPath", "StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}},
            "JSONata",
        ),
        (
            {"QueryLanguage": "JSONata", "StartAt": "B", "States": {"A": {"Type": "Pass", "End": True}}},
            "StartAt",
        ),
        ({"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Map", "End": True}}}, "Map"),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Pass", "Parameters": {}, "End": True}},
            },
            "Parameters",
        ),
        ({"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Z"}}}, "'Z'"),
        ({"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass"}}}, "Next and End"),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Pass", "Output": "{% 1 + %}", "End": True}},
            },
            "parse",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Pass", "Output": " {% 1 %}", "End": True}},
            },
            "exactly",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Pass", "Assign": {"states": 1}, "End": True}},
            },
            "$states",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Pass", "Assign": {"a.b": 1}, "End": True}},
            },
            "variable",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Task",
                        "Resource": "arn:aws:states:::sqs:sendMessage",
                        "Arguments": {},
                        "End": True,
                    }
                },
            },
            "resource",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Task",
                        "Resource": WAIT_FOR_TOKEN,
                        "Arguments": {"FunctionName": "f", "Payload": {}},
                        "End": True,
                    }
                },
            },
            "Task.Token",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Task",
                        "Resource": INVOKE,
                        "Arguments": {"FunctionName": "f", "InvocationType": "Event"},
                        "End": True,
                    }
                },
            },
            "InvocationType",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Task",
                        "Resource": INVOKE,
                        "Arguments": {"FunctionName": "f"},
                        "HeartbeatSeconds": 5,
                        "End": True,
                    }
                },
            },
            "HeartbeatSeconds",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Task",
                        "Resource": INVOKE,
                        "Arguments": {"FunctionName": "f"},
                        "TimeoutSeconds": 0,
                        "End": True,
                    }
                },
            },
            "TimeoutSeconds",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Task",
                        "Resource": INVOKE,
                        "Arguments": {"FunctionName": "f"},
                        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.e", "Next": "A"}],
                        "End": True,
                    }
                },
            },
            "ResultPath",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Choice",
                        "Choices": [{"Variable": "$.a", "BooleanEquals": True, "Next": "A"}],
                    }
                },
            },
            "Condition",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Wait", "Seconds": 1, "Timestamp": "x", "End": True}},
            },
            "Seconds",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Wait", "Timestamp": "soon", "End": True}},
            },
            "Timestamp",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {
                    "A": {
                        "Type": "Parallel",
                        "Branches": [{"StartAt": "X", "States": {"X": {"Type": "Pass", "Next": "A"}}}],
                        "End": True,
                    }
                },
            },
            "'A'",
        ),
        (
            {
                "QueryLanguage": "JSONata",
                "StartAt": "A",
                "States": {"A": {"Type": "Pass", "End": True}},
                "Extra": 1,
            },
            "Extra",
        ),
    ],
)
def test_what_it_does_not_interpret_is_refused_when_built(definition: dict[str, Any], reason: str) -> None:
    with pytest.raises(UnsupportedDefinition, match=reason.replace("$", r"\$").replace(".", r"\.")):
        WorkflowMachine(definition, arn=MACHINE_ARN, invoke=lambda function, payload: None)


def test_an_endless_loop_ends_at_step_functions_history_limit(
    functions: Functions, clock: ManualClock
) -> None:
    machine = machine_of(
        {
            "Again": {"Type": "Pass", "Next": "Loop"},
            "Loop": {"Type": "Choice", "Choices": [{"Condition": True, "Next": "Again"}]},
        },
        functions,
        clock,
    )
    execution = run(machine)
    assert (execution.status, execution.error) == ("FAILED", RUNTIME_ERROR)
    assert "25,000 events" in (execution.cause or "")
