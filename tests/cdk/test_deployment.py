"""What the stack adds to be deployed and trusted (issue 7): the JWT authorizer on every method, the
token issuer, the operator configuration's parameter, who may read which secret and the content bucket,
the dead-letter queues, the alarms; in both stages and with every context option (``conftest``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from cfn import (
    TIMER_ARN,
    as_list,
    function_named_in,
    function_statements,
    get_att,
    only,
    properties_of,
    render,
    resource,
    resources_for,
    role_of,
    who_may,
)
from conftest import NAMED_SECRET_ARN, OIDC_AUDIENCES, OIDC_ISSUER, OIDC_JWKS, OPERATOR_CONFIG

from parley.authorizer import AUDIENCE_VARIABLE, ISSUER_VARIABLE, JWKS_URL_VARIABLE, PRINCIPAL_CLAIM_VARIABLE
from parley.config import OPERATOR_CONFIG_PARAMETER_VARIABLE
from parley.errors import PROBLEM_TYPE_BASE
from parley.infrastructure.functions import (
    AUTHORIZER,
    CONTENT_BUCKET_VARIABLE,
    FUNCTIONS,
    MAY_KEEP_CONNECTION_SECRETS,
    MAY_KEEP_CONTENT,
    MAY_READ_CONNECTION_SECRETS,
    MAY_READ_MODEL_SECRETS,
    MAY_READ_TOOL_SECRETS,
    SCHEDULE_DEAD_LETTER_ARN_VARIABLE,
    WITHOUT_RUNTIME,
    function_named,
)
from parley_cdk.api import AUTHORIZER_CACHE_SECONDS, BEARER_JWT_PATTERN, INTEGRATION_TIMEOUT_SECONDS
from parley_cdk.options import EMPTY_OPERATOR_CONFIG

pytestmark = pytest.mark.cdk

RUNTIME_FUNCTIONS = {d.name for d in FUNCTIONS} - WITHOUT_RUNTIME


def variables_of(template: Template, name: str) -> dict[str, Any]:
    _, function = function_named_in(template, name)
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return variables


# -- the authorizer --------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod", "options"])
def test_every_method_of_the_api_passes_the_jwt_authorizer(synthesized: Any, stack: str) -> None:
    template = synthesized.templates[stack]
    authorizer_id, authorizer = only(template, "AWS::ApiGateway::Authorizer")
    function_id, _ = function_named_in(template, AUTHORIZER)
    methods = template.find_resources("AWS::ApiGateway::Method")
    props = authorizer["Properties"]

    assert methods
    guarded = [m for m in methods.values() if m["Properties"]["AuthorizationType"] != "NONE"]
    public = [m for m in methods.values() if m["Properties"]["AuthorizationType"] == "NONE"]
    # Only the public pages go without a token: GETs of the description, the docs and the inbox's files,
    # and the OAuth callback (its state is the binding).
    assert len(public) == 6 and all(m["Properties"]["HttpMethod"] == "GET" for m in public)
    for method in guarded:
        assert method["Properties"]["AuthorizationType"] == "CUSTOM"
        assert method["Properties"]["AuthorizerId"] == {"Ref": authorizer_id}
    assert props["Type"] == "TOKEN"
    assert props["IdentitySource"] == "method.request.header.Authorization"
    assert props["IdentityValidationExpression"] == BEARER_JWT_PATTERN
    assert props["AuthorizerResultTtlInSeconds"] == AUTHORIZER_CACHE_SECONDS
    assert get_att(function_id) in props["AuthorizerUri"]["Fn::Join"][1]
    template.has_resource_properties(
        "AWS::Lambda::Permission",
        {"FunctionName": get_att(function_id), "Principal": "apigateway.amazonaws.com"},
    )


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        ("Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln", True),
        ("bearer eyJh.eyJz.c2ln", True),
        ("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.", False),  # alg none: no signature
        ("Bearer dev-token", False),
        ("Basic dXNlcjpwYXNz", False),
        ("Bearer a.b.c extra", False),
    ],
)
def test_api_gateway_refuses_what_is_no_bearer_jwt_before_calling_the_authorizer(
    header: str, matches: bool
) -> None:
    import re

    # API Gateway's identity validation expression is a Java regex; this one means the same in Python.
    assert (re.fullmatch(BEARER_JWT_PATTERN, header) is not None) is matches


@pytest.mark.parametrize("response_type", ["UNAUTHORIZED", "ACCESS_DENIED"])
def test_a_missing_or_refused_token_is_the_unauthenticated_problem_with_a_bearer_challenge(
    dev: Template, response_type: str
) -> None:
    _, response = only(dev, "AWS::ApiGateway::GatewayResponse", {"ResponseType": response_type})
    props = response["Properties"]
    problem = json.loads(props["ResponseTemplates"]["application/json"])

    assert props["StatusCode"] == "401"
    assert props["ResponseParameters"] == {
        "gatewayresponse.header.Content-Type": "'application/problem+json'",
        "gatewayresponse.header.WWW-Authenticate": "'Bearer'",
    }
    assert problem["type"] == PROBLEM_TYPE_BASE + "unauthenticated"
    assert (problem["status"], problem["reason"]) == (401, "unauthenticated")


def test_the_api_waits_for_a_run_with_call_and_the_function_outlasts_the_wait(dev: Template) -> None:
    methods = dev.find_resources("AWS::ApiGateway::Method").values()  # the api's, and the MCP front door's
    _, function = function_named_in(dev, "api")

    for method in methods:
        assert (
            method["Properties"]["Integration"]["TimeoutInMillis"]
            == INTEGRATION_TIMEOUT_SECONDS * 1000
            == 80_000
        )
    assert (
        function["Properties"]["Timeout"] == function_named_in(dev, "mcp")[1]["Properties"]["Timeout"] == 85
    )
    assert properties_of(dev, "AWS::ApiGateway::RestApi")["EndpointConfiguration"] == {"Types": ["REGIONAL"]}


def test_the_authorizer_may_only_log_and_trace(dev: Template) -> None:
    actions = {a for s in function_statements(dev, AUTHORIZER) for a in s["Action"]}

    assert actions == {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }


# -- the token issuer ------------------------------------------------------------------------------------


def test_by_default_the_stack_makes_a_user_pool_nobody_can_sign_up_to(dev: Template, prod: Template) -> None:
    for stage, template in (("dev", dev), ("prod", prod)):
        pool_id, pool = only(template, "AWS::Cognito::UserPool")
        client_id, client = only(template, "AWS::Cognito::UserPoolClient")
        props = pool["Properties"]

        assert props["UserPoolName"] == f"parley-{stage}-users"
        assert props["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
        assert props["Policies"]["PasswordPolicy"]["MinimumLength"] >= 12
        assert client["Properties"]["GenerateSecret"] is False
        assert client["Properties"]["UserPoolId"] == {"Ref": pool_id}
        for name in FUNCTIONS:
            variables = variables_of(template, name.name)
            assert variables[ISSUER_VARIABLE] == get_att(pool_id, "ProviderURL")
            assert variables[AUDIENCE_VARIABLE] == {"Ref": client_id}
            assert variables[PRINCIPAL_CLAIM_VARIABLE] == "sub"
            assert render(variables[JWKS_URL_VARIABLE]) == f"${{{pool_id}.ProviderURL}}/.well-known/jwks.json"
    assert only(prod, "AWS::Cognito::UserPool")[1]["Properties"]["MfaConfiguration"] == "ON"
    assert only(prod, "AWS::Cognito::UserPool")[1]["Properties"]["DeletionProtection"] == "ACTIVE"
    assert only(prod, "AWS::Cognito::UserPool")[1]["DeletionPolicy"] == "Retain"
    assert only(dev, "AWS::Cognito::UserPool")[1]["Properties"]["MfaConfiguration"] == "OPTIONAL"


def test_an_existing_oidc_issuer_replaces_the_user_pool(chosen: Template) -> None:
    chosen.resource_count_is("AWS::Cognito::UserPool", 0)
    variables = variables_of(chosen, AUTHORIZER)

    assert variables[ISSUER_VARIABLE] == OIDC_ISSUER
    assert variables[AUDIENCE_VARIABLE] == ",".join(OIDC_AUDIENCES)
    assert variables[JWKS_URL_VARIABLE] == OIDC_JWKS
    assert variables[PRINCIPAL_CLAIM_VARIABLE] == "email"


def test_the_outputs_say_where_everything_is(dev: Template, chosen: Template) -> None:
    expected = {
        "ApiUrl",
        "TokenIssuer",
        "OperatorConfigParameter",
        "ToolServerSecrets",
        "ModelSecrets",
        "AlarmTopicArn",
        "TimerFailuresQueueUrl",
        "ScheduleDeadLettersQueueUrl",
        "TimerQueueFailuresQueueUrl",
        "ReasonFailuresQueueUrl",
        "TableName",
        "ContentBucketName",
        "StateMachineArn",
    }

    # (and the RestApi's own endpoint output)
    assert expected | {"UserPoolId", "UserPoolClientId"} <= set(dev.to_json()["Outputs"])
    assert expected <= set(chosen.to_json()["Outputs"])
    assert "UserPoolId" not in chosen.to_json()["Outputs"]


# -- the operator configuration --------------------------------------------------------------------------


def test_the_operator_configuration_is_a_parameter_the_runtime_functions_read(
    dev: Template, chosen: Template
) -> None:
    parameter_id, parameter = only(dev, "AWS::SSM::Parameter")
    props = parameter["Properties"]

    assert props["Name"] == "/parley/dev/operator-config"
    assert props["Type"] == "String"
    assert props["Value"] == EMPTY_OPERATOR_CONFIG
    assert properties_of(chosen, "AWS::SSM::Parameter")["Value"] == OPERATOR_CONFIG
    assert who_may(dev, "ssm:GetParameter") == RUNTIME_FUNCTIONS
    for name in RUNTIME_FUNCTIONS:
        assert variables_of(dev, name)[OPERATOR_CONFIG_PARAMETER_VARIABLE] == "/parley/dev/operator-config"
        assert resources_for(dev, name, "ssm:GetParameter") == [
            f"arn:${{AWS::Partition}}:ssm:${{AWS::Region}}:${{AWS::AccountId}}:parameter${{{parameter_id}}}"
        ]
    # The configuration never travels in the environment any more, so no token does.
    for definition in FUNCTIONS:
        assert "PARLEY_OPERATOR_CONFIG" not in variables_of(dev, definition.name)


def test_only_functions_with_a_runtime_use_the_table(dev: Template) -> None:
    assert who_may(dev, "dynamodb:GetItem") == RUNTIME_FUNCTIONS
    assert AUTHORIZER not in RUNTIME_FUNCTIONS


# -- tool server secrets ---------------------------------------------------------------------------------


def secret_arn(name: str) -> str:
    return f"arn:${{AWS::Partition}}:secretsmanager:${{AWS::Region}}:${{AWS::AccountId}}:secret:{name}"


def secret_statements(template: Template, name: str, resource: str) -> list[dict[str, Any]]:
    """Function ``name``'s statements that read secrets and name ``resource``."""
    return [
        s
        for s in function_statements(template, name)
        if "secretsmanager:GetSecretValue" in s["Action"] and resource in s["Resource"]
    ]


