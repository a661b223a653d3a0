"""The run's state machine as ASL (``parley.infrastructure.state_machine``): the wait, the settle steps, and
the loop of a reasoning run that resumes after its wait and may wait again (agent-runs.md, "A run that
waits"). What it does when run is checked in moto (``tests/unit/local/test_executor``); what CDK deploys,
in ``tests/cdk/test_stack``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from parley.infrastructure.functions import function_named
from parley.infrastructure.state_machine import (
    INVOKE_RESOURCE,
    LAMBDA_SERVICE_ERRORS,
    MAX_TIMEOUT_SECONDS,
    RESUME_CHOICE_STATE,
    RESUME_STATE,
    RESUME_TIMEOUT_SECONDS,
    SETTLE_ANSWER_STATE,
    SETTLE_ENDING_STATE,
    SETTLED_STATE,
    WAIT_AGAIN_STATE,
    WAIT_FOR_TOKEN_RESOURCE,
    WAIT_STATE,
    WAITING_AGAIN_STATE,
    execution_input,
    state_machine_definition,
    state_machine_json,
)

WAIT, SETTLE, REASON = "arn:wait", "arn:settle", "arn:reason"


@pytest.fixture
def states() -> dict[str, Any]:
    definition = state_machine_definition(WAIT, SETTLE, REASON)
    assert definition["StartAt"] == WAIT_STATE
    assert definition["QueryLanguage"] == "JSONPath"
    found: dict[str, Any] = definition["States"]
    return found


def _walk(value: Any) -> list[Any]:
    """Every value in ``value``, nested ones included."""
    found = [value]
    if isinstance(value, dict):
        for item in value.values():
            found += _walk(item)
    elif isinstance(value, list):
        for item in value:
            found += _walk(item)
    return found


def test_the_states_and_where_each_goes(states: dict[str, Any]) -> None:
    def targets(state: dict[str, Any]) -> set[str]:
        nexts = {state.get("Next"), state.get("Default")}
        nexts |= {c["Next"] for c in state.get("Catch", [])} | {c["Next"] for c in state.get("Choices", [])}
        return {n for n in nexts if n is not None}

    assert {name: (state["Type"], targets(state)) for name, state in states.items()} == {
        WAIT_STATE: ("Task", {SETTLE_ANSWER_STATE, SETTLE_ENDING_STATE}),
        SETTLE_ANSWER_STATE: ("Task", {RESUME_CHOICE_STATE}),
        SETTLE_ENDING_STATE: ("Task", {RESUME_CHOICE_STATE}),
        RESUME_CHOICE_STATE: ("Choice", {RESUME_STATE, SETTLED_STATE}),
        RESUME_STATE: ("Task", {WAITING_AGAIN_STATE, SETTLED_STATE}),
        WAITING_AGAIN_STATE: ("Choice", {WAIT_AGAIN_STATE, SETTLED_STATE}),
        WAIT_AGAIN_STATE: ("Pass", {WAIT_STATE}),
        SETTLED_STATE: ("Succeed", set()),
    }
    assert (RESUME_CHOICE_STATE, RESUME_STATE, WAITING_AGAIN_STATE) == (
        "Resume?",
        "Resume the run",
        "Waiting again?",
    )


def test_jsonpath_only_no_wait_states_and_no_null_result_paths(states: dict[str, Any]) -> None:
    # moto's executor runs no JSONata and its Wait states run in real time; CDK's JSON drops nulls.
    text = json.dumps(states)
    assert "JSONata" not in text
    assert not any({"Arguments", "Output"} & set(state) for state in states.values())
    assert all(state["Type"] != "Wait" for state in states.values())
    assert None not in _walk(states)


def test_the_wait_parks_on_a_token_with_the_inputs_timeout(states: dict[str, Any]) -> None:
    wait = states[WAIT_STATE]

    assert wait["Resource"] == WAIT_FOR_TOKEN_RESOURCE
    assert wait["Parameters"] == {
        "FunctionName": WAIT,
        "Payload": {"token.$": "$$.Task.Token", "run.$": "$.run"},
    }
    assert wait["TimeoutSecondsPath"] == "$.timeout_seconds"
    assert wait["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": SETTLE_ENDING_STATE}
    ]


def test_both_settle_steps_keep_the_outcome_and_go_to_the_choice(states: dict[str, Any]) -> None:
    answer, ending = states[SETTLE_ANSWER_STATE], states[SETTLE_ENDING_STATE]

    for settle in (answer, ending):
        assert settle["Resource"] == INVOKE_RESOURCE
        assert settle["Parameters"]["FunctionName"] == SETTLE
        assert settle["ResultSelector"] == {"outcome.$": "$.Payload"}
        assert settle["ResultPath"] == "$.settled"
        assert settle["Retry"][-1]["ErrorEquals"] == ["States.ALL"]  # settling is idempotent
        assert settle["Next"] == RESUME_CHOICE_STATE
    assert answer["Parameters"]["Payload"] == {"run.$": "$.run", "answered.$": "$.answered"}
    assert ending["Parameters"]["Payload"] == {"run.$": "$.run", "error.$": "$.error"}


def _condition(rule: dict[str, Any]) -> tuple[str, str]:
    """A rule's ``(variable, expected word)``: a StringEquals guarded by IsPresent."""
    present, equals = rule["And"]
    assert present == {"Variable": equals["Variable"], "IsPresent": True}
    return equals["Variable"], equals["StringEquals"]


