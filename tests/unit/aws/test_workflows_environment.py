"""``runtime_from_environment`` builds the workflows' port from the variables the stack sets, without a
client until its first call, sharing the waits' Step Functions client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from parley.aws.environment import runtime_from_environment, workflows_from_environment
from parley.aws.stepfunctions import StepFunctionsWaits
from parley.aws.workflows import StepFunctionsWorkflows
from parley.infrastructure.functions import (
    STATE_MACHINE_ARN_VARIABLE,
    WORKFLOW_FUNCTION_ARN_VARIABLE,
    WORKFLOW_PREFIX_VARIABLE,
    WORKFLOW_ROLE_ARN_VARIABLE,
)
from parley.infrastructure.table import TABLE_NAME_VARIABLE

WORKFLOWS = {
    WORKFLOW_PREFIX_VARIABLE: "parley-dev-",
    WORKFLOW_ROLE_ARN_VARIABLE: "arn:aws:iam::123456789012:role/parley-dev-WorkflowsRole",
    WORKFLOW_FUNCTION_ARN_VARIABLE: "arn:aws:lambda:us-east-1:123456789012:function:parley-dev-workflow",
}
ENVIRONMENT = {
    TABLE_NAME_VARIABLE: "parley-dev-table",
    STATE_MACHINE_ARN_VARIABLE: "arn:aws:states:us-east-1:123456789012:stateMachine:parley-dev-runs",
    **WORKFLOWS,
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


def test_the_workflows_port_is_built_from_the_stacks_variables_without_a_client(
    made_clients: list[str],
) -> None:
    runtime = runtime_from_environment(ENVIRONMENT)
    workflows = runtime.workflows

    assert isinstance(workflows, StepFunctionsWorkflows)
    assert workflows.prefix == "parley-dev-"
    assert workflows.role_arn == WORKFLOWS[WORKFLOW_ROLE_ARN_VARIABLE]
    assert workflows.workflow_function_arn == WORKFLOWS[WORKFLOW_FUNCTION_ARN_VARIABLE]
    assert workflows.state_machine_arn("wf-x") == (
        "arn:aws:states:us-east-1:123456789012:stateMachine:parley-dev-wf-x"
    )
    # No client at cold start: most events never touch Step Functions.
    assert made_clients == []


def test_the_waits_and_the_workflows_share_one_client_made_on_first_use(made_clients: list[str]) -> None:
    runtime = runtime_from_environment(ENVIRONMENT)
    assert isinstance(runtime.waits, StepFunctionsWaits)
    assert isinstance(runtime.workflows, StepFunctionsWorkflows)

    assert runtime.waits._client is runtime.workflows._client
    runtime.workflows.describe_execution(
        "arn:aws:states:us-east-1:123456789012:execution:parley-dev-wf-x:run-1"
    )
    runtime.workflows.describe_execution(
        "arn:aws:states:us-east-1:123456789012:execution:parley-dev-wf-x:run-2"
    )
    assert made_clients == ["stepfunctions"]


@pytest.mark.parametrize("missing", sorted(WORKFLOWS))
def test_without_any_of_its_variables_the_port_is_left_out(made_clients: list[str], missing: str) -> None:
    environment = {k: v for k, v in ENVIRONMENT.items() if k != missing}

    runtime = runtime_from_environment(environment)

    assert runtime.workflows is None
    assert runtime.waits is not None
    assert workflows_from_environment({**WORKFLOWS, missing: ""}) is None


def test_a_workflow_function_arn_that_is_not_one_is_a_deployment_mistake() -> None:
    with pytest.raises(ValueError, match="Lambda function"):
        workflows_from_environment({**WORKFLOWS, WORKFLOW_FUNCTION_ARN_VARIABLE: "parley-dev-workflow"})