def readers_of(template: Template, resource: str) -> set[str]:
    return {d.name for d in FUNCTIONS if secret_statements(template, d.name, resource)}


def test_only_the_functions_that_call_tool_servers_read_their_secrets_and_only_the_stages_by_default(
    dev: Template, prod: Template
) -> None:
    for stage, template in (("dev", dev), ("prod", prod)):
        tool_secrets = secret_arn(f"parley/{stage}/tool-servers/*")

        assert (
            readers_of(template, tool_secrets)
            == MAY_READ_TOOL_SECRETS
            == {"api", "mcp", "timer", "reason", "workflow"}
        )
        for name in MAY_READ_TOOL_SECRETS:
            (statement,) = secret_statements(template, name, tool_secrets)
            assert statement["Action"] == ["secretsmanager:GetSecretValue"]
            assert statement["Resource"] == [tool_secrets]


def test_only_the_api_and_reason_functions_read_model_secrets_and_only_the_stages(
    dev: Template, prod: Template, chosen: Template
) -> None:
    # The model calls (reason) and the providers' model lists of list_models (api); the chosen stack's
    # tool server secrets change nothing here.
    for stage, template in (("dev", dev), ("prod", prod), ("dev", chosen)):
        model_secrets = secret_arn(f"parley/{stage}/models/*")

        assert (
            readers_of(template, model_secrets)
            == MAY_READ_MODEL_SECRETS
            == {"api", "mcp", "reason", "workflow"}
        )
        for name in MAY_READ_MODEL_SECRETS:
            (statement,) = secret_statements(template, name, model_secrets)
            assert statement["Action"] == ["secretsmanager:GetSecretValue"]
            assert statement["Resource"] == [model_secrets]
        assert (
            who_may(template, "secretsmanager:GetSecretValue")
            == MAY_READ_TOOL_SECRETS | MAY_READ_MODEL_SECRETS
        )
    assert dev.to_json()["Outputs"]["ModelSecrets"]["Value"] == "parley/dev/models/*"
    assert prod.to_json()["Outputs"]["ModelSecrets"]["Value"] == "parley/prod/models/*"


