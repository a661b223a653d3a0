"""The IAM evaluator and the call-to-request mapping of ``iam_check`` (issue 28), on their own: a call the
stack's tests would pass as allowed must be allowed for the right reason."""

from __future__ import annotations

from typing import Any

import pytest
from iam_check import IamRequest, allowed, iam_requests

TABLE = "arn:aws:dynamodb:eu-west-1:123456789012:table/parley"
ROLE = "arn:aws:iam::123456789012:role/schedules"


def requests(service: str, operation: str, params: dict[str, Any]) -> list[str]:
    return [
        str(r)
        for r in iam_requests(
            service,
            operation,
            params,
            token_machine=lambda token: f"arn:aws:states:eu-west-1:123456789012:stateMachine:{token}",
            secret_arn=lambda secret: f"arn:aws:secretsmanager:eu-west-1:123456789012:secret:{secret}-AbCdEf",
        )
    ]


def test_a_transaction_is_one_request_per_item_kind_and_table() -> None:
    items = [
        {"Put": {"TableName": "parley"}},
        {"Update": {"TableName": "parley"}},
        {"ConditionCheck": {"TableName": "parley"}},
    ]
    assert requests("dynamodb", "TransactWriteItems", {"TransactItems": items}) == [
        f"dynamodb:PutItem on {TABLE}",
        f"dynamodb:UpdateItem on {TABLE}",
        f"dynamodb:ConditionCheckItem on {TABLE}",
    ]


def test_a_query_of_an_index_is_on_the_index() -> None:
    assert requests("dynamodb", "Query", {"TableName": "parley", "IndexName": "gsi1"}) == [
        f"dynamodb:Query on {TABLE}/index/gsi1"
    ]


def test_a_schedule_passes_its_role_to_the_scheduler() -> None:
    params = {"Name": "expire-1", "GroupName": "timers", "Target": {"Arn": "x", "RoleArn": ROLE}}
    assert requests("scheduler", "CreateSchedule", params) == [
        "scheduler:CreateSchedule on arn:aws:scheduler:eu-west-1:123456789012:schedule/timers/expire-1",
        f"iam:PassRole on {ROLE} [iam:PassedToService=scheduler.amazonaws.com]",
    ]


def test_a_task_token_is_checked_on_the_machine_that_issued_it_and_invoke_is_invoke_function() -> None:
    assert requests("stepfunctions", "SendTaskSuccess", {"taskToken": "runs", "output": "{}"}) == [
        "states:SendTaskSuccess on arn:aws:states:eu-west-1:123456789012:stateMachine:runs"
    ]
    assert requests("lambda", "Invoke", {"FunctionName": "parley-dev-timer", "InvocationType": "Event"}) == [
        "lambda:InvokeFunction on arn:aws:lambda:eu-west-1:123456789012:function:parley-dev-timer"
    ]


def test_an_unknown_operation_is_refused_rather_than_guessed() -> None:
    with pytest.raises(KeyError, match="no IAM mapping"):
        requests("dynamodb", "ExecuteStatement", {})


def test_wildcards_conditions_and_an_explicit_deny() -> None:
    pass_role = {
        "Effect": "Allow",
        "Action": "iam:PassRole",
        "Resource": ROLE,
        "Condition": {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
    }
    to_scheduler = IamRequest("iam:PassRole", ROLE, {"iam:PassedToService": "scheduler.amazonaws.com"})
    to_states = IamRequest("iam:PassRole", ROLE, {"iam:PassedToService": "states.amazonaws.com"})
    assert allowed([pass_role], to_scheduler)
    assert not allowed([pass_role], to_states)
    assert not allowed([pass_role], IamRequest("iam:PassRole", ROLE))
    tables = {"Effect": "Allow", "Action": ["dynamodb:Get*"], "Resource": [TABLE, f"{TABLE}/index/*"]}
    assert allowed([tables], IamRequest("DynamoDB:GetItem", f"{TABLE}/index/gsi1"))  # actions: any case
    assert not allowed([tables], IamRequest("dynamodb:GetItem", TABLE.upper()))  # resources: exact case
    assert not allowed([tables], IamRequest("dynamodb:PutItem", TABLE))
    deny = {"Effect": "Deny", "Action": "*", "Resource": "*"}
    assert not allowed([tables, deny], IamRequest("dynamodb:GetItem", TABLE))


def test_what_the_evaluator_does_not_know_fails_it() -> None:
    with pytest.raises(ValueError, match="NotAction"):
        allowed(
            [{"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}], IamRequest("sqs:SendMessage", "x")
        )
    odd = {
        "Effect": "Allow",
        "Action": "*",
        "Resource": "*",
        "Condition": {"IpAddress": {"aws:SourceIp": "1.2.3.4"}},
    }
    with pytest.raises(ValueError, match="IpAddress"):
        allowed([odd], IamRequest("sqs:SendMessage", "x"))