def test_settles_outcome_resume_resumes_and_anything_else_is_settled(states: dict[str, Any]) -> None:
    choice = states[RESUME_CHOICE_STATE]
    (rule,) = choice["Choices"]

    assert _condition(rule) == ("$.settled.outcome.outcome", "resume")
    assert rule["Next"] == RESUME_STATE
    assert choice["Default"] == SETTLED_STATE


def test_the_resumption_invokes_the_reason_function_synchronously(states: dict[str, Any]) -> None:
    resume = states[RESUME_STATE]

    assert resume["Resource"] == INVOKE_RESOURCE  # not .waitForTaskToken, not asynchronous
    assert resume["Parameters"] == {"FunctionName": REASON, "Payload": {"run.$": "$.run", "resume": True}}
    assert resume["ResultSelector"] == {"outcome.$": "$.Payload"}
    assert resume["ResultPath"] == "$.resumed"
    assert resume["Next"] == WAITING_AGAIN_STATE


def test_the_resumption_outlasts_the_reason_function_and_is_never_run_again_blindly(
    states: dict[str, Any],
) -> None:
    resume = states[RESUME_STATE]

    assert resume["TimeoutSeconds"] == RESUME_TIMEOUT_SECONDS == 960
    assert function_named("reason").timeout_s < RESUME_TIMEOUT_SECONDS
    # Only the Lambda service's own errors: the step may send a call a person approved.
    (retry,) = resume["Retry"]
    assert retry["ErrorEquals"] == list(LAMBDA_SERVICE_ERRORS)
    assert "States.ALL" not in json.dumps(resume["Retry"])
    # Any failure ends the execution; the run's own backstop ends the run.
    (catch,) = resume["Catch"]
    assert catch["ErrorEquals"] == ["States.ALL"]
    assert catch["Next"] == SETTLED_STATE
    assert catch["ResultPath"] not in ("$", "$.run", "$.resumed")


def test_a_resumption_that_waits_again_goes_back_to_the_wait_with_a_fresh_input(
    states: dict[str, Any],
) -> None:
    choice = states[WAITING_AGAIN_STATE]
    (rule,) = choice["Choices"]
    again = states[WAIT_AGAIN_STATE]

    assert _condition(rule) == ("$.resumed.outcome.outcome", "waiting")
    assert rule["Next"] == WAIT_AGAIN_STATE
    assert choice["Default"] == SETTLED_STATE
    # The execution's input again, as the wait reads it: the run and the new request's timeout.
    assert again["Parameters"] == {"run.$": "$.run", "timeout_seconds.$": "$.resumed.outcome.timeout_seconds"}
    assert "ResultPath" not in again and "Result" not in again
    assert again["Next"] == WAIT_STATE
    assert set(again["Parameters"]) == {f"{key}.$" for key in execution_input({"run_id": "r"}, 60)}


def test_the_json_is_the_definition() -> None:
    assert json.loads(state_machine_json(WAIT, SETTLE, REASON)) == state_machine_definition(
        WAIT, SETTLE, REASON
    )


@pytest.mark.parametrize("seconds", [0, MAX_TIMEOUT_SECONDS + 1])
def test_an_execution_waits_a_bounded_time(seconds: int) -> None:
    with pytest.raises(ValueError, match="waits 1 to"):
        execution_input({"run_id": "r"}, seconds)