def test_the_connections_secrets_are_kept_by_api_and_mcp_and_read_by_reason_only(
    dev: Template, prod: Template
) -> None:
    for stage, template in (("dev", dev), ("prod", prod)):
        connection_secrets = secret_arn(f"parley/{stage}/connections/*")

        assert (
            readers_of(template, connection_secrets)
            == MAY_KEEP_CONNECTION_SECRETS | MAY_READ_CONNECTION_SECRETS
        )
        assert (set(MAY_KEEP_CONNECTION_SECRETS), set(MAY_READ_CONNECTION_SECRETS)) == (
            {"api", "mcp"},
            {"reason"},
        )
        for name in MAY_KEEP_CONNECTION_SECRETS:
            (statement,) = secret_statements(template, name, connection_secrets)
            assert statement["Action"] == [
                "secretsmanager:CreateSecret",
                "secretsmanager:PutSecretValue",
                "secretsmanager:GetSecretValue",
                "secretsmanager:DeleteSecret",
            ]
            assert statement["Resource"] == [connection_secrets]
        for name in MAY_READ_CONNECTION_SECRETS:
            (statement,) = secret_statements(template, name, connection_secrets)
            # and put back an OAuth token a run's tool call refreshed
            assert statement["Action"] == ["secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue"]
        for name in RUNTIME_FUNCTIONS:
            given = variables_of(template, name).get("PARLEY_CONNECTION_SECRETS_PREFIX")
            wanted = (
                f"parley/{stage}/connections/" if name in readers_of(template, connection_secrets) else None
            )
            assert given == wanted, name
        assert who_may(template, "secretsmanager:CreateSecret") == MAY_KEEP_CONNECTION_SECRETS
        assert who_may(template, "secretsmanager:DeleteSecret") == MAY_KEEP_CONNECTION_SECRETS


