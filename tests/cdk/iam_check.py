"""What IAM would say (issue 28, item 1): an AWS API call as the IAM requests it makes, and a role's
statements evaluated on them.

:func:`iam_requests` turns one boto3 call (its service, operation and parameters, as the function made
it) into what IAM authorizes: an action with the prefix IAM uses (``states``, not ``stepfunctions``;
``lambda:InvokeFunction`` for ``Invoke``) on the resource ARN the call touches (a table and its index;
the object of a bucket; each table of a transaction, one action per kind of item), and ``iam:PassRole``
with ``iam:PassedToService`` for a call that hands a role to a service (a schedule's target role, a
state machine's role). A task token names no resource: IAM authorizes ``SendTaskSuccess`` and
``SendTaskFailure`` on the state machine whose task issued the token (the Step Functions callback
pattern's policies name the state machine), so the caller says which machine each token came from.
(AWS's service authorization reference lists no resource type for these actions, which would mean
``"*"``; but what IAM evaluates is the machine's ARN: an AccessDenied for ``SendTaskFailure`` names
``…:stateMachine:<name>`` as its resource (NOAA-OWP/hydrovis#837), and a grant on the state machine was
found to work for a Lambda callback task (aws/aws-cdk#8486). Only a real account settles it.)

:func:`allowed` evaluates identity-policy statements as IAM does for one principal: an explicit
``Deny`` wins, else some ``Allow`` must match the action (``*`` and ``?`` wildcards, case-insensitive),
the resource (wildcards, case-sensitive) and every condition (``StringEquals``, ``StringLike``,
``ArnEquals``, ``ArnLike`` and their ``…IfExists``). A statement with ``NotAction``/``NotResource`` or
another condition operator fails the evaluation instead of being guessed at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Final
from urllib.parse import urlparse

from stack_names import ACCOUNT, PARTITION, REGION


@dataclass(frozen=True)
class IamRequest:
    """One thing IAM authorizes: ``action`` on ``resource`` with the request's condition keys."""

    action: str
    resource: str
    context: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        extra = "".join(f" [{key}={value}]" for key, value in self.context.items())
        return f"{self.action} on {self.resource}{extra}"


def _arn(service: str, resource: str) -> str:
    return f"arn:{PARTITION}:{service}:{REGION}:{ACCOUNT}:{resource}"


def _table(name: str) -> str:
    return name if name.startswith("arn:") else _arn("dynamodb", f"table/{name}")


def _function(name: str) -> str:
    if name.startswith("arn:"):
        return name
    base, _, qualifier = name.partition(":")
    return _arn("lambda", f"function:{base}" + (f":{qualifier}" if qualifier else ""))


def _queue(url: str) -> str:
    path = urlparse(url).path.strip("/").split("/")
    return _arn("sqs", path[-1])


def _parameter(name: str) -> str:
    return _arn("ssm", f"parameter{name}" if name.startswith("/") else f"parameter/{name}")


def _schedule(params: Mapping[str, Any]) -> str:
    return _arn("scheduler", f"schedule/{params.get('GroupName', 'default')}/{params['Name']}")


def _model(model_id: str) -> str:
    if model_id.startswith("arn:"):
        return model_id
    if model_id.split(".", 1)[0] in ("us", "eu", "apac", "global", "jp", "au", "ca"):
        return _arn("bedrock", f"inference-profile/{model_id}")
    return f"arn:{PARTITION}:bedrock:{REGION}::foundation-model/{model_id}"


def _execution_machine(execution_arn: str) -> str:
    """``…:execution:<machine>:<name>`` → the machine's ARN (IAM checks some execution actions there)."""
    parts = execution_arn.split(":")
    return ":".join([*parts[:5], "stateMachine", parts[6]])


