"""The deploy rehearsed on moto (issue 28, item 5; docs/deploy-rehearsal.md): the dev stack's synthesized
template created in moto's CloudFormation from its published assets, and one inbox request run and
answered through the created table, state machine and functions.

The stack is created once for the module (``rehearsal``): about 5 s after the session's synth. What moto
cannot create, and what the rehearsal puts in its place, is ``rehearsal``'s docstring.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stage
from conftest import Synthesized
from rehearsal import (
    ACCOUNT,
    MOTO_CANNOT_CREATE,
    PLACEHOLDER_PREFIX,
    REGION,
    Deployment,
    MotoAccount,
    deploy,
    https_documents,
    invoke,
    moto_account,
)

from parley.config import OPERATOR_CONFIG_PARAMETER_VARIABLE
from parley.infrastructure.functions import (
    CONTENT_BUCKET_VARIABLE,
    FUNCTIONS,
    REASON_FUNCTION_ARN_VARIABLE,
    SCHEDULE_DEAD_LETTER_ARN_VARIABLE,
    SCHEDULE_GROUP_VARIABLE,
    SCHEDULER_ROLE_ARN_VARIABLE,
    STATE_MACHINE_ARN_VARIABLE,
    TIMER_FUNCTION_ARN_VARIABLE,
    TIMER_QUEUE_URL_VARIABLE,
    WORKFLOW_FUNCTION_ARN_VARIABLE,
    WORKFLOW_ROLE_ARN_VARIABLE,
)
from parley.infrastructure.table import TABLE_NAME_VARIABLE

pytestmark = pytest.mark.cdk

ROOT = Path(__file__).resolve().parents[2]
STACK = "parley-dev"
#: The operator's first edit after a deploy (docs/deploy.md): principals allowed to write the playbook
#: (``dev``, named by the tests' events, and the pool's user once it is made).
OPERATOR_CONFIG = """principals:
  - {{ id: dev, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
  - {{ id: "{user}", grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers: []
"""
RUN_ID = "0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"
#: Limits AWS applies and moto does not: a template from S3, a stack's resources, a function's variables.
CLOUDFORMATION_TEMPLATE_BYTES = 1_000_000
CLOUDFORMATION_RESOURCES = 500
LAMBDA_ENVIRONMENT_BYTES = 4096
#: How long the rehearsal waits for moto's state machine to reach a state (a bound, never asserted on).
PATIENCE_SECONDS = 60.0


@pytest.fixture(scope="module")
def rehearsal(
    synthesized: Synthesized, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[MotoAccount, Deployment]]:
    outdir = Path(str(Stage.of(synthesized.stacks["dev"]).outdir))  # type: ignore[union-attr]
    assert synthesized.stacks["dev"].stack_name == STACK
    with moto_account(tmp_path_factory.mktemp("functions")) as aws:
        yield aws, deploy(aws, outdir, STACK)


def api_event(name: str, principal: str = "dev") -> dict[str, Any]:
    """An API Gateway proxy event of ``events/api`` as the stage's authorizer lets it through."""
    event: dict[str, Any] = json.loads((ROOT / "events" / "api" / f"{name}.json").read_text("utf-8"))
    event["requestContext"]["authorizer"] = {"principalId": principal}
    return event


def created_arn(aws: MotoAccount, deployment: Deployment, kind: str, construct: str) -> str:
    """The ARN of the one resource of ``kind`` the stack created whose logical id starts ``construct``."""
    (physical,) = [
        p for logical_id, p in deployment.of_type(kind).items() if logical_id.startswith(construct)
    ]
    if kind == "AWS::Lambda::Function":
        arn: str = aws.client("lambda").get_function(FunctionName=physical)["Configuration"]["FunctionArn"]
    elif kind == "AWS::IAM::Role":
        arn = aws.client("iam").get_role(RoleName=physical)["Role"]["Arn"]
    else:
        arn = aws.client("sqs").get_queue_attributes(QueueUrl=physical, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
    return arn


def eventually(check: Callable[[], Any], what: str) -> Any:
    """``check()``'s first truthy value, polled (moto's state machine runs in a thread of its own)."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            assert found, f"never happened: {what}"
            return found
        time.sleep(0.1)


# -- what moto creates ----------------------------------------------------------------------------------


def test_the_stack_is_created_but_for_the_types_moto_does_not_model(
    rehearsal: tuple[MotoAccount, Deployment], dev: Any
) -> None:
    _aws, deployment = rehearsal
    assert deployment.status == "CREATE_COMPLETE", deployment.reason
    template = dev.to_json()["Resources"]
    skipped = {logical_id for ids in deployment.adapted.skipped.values() for logical_id in ids}
    not_created = {
        logical_id: (resource["Type"], deployment.created.get(logical_id))
        for logical_id, resource in template.items()
        if logical_id not in skipped
        and deployment.created.get(logical_id, ("", "", ""))[2] != "CREATE_COMPLETE"
    }
    assert not not_created, f"moto did not create: {not_created}"
    # The list is docs/deploy-rehearsal.md's: a type moto learns, or one the stack gains, changes both.
    assert set(deployment.adapted.skipped) == set(MOTO_CANNOT_CREATE), (
        "the types moto's CloudFormation skips changed: update MOTO_CANNOT_CREATE and the doc; skipped "
        f"{sorted(deployment.adapted.skipped)}"
    )
    assert len(template) == len(deployment.created) + len(skipped)
    # CloudFormation's own limits, which moto does not apply: a template read from S3 is at most 1 MB, and
    # a stack has at most 500 resources.
    assert len(json.dumps(dev.to_json()).encode("utf-8")) < CLOUDFORMATION_TEMPLATE_BYTES
    assert len(template) <= CLOUDFORMATION_RESOURCES
    # Every output is a value (the API's URLs name the stage, the issuer the stand-in pool).
    assert deployment.outputs.keys() == dev.to_json()["Outputs"].keys()
    for key, value in deployment.outputs.items():
        assert value and "None" not in value and PLACEHOLDER_PREFIX not in value, (key, value)
    assert deployment.outputs["ApiUrl"].endswith(".execute-api.us-east-1.amazonaws.com/dev/v1")


def test_every_function_is_created_with_its_code_layer_and_an_environment_naming_created_resources(
    rehearsal: tuple[MotoAccount, Deployment],
) -> None:
    aws, deployment = rehearsal
    functions = aws.client("lambda")
    (layer_id,) = deployment.of_type("AWS::Lambda::LayerVersion")
    checks: dict[str, Callable[[str], Any]] = {
        TABLE_NAME_VARIABLE: lambda name: aws.client("dynamodb").describe_table(TableName=name),
        CONTENT_BUCKET_VARIABLE: lambda name: aws.client("s3").head_bucket(Bucket=name),
        OPERATOR_CONFIG_PARAMETER_VARIABLE: lambda name: aws.client("ssm").get_parameter(Name=name),
        STATE_MACHINE_ARN_VARIABLE: lambda arn: aws.client("stepfunctions").describe_state_machine(
            stateMachineArn=arn
        ),
        SCHEDULE_GROUP_VARIABLE: lambda name: aws.client("scheduler").get_schedule_group(Name=name),
        SCHEDULER_ROLE_ARN_VARIABLE: lambda arn: aws.client("iam").get_role(RoleName=arn.split("/")[-1]),
        WORKFLOW_ROLE_ARN_VARIABLE: lambda arn: aws.client("iam").get_role(RoleName=arn.split("/")[-1]),
        TIMER_FUNCTION_ARN_VARIABLE: lambda arn: functions.get_function(FunctionName=arn),
        REASON_FUNCTION_ARN_VARIABLE: lambda arn: functions.get_function(FunctionName=arn),
        WORKFLOW_FUNCTION_ARN_VARIABLE: lambda arn: functions.get_function(FunctionName=arn),
        TIMER_QUEUE_URL_VARIABLE: lambda url: aws.client("sqs").get_queue_attributes(QueueUrl=url),
        SCHEDULE_DEAD_LETTER_ARN_VARIABLE: lambda arn: aws.client("sqs").get_queue_url(
            QueueName=arn.split(":")[-1], QueueOwnerAWSAccountId=ACCOUNT
        ),
    }
    checked: set[str] = set()
    for definition in FUNCTIONS:
        name = f"{STACK}-{definition.name}"
        configuration = functions.get_function_configuration(FunctionName=name)
        assert configuration["Handler"] == definition.lambda_handler
        assert configuration["Runtime"] == "python3.12"
        (layer,) = configuration["Layers"]  # the layer version the stack created
        assert layer["Arn"].split(":")[6].startswith(f"{STACK}-{layer_id}-"), layer
        environment: dict[str, str] = configuration["Environment"]["Variables"]
        # Lambda refuses more than 4 KB of variables (names and values), which moto does not check; the
        # margin is for a real account's longer region names and physical ids.
        size = sum(len(key.encode()) + len(value.encode()) for key, value in environment.items())
        assert size < LAMBDA_ENVIRONMENT_BYTES * 0.8, (name, size)
        for variable, value in environment.items():
            assert "None" not in value and PLACEHOLDER_PREFIX not in value, (name, variable, value)
            if value.startswith("arn:"):  # resolved to this account and region (IAM's have none)
                assert value.split(":")[3] in (REGION, "") and value.split(":")[4] == ACCOUNT, value
            if variable in checks:
                checks[variable](value)  # names a resource the stack created (raises if not)
                checked.add(variable)
    assert checked == set(checks)


# -- one inbox request, answered --------------------------------------------------------------------------


def test_an_inbox_request_is_answered_through_the_created_table_state_machine_and_functions(
    rehearsal: tuple[MotoAccount, Deployment],
) -> None:
    aws, deployment = rehearsal
    aws.client("ssm").put_parameter(
        Name=deployment.outputs["OperatorConfigParameter"],
        Value=OPERATOR_CONFIG.format(user="nobody-yet"),
        Type="String",
        Overwrite=True,
    )

    created = invoke(aws, f"{STACK}-api", api_event("create_definition"))
    assert created["statusCode"] == 201, created["body"]
    started = invoke(aws, f"{STACK}-api", api_event("run_definition"))
    assert started["statusCode"] == 200, started["body"]
    assert json.loads(started["body"])["status"] == "started"

    # The created state machine runs: its wait task invokes the created wait function with a token,
    # which the function keeps on the request; the run's expiry is a schedule in the created group.
    stepfunctions = aws.client("stepfunctions")
    state_machine = deployment.outputs["StateMachineArn"]
    (execution,) = eventually(
        lambda: stepfunctions.list_executions(stateMachineArn=state_machine)["executions"], "an execution"
    )
    parked = eventually(
        lambda: [i for i in aws.runner.invocations if i.function_name == f"{STACK}-wait"], "the wait's call"
    )
    assert parked[0].error is None, parked[0].logs
    assert parked[0].result["outcome"] == "parked"
    assert parked[0].event["run"]["run_id"] == RUN_ID and parked[0].event["token"]
    assert stepfunctions.describe_execution(executionArn=execution["executionArn"])["status"] == "RUNNING"
    scheduler = aws.client("scheduler")
    (schedule,) = scheduler.list_schedules(GroupName=f"{STACK}-timers")["Schedules"]
    # It would invoke the created timer function as the created schedules' role, its failures going to
    # the created dead-letter queue (moto never fires it: docs/deploy-rehearsal.md).
    target = scheduler.get_schedule(GroupName=f"{STACK}-timers", Name=schedule["Name"])["Target"]
    assert target["Arn"] == created_arn(aws, deployment, "AWS::Lambda::Function", "ComputeTimerFunction")
    assert target["RoleArn"] == created_arn(aws, deployment, "AWS::IAM::Role", "SchedulingRole")
    assert target["DeadLetterConfig"]["Arn"] == created_arn(
        aws, deployment, "AWS::SQS::Queue", "DeadLettersScheduleFailures"
    )

    answered = invoke(aws, f"{STACK}-api", api_event("answer_interaction"))
    assert answered["statusCode"] == 200, answered["body"]
    assert json.loads(answered["body"])["answered_by"] == "dev"

    # The answer's SendTaskSuccess ends the created execution; the run succeeded in the created table.
    ended = eventually(
        lambda: (
            found
            if (found := stepfunctions.describe_execution(executionArn=execution["executionArn"]))["status"]
            != "RUNNING"
            else None
        ),
        "the execution's end",
    )
    assert ended["status"] == "SUCCEEDED"
    assert json.loads(ended["output"]) == {"ending": "answered"}
    items = aws.client("dynamodb").scan(TableName=deployment.outputs["TableName"])["Items"]
    runs = [item for item in items if item.get("run_id", {}).get("S") == RUN_ID and "status" in item]
    assert runs and {item["status"]["S"] for item in runs} == {"succeeded"}, runs
    run = invoke(aws, f"{STACK}-api", api_event("get_run"))
    assert json.loads(run["body"])["status"] == "succeeded"
    assert json.loads(run["body"])["output"] == {"verdict": "approve", "note": "Ready to launch."}
    assert scheduler.list_schedules(GroupName=f"{STACK}-timers")["Schedules"] == []


# -- the authorizer ---------------------------------------------------------------------------------------


def test_the_authorizer_lets_a_token_of_the_stacks_pool_through_to_the_api_as_its_principal(
    rehearsal: tuple[MotoAccount, Deployment], tmp_path: Path
) -> None:
    aws, deployment = rehearsal
    environment = aws.client("lambda").get_function_configuration(FunctionName=f"{STACK}-authorizer")[
        "Environment"
    ]["Variables"]
    pool_id, client_id = deployment.outputs["UserPoolId"], deployment.outputs["UserPoolClientId"]
    assert environment["PARLEY_JWT_ISSUER"] == deployment.outputs["TokenIssuer"]
    assert environment["PARLEY_JWT_AUDIENCE"] == client_id
    cognito = aws.client("cognito-idp")
    cognito.admin_create_user(UserPoolId=pool_id, Username="maria", TemporaryPassword="Temporary-Pass-1!")
    cognito.admin_set_user_password(
        UserPoolId=pool_id, Username="maria", Password="Rehearsal-Pass-1!", Permanent=True
    )
    tokens = cognito.initiate_auth(
        ClientId=client_id,
        AuthFlow="USER_PASSWORD_AUTH",
        AuthParameters={"USERNAME": "maria", "PASSWORD": "Rehearsal-Pass-1!"},
    )["AuthenticationResult"]
    user = cognito.admin_get_user(UserPoolId=pool_id, Username="maria")
    sub = next(a["Value"] for a in user["UserAttributes"] if a["Name"] == "sub")
    keys_path = f"/{pool_id}/.well-known/jwks.json"
    with urllib.request.urlopen(f"{aws.endpoint}{keys_path}", timeout=10) as response:  # moto's http
        keys = response.read()

    api_id = deployment.outputs["ApiUrl"].split("//")[1].split(".")[0]
    method_arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:{api_id}/dev/GET/v1/orgs/acme/playbooks/campaigns"
    with https_documents({keys_path: keys}, tmp_path) as (base_url, certificate):
        aws.runner.override[f"{STACK}-authorizer"] = {
            "PARLEY_JWT_JWKS_URL": base_url + keys_path,
            "SSL_CERT_FILE": str(certificate),
        }
        try:
            allowed = invoke(
                aws,
                f"{STACK}-authorizer",
                {
                    "type": "TOKEN",
                    "authorizationToken": f"Bearer {tokens['IdToken']}",
                    "methodArn": method_arn,
                },
            )
            header, payload, signature = tokens["IdToken"].split(".")
            refused = invoke(
                aws,
                f"{STACK}-authorizer",
                {
                    "type": "TOKEN",
                    "authorizationToken": f"Bearer {header}.{payload}.{signature[:-4]}AAAA",
                    "methodArn": method_arn,
                },
            )
        finally:
            del aws.runner.override[f"{STACK}-authorizer"]
    assert allowed["principalId"] == sub
    (statement,) = allowed["policyDocument"]["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Resource"] == f"arn:aws:execute-api:{REGION}:{ACCOUNT}:{api_id}/dev/*"
    assert refused["policyDocument"]["Statement"][0]["Effect"] == "Deny"

    # API Gateway hands the api function the authorizer's principal; the operator names it.
    aws.client("ssm").put_parameter(
        Name=deployment.outputs["OperatorConfigParameter"],
        Value=OPERATOR_CONFIG.format(user=sub),
        Type="String",
        Overwrite=True,
    )
    listed = invoke(aws, f"{STACK}-api", api_event("list_definitions", principal=allowed["principalId"]))
    assert listed["statusCode"] == 200, listed["body"]
    assert "definitions" in json.loads(listed["body"])