def test_the_context_names_which_secrets_may_be_read(chosen: Template) -> None:
    for name in MAY_READ_TOOL_SECRETS:
        (statement,) = secret_statements(chosen, name, NAMED_SECRET_ARN)
        assert statement["Resource"] == [
            NAMED_SECRET_ARN,
            # A name without its random suffix: any suffix of six characters, and nothing longer.
            secret_arn("shared/chat-key-??????"),
            secret_arn("parley/prod/tool-servers/*"),
        ]
    assert readers_of(chosen, NAMED_SECRET_ARN) == MAY_READ_TOOL_SECRETS


def test_no_policy_reads_every_secret(dev: Template, chosen: Template) -> None:
    for template in (dev, chosen):
        for policy in template.find_resources("AWS::IAM::Policy").values():
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                if any(a.startswith("secretsmanager:") for a in as_list(statement["Action"])):
                    assert "*" not in as_list(statement["Resource"])


# -- the content bucket ----------------------------------------------------------------------------------


def test_the_content_bucket_is_encrypted_private_and_tls_only(dev: Template, prod: Template) -> None:
    for template in (dev, prod):
        bucket_id, bucket = only(template, "AWS::S3::Bucket")
        props = bucket["Properties"]
        (policy,) = template.find_resources("AWS::S3::BucketPolicy").values()
        statements = policy["Properties"]["PolicyDocument"]["Statement"]

        assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"] == [
            {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
        ]
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }
        assert "VersioningConfiguration" not in props
        assert policy["Properties"]["Bucket"] == {"Ref": bucket_id}
        assert any(
            s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
            for s in statements
        )
    assert only(prod, "AWS::S3::Bucket")[1]["DeletionPolicy"] == "Retain"
    assert only(dev, "AWS::S3::Bucket")[1]["DeletionPolicy"] == "Delete"