_DYNAMO_TRANSACT: Final = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
_DYNAMO_TABLE_OPERATIONS: Final = frozenset(
    {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Scan", "DescribeTable", "Query"}
)
_S3_OBJECT: Final = {
    "GetObject": "GetObject",
    "HeadObject": "GetObject",
    "PutObject": "PutObject",
    "DeleteObject": "DeleteObject",
}
_SQS_QUEUE: Final = {
    "SendMessage": "SendMessage",
    "SendMessageBatch": "SendMessage",
    "ReceiveMessage": "ReceiveMessage",
    "DeleteMessage": "DeleteMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibility": "ChangeMessageVisibility",
    "GetQueueAttributes": "GetQueueAttributes",
}
#: Step Functions operations whose resource is the ``stateMachineArn`` parameter.
_STATES_ON_MACHINE: Final = frozenset(
    {
        "StartExecution",
        "StartSyncExecution",
        "DescribeStateMachine",
        "UpdateStateMachine",
        "PublishStateMachineVersion",
        "ListStateMachineVersions",
        "DeleteStateMachine",
        "ListExecutions",
    }
)
_STATES_ON_EXECUTION: Final = frozenset(
    {"DescribeExecution", "GetExecutionHistory", "StopExecution", "DescribeStateMachineForExecution"}
)
_TASK_RESPONSES: Final = frozenset({"SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat"})


def iam_requests(
    service: str,
    operation: str,
    params: Mapping[str, Any],
    *,
    token_machine: Callable[[str], str],
    secret_arn: Callable[[str], str],
) -> list[IamRequest]:
    """What IAM authorizes for one call; ``service`` is botocore's service name (``stepfunctions``).

    ``token_machine(token)`` names the state machine whose task issued a task token,
    ``secret_arn(secret_id)`` the ARN of a secret named by name or ARN. An operation this function
    does not know raises ``KeyError``: a new kind of call is mapped here on purpose, never guessed.
    """
    if service == "dynamodb":
        if operation in _DYNAMO_TABLE_OPERATIONS:
            table = _table(params["TableName"])
            index = params.get("IndexName")
            resource = f"{table}/index/{index}" if index else table
            return [IamRequest(f"dynamodb:{operation}", resource)]
        if operation in ("TransactWriteItems", "TransactGetItems"):
            found = []
            for item in params["TransactItems"]:
                ((kind, body),) = item.items()
                found.append(IamRequest(f"dynamodb:{_DYNAMO_TRANSACT[kind]}", _table(body["TableName"])))
            return found
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [IamRequest(f"dynamodb:{operation}", _table(name)) for name in params["RequestItems"]]
    if service == "s3" and operation in _S3_OBJECT:
        return [
            IamRequest(
                f"s3:{_S3_OBJECT[operation]}", f"arn:{PARTITION}:s3:::{params['Bucket']}/{params['Key']}"
            )
        ]
    if service == "sqs":
        if operation in _SQS_QUEUE:
            return [IamRequest(f"sqs:{_SQS_QUEUE[operation]}", _queue(params["QueueUrl"]))]
        if operation == "GetQueueUrl":
            return [IamRequest("sqs:GetQueueUrl", _arn("sqs", params["QueueName"]))]
    if service == "lambda" and operation in ("Invoke", "InvokeAsync"):
        name = params["FunctionName"]
        qualifier = params.get("Qualifier")
        return [IamRequest("lambda:InvokeFunction", _function(f"{name}:{qualifier}" if qualifier else name))]
    if service == "stepfunctions":
        if operation in _STATES_ON_MACHINE:
            found = [IamRequest(f"states:{operation}", params["stateMachineArn"])]
            if operation == "UpdateStateMachine" and params.get("roleArn"):
                found.append(_pass_role(params["roleArn"], "states.amazonaws.com"))
            return found
        if operation in _STATES_ON_EXECUTION:
            return [IamRequest(f"states:{operation}", params["executionArn"])]
        if operation == "CreateStateMachine":
            return [
                IamRequest("states:CreateStateMachine", _arn("states", f"stateMachine:{params['name']}")),
                _pass_role(params["roleArn"], "states.amazonaws.com"),
            ]
        if operation in _TASK_RESPONSES:
            return [IamRequest(f"states:{operation}", token_machine(params["taskToken"]))]
    if service == "scheduler":
        if operation in ("CreateSchedule", "UpdateSchedule"):
            return [
                IamRequest(f"scheduler:{operation}", _schedule(params)),
                _pass_role(params["Target"]["RoleArn"], "scheduler.amazonaws.com"),
            ]
        if operation in ("DeleteSchedule", "GetSchedule"):
            return [IamRequest(f"scheduler:{operation}", _schedule(params))]
    if service == "ssm" and operation == "GetParameter":
        return [IamRequest("ssm:GetParameter", _parameter(params["Name"]))]
    if service == "secretsmanager" and operation in ("GetSecretValue", "PutSecretValue", "DeleteSecret"):
        return [IamRequest(f"secretsmanager:{operation}", secret_arn(params["SecretId"]))]
    if service == "secretsmanager" and operation == "CreateSecret":
        return [IamRequest("secretsmanager:CreateSecret", secret_arn(params["Name"]))]
    if service == "bedrock" and operation == "ListFoundationModels":
        return [IamRequest("bedrock:ListFoundationModels", "*")]
    if service == "bedrock-runtime":
        streamed = operation in ("ConverseStream", "InvokeModelWithResponseStream")
        action = "bedrock:InvokeModelWithResponseStream" if streamed else "bedrock:InvokeModel"
        return [IamRequest(action, _model(params["modelId"]))]
    raise KeyError(f"{service}.{operation}: no IAM mapping in tests/cdk/iam_check.py (add one)")


def _pass_role(role_arn: str, service_principal: str) -> IamRequest:
    return IamRequest("iam:PassRole", role_arn, {"iam:PassedToService": service_principal})


# -- evaluation ------------------------------------------------------------------------------------------


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _string_equals(actual: str, wanted: str) -> bool:
    return actual == wanted


def _string_like(actual: str, wanted: str) -> bool:
    return fnmatchcase(actual, wanted)


_OPERATORS: Final[dict[str, Callable[[str, str], bool]]] = {
    "StringEquals": _string_equals,
    "StringLike": _string_like,
    "ArnEquals": _string_equals,
    "ArnLike": _string_like,
}


def _conditions_hold(conditions: Mapping[str, Any], context: Mapping[str, str]) -> bool:
    for operator, tests in conditions.items():
        if_exists = operator.endswith("IfExists")
        compare = _OPERATORS.get(operator.removesuffix("IfExists"))
        if compare is None:
            raise ValueError(f"condition operator {operator} is not evaluated by tests/cdk/iam_check.py")
        for key, wanted in tests.items():
            actual = context.get(key)
            if actual is None:
                if if_exists:
                    continue
                return False
            if not any(compare(actual, str(value)) for value in _as_list(wanted)):
                return False
    return True


def statement_matches(statement: Mapping[str, Any], request: IamRequest) -> bool:
    """Whether one statement (its intrinsics resolved) applies to ``request``."""
    if "NotAction" in statement or "NotResource" in statement or "NotPrincipal" in statement:
        raise ValueError(f"NotAction/NotResource are not evaluated by tests/cdk/iam_check.py: {statement}")
    actions = [str(a).lower() for a in _as_list(statement["Action"])]
    if not any(fnmatchcase(request.action.lower(), action) for action in actions):
        return False
    if not any(fnmatchcase(request.resource, str(r)) for r in _as_list(statement["Resource"])):
        return False
    return _conditions_hold(statement.get("Condition", {}), request.context)


def allowed(statements: Iterable[Mapping[str, Any]], request: IamRequest) -> bool:
    """IAM's answer for one principal's identity policies: an explicit Deny wins, else an Allow must match."""
    statements = list(statements)
    if any(s.get("Effect") == "Deny" and statement_matches(s, request) for s in statements):
        return False
    return any(s.get("Effect") == "Allow" and statement_matches(s, request) for s in statements)


def granted_actions(statements: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every action the statements allow, as written (wildcards kept)."""
    return {str(a) for s in statements if s.get("Effect") == "Allow" for a in _as_list(s["Action"])}
