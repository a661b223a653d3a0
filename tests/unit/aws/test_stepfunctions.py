"""The Step Functions ``Waits`` adapter: against moto's Step Functions (executions stored, not run), and
against botocore's stubber for the errors moto does not make."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError
from botocore.stub import Stubber

from parley.aws.stepfunctions import StepFunctionsWaits
from parley.errors import Problem
from parley.infrastructure.state_machine import state_machine_json
from parley.ports.waiting import RunKey

RUN = RunKey("acme", "campaigns", "7f1c1a8e-3f3b-4c63-9a40-0b4b3bfcd2a1")
ACCOUNT = "123456789012"
LAMBDA = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:parley-test"


def _client() -> Any:
    return boto3.client(
        "stepfunctions",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@pytest.fixture
def moto_sfn() -> Iterator[tuple[Any, str]]:
    from moto import mock_aws

    with mock_aws():
        client = _client()
        arn = client.create_state_machine(
            name="parley-test-runs",
            definition=state_machine_json(f"{LAMBDA}-wait", f"{LAMBDA}-settle"),
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/runs",
            type="STANDARD",
        )["stateMachineArn"]
        yield client, arn


def test_start_names_the_execution_after_the_run_with_its_key_and_timeout(moto_sfn: tuple[Any, str]) -> None:
    client, arn = moto_sfn
    waits = StepFunctionsWaits(client, arn)

    waits.start(RUN, timeout_seconds=2 * 86400 + 60)

    execution = client.describe_execution(executionArn=waits.execution_arn(RUN))
    assert execution["name"] == RUN.execution_name
    assert execution["stateMachineArn"] == arn
    assert json.loads(execution["input"]) == {
        "run": {"org": "acme", "playbook": "campaigns", "run_id": RUN.run_id},
        "timeout_seconds": 172860,
    }


def test_starting_twice_is_harmless(moto_sfn: tuple[Any, str]) -> None:
    client, arn = moto_sfn
    waits = StepFunctionsWaits(client, arn)

    waits.start(RUN, timeout_seconds=3600)
    waits.start(RUN, timeout_seconds=3600)

    assert len(client.list_executions(stateMachineArn=arn)["executions"]) == 1


def test_starting_a_run_whose_execution_ended_is_harmless(moto_sfn: tuple[Any, str]) -> None:
    client, arn = moto_sfn
    waits = StepFunctionsWaits(client, arn)
    waits.start(RUN, timeout_seconds=3600)
    client.stop_execution(executionArn=waits.execution_arn(RUN))

    waits.start(RUN, timeout_seconds=3600)  # ExecutionAlreadyExists: the run has had its execution

    executions = client.list_executions(stateMachineArn=arn)["executions"]
    assert [e["status"] for e in executions] == ["ABORTED"]


def test_each_later_wait_of_a_run_is_an_execution_of_its_own(moto_sfn: tuple[Any, str]) -> None:
    client, arn = moto_sfn
    waits = StepFunctionsWaits(client, arn)

    for number in (1, 2, 3, 2):
        waits.start(RUN, timeout_seconds=3600, number=number)

    names = sorted(e["name"] for e in client.list_executions(stateMachineArn=arn)["executions"])
    assert names == [RUN.execution_name, f"{RUN.execution_name}-2", f"{RUN.execution_name}-3"]
    assert waits.execution_arn(RUN, 3).endswith(f":{RUN.execution_name}-3")
    assert all(len(name) <= 80 for name in names)


def test_a_timeout_outside_what_a_run_may_wait_is_refused(moto_sfn: tuple[Any, str]) -> None:
    client, arn = moto_sfn
    with pytest.raises(ValueError, match="waits 1 to"):
        StepFunctionsWaits(client, arn).start(RUN, timeout_seconds=0)


def test_execution_names_tell_playbooks_apart() -> None:
    """Callers choose run ids; the same id in two playbooks must name two executions."""
    other = RunKey("acme", "other-playbook", RUN.run_id)
    assert other.execution_name != RUN.execution_name
    assert RUN.execution_name.endswith(RUN.run_id) and len(RUN.execution_name) <= 80


def test_the_execution_arn_is_the_state_machines_with_the_run_name() -> None:
    waits = StepFunctionsWaits(_client(), f"arn:aws:states:eu-west-1:{ACCOUNT}:stateMachine:parley-dev-runs")

    assert waits.execution_arn(RUN) == (
        f"arn:aws:states:eu-west-1:{ACCOUNT}:execution:parley-dev-runs:{RUN.execution_name}"
    )


# -- tokens: what the calls send, and tokens that already ended ------------------------------------


def _stubbed() -> tuple[StepFunctionsWaits, Stubber]:
    client = _client()
    return StepFunctionsWaits(client, f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:runs"), Stubber(
        client
    )


def test_succeed_sends_the_ending_as_json() -> None:
    waits, stub = _stubbed()
    stub.add_response(
        "send_task_success", {}, {"taskToken": "token-1", "output": json.dumps({"ending": "expired"})}
    )
    with stub:
        waits.succeed("token-1", {"ending": "expired"})
    stub.assert_no_pending_responses()


@pytest.mark.parametrize("code", ["TaskTimedOut", "InvalidToken", "TaskDoesNotExist"])
def test_a_token_that_already_ended_is_not_an_error(code: str) -> None:
    waits, stub = _stubbed()
    stub.add_client_error("send_task_success", service_error_code=code, http_status_code=400)
    with stub:
        waits.succeed("spent", {"ending": "answered"})
    stub.assert_no_pending_responses()


# -- errors at the edge ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status"),
    [("ThrottlingException", 400), ("ExecutionLimitExceeded", 400), ("InternalFailure", 500), ("Other", 503)],
)
def test_overload_and_outages_are_unavailable(code: str, status: int) -> None:
    waits, stub = _stubbed()
    stub.add_client_error("start_execution", service_error_code=code, http_status_code=status)
    with stub, pytest.raises(Problem) as raised:
        waits.start(RUN, timeout_seconds=3600)

    assert raised.value.reason == "unavailable"
    assert raised.value.status == 503
    assert raised.value.__cause__ is not None


def test_other_errors_are_bugs_and_propagate() -> None:
    from botocore.exceptions import ClientError

    waits, stub = _stubbed()
    stub.add_client_error(
        "send_task_success", service_error_code="AccessDeniedException", http_status_code=400
    )
    with stub, pytest.raises(ClientError):
        waits.succeed("token-1", {})


class _Unreachable:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def start_execution(self, **kwargs: Any) -> None:
        raise self.error

    send_task_success = send_task_failure = start_execution


@pytest.mark.parametrize(
    "error",
    [EndpointConnectionError(endpoint_url="https://states"), ReadTimeoutError(endpoint_url="https://states")],
)
def test_an_unreachable_service_is_unavailable(error: Exception) -> None:
    waits = StepFunctionsWaits(_Unreachable(error), "arn:aws:states:us-east-1:1:stateMachine:x")  # type: ignore[arg-type]

    with pytest.raises(Problem) as raised:
        waits.succeed("token-1", {"ending": "expired"})

    assert raised.value.reason == "unavailable"