def test_only_the_functions_that_keep_content_get_and_put_its_objects(dev: Template) -> None:
    bucket_id, _ = only(dev, "AWS::S3::Bucket")

    assert who_may(dev, "s3:GetObject") == who_may(dev, "s3:PutObject") == MAY_KEEP_CONTENT
    for name in MAY_KEEP_CONTENT:
        (statement,) = [
            s for s in function_statements(dev, name) if any(a.startswith("s3:") for a in s["Action"])
        ]
        assert sorted(statement["Action"]) == ["s3:GetObject", "s3:PutObject"]
        assert statement["Resource"] == [f"${{{bucket_id}.Arn}}/*"]
    for definition in FUNCTIONS:
        assert variables_of(dev, definition.name)[CONTENT_BUCKET_VARIABLE] == {"Ref": bucket_id}


# -- dead letters ----------------------------------------------------------------------------------------


DEAD_LETTER_QUEUES = ("timer-failures", "schedule-dead-letters", "timer-queue-failures", "reason-failures")


def queue_id_named(template: Template, name: str) -> str:
    queue_id, _ = only(template, "AWS::SQS::Queue", {"QueueName": f"parley-dev-{name}"})
    return queue_id


def test_the_timers_failed_asynchronous_events_go_to_its_queue(dev: Template) -> None:
    timer_id, _ = function_named_in(dev, "timer")
    queue_id = queue_id_named(dev, "timer-failures")
    _, invoke_config = only(dev, "AWS::Lambda::EventInvokeConfig", {"FunctionName": {"Ref": timer_id}})
    config = invoke_config["Properties"]

    assert config["FunctionName"] == {"Ref": timer_id}
    assert config["DestinationConfig"] == {"OnFailure": {"Destination": get_att(queue_id)}}
    assert config["MaximumRetryAttempts"] == 2
    assert f"${{{queue_id}.Arn}}" in resources_for(dev, "timer", "sqs:SendMessage")


def test_the_schedules_dead_letter_queue_is_in_every_functions_environment(dev: Template) -> None:
    queue_id = queue_id_named(dev, "schedule-dead-letters")

    for definition in FUNCTIONS:
        assert variables_of(dev, definition.name)[SCHEDULE_DEAD_LETTER_ARN_VARIABLE] == get_att(queue_id)


def test_work_due_within_minutes_goes_through_the_timer_queue_which_the_timer_consumes(dev: Template) -> None:
    from parley.infrastructure.functions import MAY_SCHEDULE, TIMER_QUEUE_URL_VARIABLE

    queue_id, queue = only(dev, "AWS::SQS::Queue", {"QueueName": "parley-dev-timer-queue"})
    timer_id, _ = function_named_in(dev, "timer")
    mapping = properties_of(dev, "AWS::Lambda::EventSourceMapping")

    assert mapping["FunctionName"] == {"Ref": timer_id}
    assert mapping["EventSourceArn"] == get_att(queue_id)
    # A failed piece of work comes back alone, not with its whole batch.
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # One piece of work an invocation: a slow tool server never delays another read's cadence.
    assert mapping["BatchSize"] == 1
    assert queue["Properties"]["VisibilityTimeout"] >= 6 * function_named("timer").timeout_s
    assert queue["Properties"]["RedrivePolicy"] == {
        "deadLetterTargetArn": get_att(queue_id_named(dev, "timer-queue-failures")),
        "maxReceiveCount": 5,
    }
    # The scheduler port's functions put work in it; only the timer takes it out.
    assert {
        d.name for d in FUNCTIONS if f"${{{queue_id}.Arn}}" in resources_for(dev, d.name, "sqs:SendMessage")
    } == MAY_SCHEDULE
    assert resources_for(dev, "api", "sqs:SendMessage") == [f"${{{queue_id}.Arn}}"]
    assert who_may(dev, "sqs:ReceiveMessage") == who_may(dev, "sqs:DeleteMessage") == {"timer"}
    assert resources_for(dev, "timer", "sqs:ReceiveMessage") == [f"${{{queue_id}.Arn}}"]
    for definition in FUNCTIONS:
        assert variables_of(dev, definition.name)[TIMER_QUEUE_URL_VARIABLE] == {"Ref": queue_id}


