"""The synthesized stacks: what the CDK app would deploy, checked property by property.

The app is synthesized once per session (``conftest.synthesized``); this module checks the table, the
layer and functions, the API's proxy, the state machine and the scheduler; ``test_deployment`` checks
the authorizer, the grants added for deployment, the bucket, the dead-letter queues and the alarms.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks
from cfn import (
    REASON_ARN,
    STATE_MACHINE_ARN,
    TIMER_ARN,
    api_function,
    as_list,
    function_named_in,
    function_statements,
    get_att,
    only,
    properties_of,
    render,
    scheduler_role_id,
    statements_of_role,
    who_may,
)
from conftest import Synthesized

from parley.errors import PROBLEM_TYPE_BASE, REASONS
from parley.infrastructure.functions import (
    FUNCTIONS,
    MAY_END_WAITS,
    MAY_REASON,
    MAY_RUN_NOW,
    MAY_RUN_WORKFLOWS,
    MAY_SCHEDULE,
    MAY_START_RUNS,
)
from parley.infrastructure.table import TABLE, TABLE_NAME_VARIABLE
from parley_cdk.application import stack_name
from parley_cdk.nag import accept
from parley_cdk.settings import STAGES

pytestmark = pytest.mark.cdk


# -- the table --------------------------------------------------------------------------------------------


def test_the_table_has_the_keys_and_indexes_of_the_shared_definition(dev: Template) -> None:
    table = properties_of(dev, "AWS::DynamoDB::Table")
    # The local runtime creates its table from the same definition: both must agree.
    local = TABLE.create_table_arguments("parley-local")

    assert table["KeySchema"] == local["KeySchema"]
    assert table["GlobalSecondaryIndexes"] == local["GlobalSecondaryIndexes"]
    assert (
        sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"])
        == local["AttributeDefinitions"]
    )
    assert table["BillingMode"] == "PAY_PER_REQUEST"


def test_the_table_keeps_point_in_time_recovery_and_expires_items_by_ttl(dev: Template) -> None:
    table = properties_of(dev, "AWS::DynamoDB::Table")

    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert table["TimeToLiveSpecification"] == {"AttributeName": TABLE.ttl_attribute, "Enabled": True}


def test_prod_protects_its_data_and_dev_can_be_torn_down(
    synthesized: Synthesized, prod: Template, dev: Template
) -> None:
    prod_table = only(prod, "AWS::DynamoDB::Table")[1]
    dev_table = only(dev, "AWS::DynamoDB::Table")[1]

    assert prod_table["Properties"]["DeletionProtectionEnabled"] is True
    assert prod_table["DeletionPolicy"] == prod_table["UpdateReplacePolicy"] == "Retain"
    assert synthesized.stacks["prod"].termination_protection is True
    assert dev_table["Properties"]["DeletionProtectionEnabled"] is False
    assert dev_table["DeletionPolicy"] == "Delete"
    assert synthesized.stacks["dev"].termination_protection is False


def test_prod_keeps_its_logs_longer_and_after_the_stack(prod: Template, dev: Template) -> None:
    prod_logs = prod.find_resources("AWS::Logs::LogGroup").values()
    dev_logs = dev.find_resources("AWS::Logs::LogGroup").values()

    assert {log["DeletionPolicy"] for log in prod_logs} == {"Retain"}
    assert {log["DeletionPolicy"] for log in dev_logs} == {"Delete"}
    assert min(log["Properties"]["RetentionInDays"] for log in prod_logs) > max(
        log["Properties"]["RetentionInDays"] for log in dev_logs
    )


# -- the layer and the functions --------------------------------------------------------------------------


def test_there_is_one_function_per_definition(dev: Template) -> None:
    functions = dev.find_resources("AWS::Lambda::Function")

    assert sorted(f["Properties"]["Description"] for f in functions.values()) == sorted(
        d.description for d in FUNCTIONS
    )


@pytest.mark.parametrize("definition", FUNCTIONS, ids=lambda d: d.name)
def test_every_function_runs_python_3_12_or_later_on_arm64_with_the_core_layer(
    dev: Template, definition: Any
) -> None:
    layer_id, layer = only(dev, "AWS::Lambda::LayerVersion")
    table_id, _ = only(dev, "AWS::DynamoDB::Table")
    _, function = only(dev, "AWS::Lambda::Function", {"Description": definition.description})
    props = function["Properties"]

    match = re.fullmatch(r"python3\.(\d+)", props["Runtime"])
    assert match is not None and int(match.group(1)) >= 12
    assert props["Architectures"] == ["arm64"]
    assert props["Layers"] == [{"Ref": layer_id}]
    assert props["Runtime"] in layer["Properties"]["CompatibleRuntimes"]
    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    assert props["Handler"] == definition.lambda_handler == "handler.handler"
    assert props["MemorySize"] == definition.memory_mb
    assert props["Timeout"] == definition.timeout_s
    assert props["TracingConfig"] == {"Mode": "Active"}
    assert props["Environment"]["Variables"][TABLE_NAME_VARIABLE] == {"Ref": table_id}
    assert props["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == "parley"
    log_group_id = props["LoggingConfig"]["LogGroup"]["Ref"]
    assert dev.to_json()["Resources"][log_group_id]["Properties"]["RetentionInDays"] > 0


def test_the_api_function_may_use_dynamodb_on_the_table_and_its_indexes_only(dev: Template) -> None:
    table_id, _ = only(dev, "AWS::DynamoDB::Table")
    _, function = api_function(dev)
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    role = dev.to_json()["Resources"][role_id]
    policies = dev.find_resources(
        "AWS::IAM::Policy", {"Properties": {"Roles": Match.array_with([{"Ref": role_id}])}}
    )
    statements = [s for p in policies.values() for s in p["Properties"]["PolicyDocument"]["Statement"]]
    dynamodb = [s for s in statements if any(a.startswith("dynamodb:") for a in as_list(s["Action"]))]
    table_only = [
        get_att(table_id),
        {"Fn::Join": ["", [get_att(table_id), "/index/*"]]},
    ]

    assert "ManagedPolicyArns" not in role["Properties"]
    assert {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"} <= {
        a for s in dynamodb for a in as_list(s["Action"])
    }
    for statement in dynamodb:
        assert statement["Effect"] == "Allow"
        assert not any(a in ("dynamodb:*", "*") for a in as_list(statement["Action"]))
        for resource in as_list(statement["Resource"]):
            assert resource in table_only


def test_no_policy_in_the_stack_grants_dynamodb_on_every_resource(dev: Template) -> None:
    for policy in dev.find_resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if any(a.startswith("dynamodb:") or a == "*" for a in as_list(statement["Action"])):
                assert "*" not in as_list(statement["Resource"])


# -- the API ---------------------------------------------------------------------------------------------


def test_every_route_under_v1_goes_to_the_api_function_by_lambda_proxy(dev: Template) -> None:
    api_id, _ = only(dev, "AWS::ApiGateway::RestApi")
    function_id, _ = api_function(dev)
    v1_id, _ = only(
        dev, "AWS::ApiGateway::Resource", {"PathPart": "v1", "ParentId": get_att(api_id, "RootResourceId")}
    )
    proxy_id, _ = only(dev, "AWS::ApiGateway::Resource", {"PathPart": "{proxy+}", "ParentId": {"Ref": v1_id}})
    _, method = only(dev, "AWS::ApiGateway::Method", {"ResourceId": {"Ref": proxy_id}})
    integration = method["Properties"]["Integration"]

    assert method["Properties"]["HttpMethod"] == "ANY"
    assert integration["Type"] == "AWS_PROXY"
    assert integration["IntegrationHttpMethod"] == "POST"
    assert get_att(function_id) in integration["Uri"]["Fn::Join"][1]
    dev.has_resource_properties(
        "AWS::Lambda::Permission",
        {"FunctionName": get_att(function_id), "Principal": "apigateway.amazonaws.com"},
    )


def test_the_stage_is_named_after_the_stage_traced_and_logged(dev: Template, prod: Template) -> None:
    for stage, template in (("dev", dev), ("prod", prod)):
        props = properties_of(template, "AWS::ApiGateway::Stage")

        assert props["StageName"] == stage
        assert props["TracingEnabled"] is True
        assert "DestinationArn" in props["AccessLogSetting"]
        assert props["MethodSettings"][0]["LoggingLevel"] in ("ERROR", "INFO")
        assert props["MethodSettings"][0]["DataTraceEnabled"] is False


@pytest.mark.parametrize(
    ("response_type", "reason"),
    [
        ("MISSING_AUTHENTICATION_TOKEN", "not_found"),
        ("REQUEST_TOO_LARGE", "content_too_large"),
        ("DEFAULT_5XX", "internal"),
    ],
)
def test_api_gateways_own_errors_are_problems(dev: Template, response_type: str, reason: str) -> None:
    _, response = only(dev, "AWS::ApiGateway::GatewayResponse", {"ResponseType": response_type})
    props = response["Properties"]
    problem = json.loads(props["ResponseTemplates"]["application/json"])
    status, title = REASONS[reason]

    assert props["StatusCode"] == str(status)
    assert props["ResponseParameters"] == {
        "gatewayresponse.header.Content-Type": "'application/problem+json'"
    }
    assert problem["type"] == PROBLEM_TYPE_BASE + reason
    assert (problem["status"], problem["title"], problem["reason"]) == (status, title, reason)


def test_an_internal_error_names_the_request_as_its_instance(dev: Template) -> None:
    _, response = only(dev, "AWS::ApiGateway::GatewayResponse", {"ResponseType": "DEFAULT_5XX"})
    problem = json.loads(response["Properties"]["ResponseTemplates"]["application/json"])

    assert problem["instance"] == "urn:uuid:$context.requestId"


# -- checks ----------------------------------------------------------------------------------------------


def test_stacks_are_named_per_stage(synthesized: Synthesized) -> None:
    assert {stage: synthesized.stacks[stage].stack_name for stage in STAGES} == {
        stage: stack_name(stage) for stage in STAGES
    }
    assert stack_name("prod") == "parley-prod"


@pytest.mark.parametrize("stage", [*STAGES, "options"])
def test_cdk_nag_finds_nothing_unacknowledged(synthesized: Synthesized, stage: str) -> None:
    report = AwsSolutionsChecks().validate_scope(synthesized.stacks[stage])

    assert [violation.rule_name for violation in report.violations] == []
    assert report.success is True
    assert synthesized.errors[stage] == []


def test_cdk_nag_reports_a_finding_until_it_is_accepted() -> None:
    # The guard for the test above: the checks do see findings, and ``accept`` is what hides one.
    stack = Stack(App(), "Probe")
    function = lambda_.Function(
        stack,
        "Old",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context): pass"),
    )
    before = AwsSolutionsChecks().validate_scope(stack)
    accept(function, "AwsSolutions-L1", "probe")
    after = AwsSolutionsChecks().validate_scope(stack)

    assert "AwsSolutions-L1" in [v.rule_name for v in before.violations]
    assert "AwsSolutions-L1" not in [v.rule_name for v in after.violations]


# -- waiting runs: the state machine, the scheduler, and who may do what ---------------------------------


def test_every_function_is_named_for_its_stage(dev: Template, prod: Template) -> None:
    for stage, template in (("dev", dev), ("prod", prod)):
        for definition in FUNCTIONS:
            _, function = function_named_in(template, definition.name)
            assert function["Properties"]["FunctionName"] == f"parley-{stage}-{definition.name}"


def test_the_state_machine_is_the_one_definition_with_the_functions_arns(dev: Template) -> None:
    from parley.infrastructure.state_machine import SETTLE_ENDING_STATE, state_machine_definition

    wait_id, _ = function_named_in(dev, "wait")
    settle_id, _ = function_named_in(dev, "settle")
    props = properties_of(dev, "AWS::StepFunctions::StateMachine")
    definition = json.loads(render(props["DefinitionString"]))

    # What the local runtime runs in moto is what is deployed.
    assert definition == state_machine_definition(f"${{{wait_id}.Arn}}", f"${{{settle_id}.Arn}}")
    wait = definition["States"][definition["StartAt"]]
    assert wait["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert wait["Parameters"]["FunctionName"] == f"${{{wait_id}.Arn}}"
    assert wait["Parameters"]["Payload"] == {"token.$": "$$.Task.Token", "run.$": "$.run"}
    assert wait["TimeoutSecondsPath"] == "$.timeout_seconds"
    assert wait["End"] is True  # the ending is written before the token: one transition a wait
    assert wait["Catch"][0]["ErrorEquals"] == ["States.ALL"]
    settle = definition["States"][wait["Catch"][0]["Next"]]
    assert wait["Catch"][0]["Next"] == SETTLE_ENDING_STATE
    assert settle["Parameters"] == {
        "FunctionName": f"${{{settle_id}.Arn}}",
        "Payload": {"run.$": "$.run", "error.$": "$.error"},
    }
    assert "JSONata" not in json.dumps(definition)


def test_the_deployed_state_machine_has_no_null(dev: Template) -> None:
    props = properties_of(dev, "AWS::StepFunctions::StateMachine")
    # No null survived CDK's JSON (a null ResultPath would be dropped, changing what the state keeps).
    assert "null" not in render(props["DefinitionString"])


def test_the_state_machine_is_standard_named_logged_and_traced(dev: Template) -> None:
    props = properties_of(dev, "AWS::StepFunctions::StateMachine")

    assert props["StateMachineType"] == "STANDARD"
    assert props["StateMachineName"] == "parley-dev-runs"
    assert props["TracingConfiguration"] == {"Enabled": True}
    assert props["LoggingConfiguration"]["Level"] == "ALL"
    # Inputs and outputs carry answers: never copied into the logs.
    assert props["LoggingConfiguration"]["IncludeExecutionData"] is False


def test_the_state_machine_may_invoke_the_wait_and_settle_functions_only(dev: Template) -> None:
    wait_id, _ = function_named_in(dev, "wait")
    settle_id, _ = function_named_in(dev, "settle")
    props = properties_of(dev, "AWS::StepFunctions::StateMachine")
    role_id = props["RoleArn"]["Fn::GetAtt"][0]
    trust = dev.to_json()["Resources"][role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    statements = statements_of_role(dev, role_id)
    invoking = [s for s in statements if any(a.startswith("lambda:") for a in s["Action"])]

    assert [s["Principal"] for s in trust] == [{"Service": "states.amazonaws.com"}]
    assert [(s["Action"], s["Resource"]) for s in invoking] == [
        (["lambda:InvokeFunction"], [f"${{{wait_id}.Arn}}", f"${{{settle_id}.Arn}}"])
    ]
    assert not any(
        a.startswith(("states:", "dynamodb:", "scheduler:", "iam:")) for s in statements for a in s["Action"]
    )


def test_the_schedule_group_and_the_role_its_schedules_run_as(dev: Template) -> None:
    timer_id, _ = function_named_in(dev, "timer")
    group = properties_of(dev, "AWS::Scheduler::ScheduleGroup")
    role_id, role = only(
        dev,
        "AWS::IAM::Role",
        {
            "AssumeRolePolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Principal": {"Service": "scheduler.amazonaws.com"}})]
                )
            }
        },
    )
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]

    assert group["Name"] == "parley-dev-timers"
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    assert render(trust["Condition"]["ArnEquals"]["aws:SourceArn"]) == (
        "arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule-group/parley-dev-timers"
    )
    dead_letters_id, _ = only(dev, "AWS::SQS::Queue", {"QueueName": "parley-dev-schedule-dead-letters"})
    # The schedules' target, and their dead-letter queue, and nothing else.
    assert [(s["Action"], s["Resource"]) for s in statements_of_role(dev, role_id)] == [
        (["lambda:InvokeFunction"], [f"${{{timer_id}.Arn}}"]),
        (["sqs:SendMessage"], [f"${{{dead_letters_id}.Arn}}"]),
    ]


def test_every_function_gets_the_state_machine_and_the_scheduler_in_its_environment(dev: Template) -> None:
    from parley.infrastructure.functions import (
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        STATE_MACHINE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
    )

    for definition in FUNCTIONS:
        _, function = function_named_in(dev, definition.name)
        variables = function["Properties"]["Environment"]["Variables"]

        assert render(variables[STATE_MACHINE_ARN_VARIABLE]) == STATE_MACHINE_ARN
        assert (
            variables[SCHEDULE_GROUP_VARIABLE] == properties_of(dev, "AWS::Scheduler::ScheduleGroup")["Name"]
        )
        assert variables[SCHEDULER_ROLE_ARN_VARIABLE] == get_att(scheduler_role_id(dev))
        assert render(variables[TIMER_FUNCTION_ARN_VARIABLE]) == TIMER_ARN


def test_the_reason_function_has_what_its_waits_and_scheduler_need(dev: Template) -> None:
    # A reasoning run that asks a person starts its execution and schedules its request's expiry and its
    # own backstop from the reason function: both ports are built from its environment, none left out.
    from parley.aws.environment import scheduler_from_environment, waits_from_environment
    from parley.aws.eventbridge import EventBridgeScheduler
    from parley.aws.stepfunctions import StepFunctionsWaits
    from parley.infrastructure.functions import (
        SCHEDULE_DEAD_LETTER_ARN_VARIABLE,
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        STATE_MACHINE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
        TIMER_QUEUE_URL_VARIABLE,
    )

    _, function = function_named_in(dev, "reason")
    variables = function["Properties"]["Environment"]["Variables"]
    needed = (
        STATE_MACHINE_ARN_VARIABLE,
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
        TIMER_QUEUE_URL_VARIABLE,
        SCHEDULE_DEAD_LETTER_ARN_VARIABLE,
    )
    environment = {name: str(render(variables[name])) for name in needed}
    scheduler = scheduler_from_environment(environment)
    waits = waits_from_environment(environment)

    assert isinstance(waits, StepFunctionsWaits)
    assert waits.state_machine_arn == STATE_MACHINE_ARN
    assert isinstance(scheduler, EventBridgeScheduler)
    assert scheduler.queue_url and scheduler.dead_letter_arn
    assert render(variables[TIMER_FUNCTION_ARN_VARIABLE]) == TIMER_ARN
    assert variables[SCHEDULER_ROLE_ARN_VARIABLE] == get_att(scheduler_role_id(dev))


def test_only_the_api_and_reason_functions_start_executions(dev: Template) -> None:
    # A run that starts waiting (api); an agent run that asks a person (reason). A run a workflow calls has
    # no execution of its own. Workflows' own executions: ``test_workflows``.
    assert {"api", "mcp", "reason"} == MAY_START_RUNS
    assert who_may(dev, "states:StartExecution") == MAY_START_RUNS | MAY_RUN_WORKFLOWS
    for name in sorted(MAY_START_RUNS):
        (statement,) = [
            s
            for s in function_statements(dev, name)
            if "states:StartExecution" in s["Action"] and STATE_MACHINE_ARN in s["Resource"]
        ]
        assert statement["Action"] == ["states:StartExecution"]
        assert statement["Resource"] == [STATE_MACHINE_ARN]


@pytest.mark.parametrize("action", ["states:SendTaskSuccess"])
def test_only_the_api_wait_and_timer_functions_end_waits(dev: Template, action: str) -> None:
    # answer and cancel (api), an ending that raced ahead of the token (wait), expiry (timer); never settle.
    # Every ending is told as a success: nobody may SendTaskFailure on the run's state machine.
    # (A workflow's tasks are answered on the workflow machines: ``test_workflows``.)
    assert not any(
        "states:SendTaskFailure" in s["Action"] and STATE_MACHINE_ARN in s["Resource"]
        for d in FUNCTIONS
        for s in function_statements(dev, d.name)
    )
    ending_waits = {
        d.name
        for d in FUNCTIONS
        if any(
            action in s["Action"] and STATE_MACHINE_ARN in s["Resource"]
            for s in function_statements(dev, d.name)
        )
    }
    assert ending_waits == MAY_END_WAITS == {"api", "mcp", "wait", "timer"}
    for name in ("api", "wait", "timer"):
        (statement,) = [
            s
            for s in function_statements(dev, name)
            if action in s["Action"] and STATE_MACHINE_ARN in s["Resource"]
        ]
        assert statement["Resource"] == [STATE_MACHINE_ARN]


def test_only_the_api_timer_and_reason_make_and_forget_schedules_passing_only_the_schedulers_role(
    dev: Template,
) -> None:
    # Expiries and first attempts (api); the next attempt, the check for a lost one, the next read (timer);
    # a reasoning run's request's expiry and its own backstop (reason).
    assert {"api", "mcp", "timer", "reason", "workflow"} == MAY_SCHEDULE
    assert (
        who_may(dev, "scheduler:CreateSchedule") == who_may(dev, "scheduler:DeleteSchedule") == MAY_SCHEDULE
    )
    # (and the workflows' role, passed to Step Functions: ``test_workflows``)
    assert who_may(dev, "iam:PassRole") == MAY_SCHEDULE | MAY_RUN_WORKFLOWS
    for name in sorted(MAY_SCHEDULE):
        statements = function_statements(dev, name)
        (scheduling,) = [s for s in statements if "scheduler:CreateSchedule" in s["Action"]]
        (passing,) = [
            s
            for s in statements
            if "iam:PassRole" in s["Action"] and s["Resource"] == [f"${{{scheduler_role_id(dev)}.Arn}}"]
        ]

        assert sorted(scheduling["Action"]) == ["scheduler:CreateSchedule", "scheduler:DeleteSchedule"]
        assert scheduling["Resource"] == [
            "arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/parley-dev-timers/*"
        ]
        assert passing["Action"] == ["iam:PassRole"]
        assert passing["Resource"] == [f"${{{scheduler_role_id(dev)}.Arn}}"]
        assert passing["Condition"] == {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}


def test_only_the_api_and_timer_invoke_a_function_and_only_the_timer_and_reason(dev: Template) -> None:
    # Work due at once (a delivery's first attempt) goes to the timer asynchronously; a reasoning run,
    # and an agent run's next step, to the reason function (``test_reasoning``).
    assert (
        who_may(dev, "lambda:InvokeFunction")
        == MAY_RUN_NOW | MAY_REASON
        == {"api", "mcp", "timer", "workflow", "settle"}
    )
    for name in sorted(MAY_RUN_NOW | MAY_REASON):
        invoking = [
            s for s in function_statements(dev, name) if any(a.startswith("lambda:") for a in s["Action"])
        ]
        expected = [TIMER_ARN] * (name in MAY_RUN_NOW) + [REASON_ARN] * (name in MAY_REASON)
        assert [(s["Action"], s["Resource"]) for s in invoking] == [
            (["lambda:InvokeFunction"], [arn]) for arn in expected
        ]


def test_no_function_uses_wildcard_actions(dev: Template) -> None:
    for definition in FUNCTIONS:
        for statement in function_statements(dev, definition.name):
            assert statement["Effect"] == "Allow"
            assert not any(a.endswith(":*") or a == "*" for a in statement["Action"])
