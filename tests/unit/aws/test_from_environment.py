"""``runtime_from_environment``: a deployed function's ports, built from the variables the CDK stack
sets (``parley.infrastructure.functions``), with the Step Functions and Scheduler clients made lazily."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from parley.aws.environment import runtime_from_environment
from parley.aws.eventbridge import EventBridgeScheduler
from parley.aws.stepfunctions import StepFunctionsWaits
from parley.infrastructure.functions import (
    SCHEDULE_GROUP_VARIABLE,
    SCHEDULER_ROLE_ARN_VARIABLE,
    STATE_MACHINE_ARN_VARIABLE,
    TIMER_FUNCTION_ARN_VARIABLE,
)
from parley.infrastructure.table import TABLE_NAME_VARIABLE

ENVIRONMENT = {
    TABLE_NAME_VARIABLE: "parley-dev-table",
    STATE_MACHINE_ARN_VARIABLE: "arn:aws:states:us-east-1:123456789012:stateMachine:parley-dev-runs",
    SCHEDULE_GROUP_VARIABLE: "parley-dev-timers",
    SCHEDULER_ROLE_ARN_VARIABLE: "arn:aws:iam::123456789012:role/parley-dev-scheduler",
    TIMER_FUNCTION_ARN_VARIABLE: "arn:aws:lambda:us-east-1:123456789012:function:parley-dev-timer",
}


@pytest.fixture
def made_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Under moto, with a region as Lambda gives one; records each boto3 client made."""
    from moto import mock_aws

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    made: list[str] = []
    real_client = boto3.client

    def recording_client(service: str, *args: Any, **kwargs: Any) -> Any:
        made.append(service)
        return real_client(service, *args, **kwargs)

    with mock_aws():
        monkeypatch.setattr(boto3, "client", recording_client)
        yield made


def test_the_adapters_are_built_from_the_stacks_variables(made_clients: list[str]) -> None:
    runtime = runtime_from_environment(ENVIRONMENT)

    assert isinstance(runtime.waits, StepFunctionsWaits)
    assert runtime.waits.state_machine_arn == ENVIRONMENT[STATE_MACHINE_ARN_VARIABLE]
    assert isinstance(runtime.scheduler, EventBridgeScheduler)
    assert (runtime.scheduler.group, runtime.scheduler.target_arn, runtime.scheduler.role_arn) == (
        "parley-dev-timers",
        ENVIRONMENT[TIMER_FUNCTION_ARN_VARIABLE],
        ENVIRONMENT[SCHEDULER_ROLE_ARN_VARIABLE],
    )
    # Every client waits for its first call: most events need neither Step Functions nor the scheduler,
    # and the mcp function's first requests no DynamoDB.
    assert made_clients == []
    assert runtime.definitions.client.meta.service_model.service_name == "dynamodb"
    assert made_clients == ["dynamodb"]


def test_a_lazy_client_is_made_on_its_first_call_and_kept(made_clients: list[str]) -> None:
    runtime = runtime_from_environment(ENVIRONMENT)
    assert runtime.scheduler is not None
    moto_scheduler = boto3.session.Session(region_name="us-east-1").client("scheduler")
    moto_scheduler.create_schedule_group(Name="parley-dev-timers")
    made_clients.clear()

    at = datetime.now(UTC) + timedelta(days=1)  # later than now: a schedule (work due now is invoked)
    runtime.scheduler.schedule("expire-r-1", at, {"work": "expire", "run": {"run_id": "r-1"}})
    runtime.scheduler.schedule("expire-r-2", at, {"work": "expire", "run": {"run_id": "r-2"}})

    assert made_clients == ["scheduler"]
    schedule = moto_scheduler.get_schedule(Name="expire-r-2", GroupName="parley-dev-timers")
    assert json.loads(schedule["Target"]["Input"])["run"] == {"run_id": "r-2"}


@pytest.mark.parametrize(
    "missing",
    [
        STATE_MACHINE_ARN_VARIABLE,
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
    ],
)
def test_without_its_variables_a_port_is_left_out(made_clients: list[str], missing: str) -> None:
    environment = {k: v for k, v in ENVIRONMENT.items() if k != missing}

    runtime = runtime_from_environment(environment)

    if missing == STATE_MACHINE_ARN_VARIABLE:
        assert runtime.waits is None and runtime.scheduler is not None
    else:
        assert runtime.scheduler is None and runtime.waits is not None