def test_every_queue_is_encrypted_and_tls_only_and_dead_letters_are_kept_two_weeks(dev: Template) -> None:
    queues = dev.find_resources("AWS::SQS::Queue")
    policies = dev.find_resources("AWS::SQS::QueuePolicy").values()
    dead_letters = {queue_id_named(dev, name) for name in DEAD_LETTER_QUEUES}

    assert len(queues) == 5
    for queue_id, queue in queues.items():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True
        if queue_id in dead_letters:
            assert queue["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600
        (policy,) = [p for p in policies if p["Properties"]["Queues"] == [{"Ref": queue_id}]]
        (deny,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert (deny["Effect"], deny["Condition"]) == ("Deny", {"Bool": {"aws:SecureTransport": "false"}})


# -- alarms ----------------------------------------------------------------------------------------------


def alarms_on(template: Template, namespace: str, metric: str) -> list[dict[str, Any]]:
    found = template.find_resources(
        "AWS::CloudWatch::Alarm", {"Properties": {"Namespace": namespace, "MetricName": metric}}
    )
    return [alarm["Properties"] for alarm in found.values()]


@pytest.mark.parametrize("metric", ["Errors", "Throttles"])
def test_every_function_has_an_alarm_on_its_errors_and_throttles(dev: Template, metric: str) -> None:
    alarms = alarms_on(dev, "AWS/Lambda", metric)
    alarmed = {alarm["Dimensions"][0]["Value"]["Ref"] for alarm in alarms}

    assert alarmed == {function_named_in(dev, d.name)[0] for d in FUNCTIONS}
    for alarm in alarms:
        assert (alarm["Statistic"], alarm["Threshold"]) == ("Sum", 1)
        assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_work_waiting_in_a_dead_letter_queue_raises_an_alarm(dev: Template) -> None:
    alarms = alarms_on(dev, "AWS/SQS", "ApproximateNumberOfMessagesVisible")

    assert {render(a["Dimensions"][0]["Value"]) for a in alarms} == {
        f"${{{queue_id_named(dev, name)}.QueueName}}" for name in DEAD_LETTER_QUEUES
    }
    for alarm in alarms:
        assert (alarm["Statistic"], alarm["Threshold"], alarm["ComparisonOperator"]) == (
            "Maximum",
            1,
            "GreaterThanOrEqualToThreshold",
        )


def test_a_failed_execution_raises_an_alarm(dev: Template) -> None:
    state_machine_id, _ = only(dev, "AWS::StepFunctions::StateMachine")
    (alarm,) = alarms_on(dev, "AWS/States", "ExecutionsFailed")

    assert alarm["Dimensions"] == [{"Name": "StateMachineArn", "Value": {"Ref": state_machine_id}}]


def test_every_alarm_notifies_the_topic_and_an_idle_stage_is_quiet(dev: Template, chosen: Template) -> None:
    topic_id, _ = only(dev, "AWS::SNS::Topic")
    alarms = [a["Properties"] for a in dev.find_resources("AWS::CloudWatch::Alarm").values()]

    # 8 functions × (errors, throttles), 4 dead-letter queues, 1 state machine.
    assert len(alarms) == 2 * len(FUNCTIONS) + 4 + 1 == 21
    for alarm in alarms:
        assert alarm["AlarmActions"] == [{"Ref": topic_id}]
        assert alarm["TreatMissingData"] == "notBreaching"
    dev.resource_count_is("AWS::SNS::Subscription", 0)
    chosen.has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "oncall@example.com"}
    )


def test_the_alarm_topic_accepts_tls_only(dev: Template) -> None:
    topic_id, _ = only(dev, "AWS::SNS::Topic")
    dev.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "Topics": [{"Ref": topic_id}],
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
                        )
                    ]
                )
            },
        },
    )


