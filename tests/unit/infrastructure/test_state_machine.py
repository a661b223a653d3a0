"""The run's state machine as ASL (``parley.infrastructure.state_machine``): the execution only waits.
Every ending is written before the token is answered, so a wait answered by anything ends the execution
in its one state; only a wait that failed (its own timeout: the backstop) goes on to the settle step.
What it does when run is checked in moto (``tests/unit/local/test_executor``); what CDK deploys, in
``tests/cdk/test_stack``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from parley.infrastructure.state_machine import (
    INVOKE_RESOURCE,
    LAMBDA_SERVICE_ERRORS,
    MAX_TIMEOUT_SECONDS,
    SETTLE_ENDING_STATE,
    WAIT_FOR_TOKEN_RESOURCE,
    WAIT_STATE,
    execution_input,
    state_machine_definition,
    state_machine_json,
)

WAIT, SETTLE = "arn:wait", "arn:settle"


@pytest.fixture
def states() -> dict[str, Any]:
    definition = state_machine_definition(WAIT, SETTLE)
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


def test_two_states_the_wait_ends_the_execution_and_only_its_failure_settles(states: dict[str, Any]) -> None:
    def targets(state: dict[str, Any]) -> set[str]:
        nexts = {state.get("Next")} | {c["Next"] for c in state.get("Catch", [])}
        return {n for n in nexts if n is not None}

    assert {name: (state["Type"], targets(state), state.get("End")) for name, state in states.items()} == {
        WAIT_STATE: ("Task", {SETTLE_ENDING_STATE}, True),
        SETTLE_ENDING_STATE: ("Task", set(), True),
    }


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
    (retry,) = wait["Retry"]
    assert retry["ErrorEquals"] == list(LAMBDA_SERVICE_ERRORS)
    assert wait["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": SETTLE_ENDING_STATE}
    ]


def test_the_backstop_settles_from_the_store_and_is_retried(states: dict[str, Any]) -> None:
    settle = states[SETTLE_ENDING_STATE]

    assert settle["Resource"] == INVOKE_RESOURCE
    assert settle["Parameters"] == {
        "FunctionName": SETTLE,
        "Payload": {"run.$": "$.run", "error.$": "$.error"},
    }
    assert settle["ResultSelector"] == {"outcome.$": "$.Payload"}
    assert settle["ResultPath"] == "$.settled"
    assert settle["Retry"][-1]["ErrorEquals"] == ["States.ALL"]  # settling is idempotent


def test_the_json_is_the_definition() -> None:
    assert json.loads(state_machine_json(WAIT, SETTLE)) == state_machine_definition(WAIT, SETTLE)


@pytest.mark.parametrize("seconds", [0, MAX_TIMEOUT_SECONDS + 1])
def test_an_execution_waits_a_bounded_time(seconds: int) -> None:
    with pytest.raises(ValueError, match="waits 1 to"):
        execution_input({"run_id": "r"}, seconds)