# -- who may do what, all together -----------------------------------------------------------------------


def test_each_function_holds_exactly_the_actions_it_uses(dev: Template) -> None:
    """The whole least-privilege table, so that a grant added anywhere shows up here."""
    logs_and_traces = {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }
    table = {
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:DescribeTable",
        "dynamodb:GetItem",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:Scan",
        "dynamodb:UpdateItem",
    }
    runtime = logs_and_traces | table | {"ssm:GetParameter"}
    # Every ending is written first and told to the wait as a success: no SendTaskFailure for waits.
    end_waits = {"states:SendTaskSuccess"}
    schedule = {"scheduler:CreateSchedule", "scheduler:DeleteSchedule", "iam:PassRole"}
    content = {"s3:GetObject", "s3:PutObject"}
    # An asynchronous invocation's on-failure destination: the function sends to its failure queue.
    failures = {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
    # Workflows (``test_workflows``): make and run their state machines, passing their role (api, the
    # timer for a schedule's run, and the workflow function for a workflow a workflow calls); answer a
    # workflow's call (wherever a called
    # run's ending is written: every function with a runtime but wait).
    run_workflows = {
        "states:CreateStateMachine",
        "states:UpdateStateMachine",
        "states:PublishStateMachineVersion",
        "states:ListStateMachineVersions",
        "states:DescribeStateMachine",
        "states:StartExecution",
        "states:DescribeExecution",
        "states:GetExecutionHistory",
        "states:StopExecution",
        "iam:PassRole",
    }
    answer_calls = {"states:SendTaskSuccess", "states:SendTaskFailure"}
    expected = {
        "api": runtime
        | {"states:StartExecution"}
        | end_waits
        | schedule
        | {"lambda:InvokeFunction", "secretsmanager:GetSecretValue"}
        | content
        | {"sqs:SendMessage"}
        | run_workflows
        | answer_calls
        # list_models reads Bedrock's list (Bedrock is configured wherever AWS_REGION is set)
        | {"bedrock:ListFoundationModels"}
        # the connections' secrets: kept when added, replaced, read, deleted when removed (issue 32)
        | {"secretsmanager:CreateSecret", "secretsmanager:PutSecretValue", "secretsmanager:DeleteSecret"},
        "wait": runtime | end_waits,
        # The backstop: an agent run's next step (the reason function, asynchronously).
        "settle": runtime | content | answer_calls | {"lambda:InvokeFunction"},
        "timer": runtime
        | end_waits
        | schedule
        | {"lambda:InvokeFunction", "secretsmanager:GetSecretValue"}
        | content
        | failures
        | {"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage"}
        # a workflow's schedule starts its runs; a called run's expiry answers its workflow
        | run_workflows
        | answer_calls,
        # No model is named in dev: no Bedrock action at all (``test_reasoning`` names some).
        # A reasoning run that asks a person starts its execution and schedules its request's expiry.
        "reason": runtime
        | {"states:StartExecution"}
        | schedule
        | content
        | {"secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue"}
        | failures
        | answer_calls,
        # A workflow's entry: starts the runs it calls as run_definition does (with no execution of their
        # own: their endings answer the workflow's token), and workflows it calls.
        "workflow": runtime
        | schedule
        | {"lambda:InvokeFunction", "secretsmanager:GetSecretValue"}
        | content
        | {"sqs:SendMessage"}
        | run_workflows
        | answer_calls,
        "authorizer": logs_and_traces,
    }
    # The MCP front door makes the api function's operations through the same services.
    expected["mcp"] = expected["api"]

    assert {
        d.name: {a for s in function_statements(dev, d.name) for a in s["Action"]} for d in FUNCTIONS
    } == expected
    assert function_named("api").timeout_s > INTEGRATION_TIMEOUT_SECONDS
    assert render(variables_of(dev, "api")["PARLEY_TIMER_FUNCTION_ARN"]) == TIMER_ARN
    assert role_of(dev, "api") != role_of(dev, "timer")
    assert resource(dev, role_of(dev, "authorizer"))["Properties"].get("ManagedPolicyArns") is None
