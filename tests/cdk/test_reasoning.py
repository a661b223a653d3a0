"""Reasoning runs on AWS: the reason function, who may start it, its model calls and their secrets, the
run wait, and what happens to an invocation that fails; in both stages and with Bedrock models named
(``conftest``: the ``options`` stack names a foundation model and two inference profiles)."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks
from cfn import (
    REASON_ARN,
    as_list,
    function_named_in,
    function_statements,
    get_att,
    only,
    render,
    resources_for,
    who_may,
)
from conftest import BEDROCK_MODELS, Synthesized

from parley.infrastructure.functions import (
    DEFAULT_RUN_WAIT_SECONDS,
    FUNCTIONS,
    MAY_CALL_MODELS,
    MAY_KEEP_CONTENT,
    MAY_LIST_MODELS,
    MAY_REASON,
    REASON_FUNCTION_ARN_VARIABLE,
    RUN_WAIT_SECONDS_VARIABLE,
    function_named,
)
from parley_cdk.api import INTEGRATION_TIMEOUT_SECONDS, RUN_WAIT_MARGIN_SECONDS, run_wait_variable
from parley_cdk.models import (
    MODEL_ACTIONS,
    BedrockModelError,
    bedrock_model_id,
    model_arns,
    routed_model,
    routed_model_finding,
)
from parley_cdk.nag import accept
from parley_cdk.options import OptionsError, options_from_context

pytestmark = pytest.mark.cdk

INVOKE = "lambda:InvokeFunction"
REGION_MODEL = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/"
PROFILE = "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/"
ANY_REGION_MODEL = "arn:${AWS::Partition}:bedrock:*::foundation-model/"


def variables_of(template: Template, name: str) -> dict[str, Any]:
    _, function = function_named_in(template, name)
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return variables


def bedrock_statements(template: Template) -> list[dict[str, Any]]:
    """Every statement of every policy in the stack that names a Bedrock action calling a model (not
    ``bedrock:ListFoundationModels``, which list_models reads: see the test of it below)."""
    return [
        statement
        for policy in template.find_resources("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if any(a.startswith("bedrock:") and a != LIST_ACTION for a in as_list(statement["Action"]))
    ]


LIST_ACTION = "bedrock:ListFoundationModels"


def test_only_the_api_lists_bedrocks_models_on_every_stage(dev: Template, chosen: Template) -> None:
    # The Lambda runtime sets AWS_REGION, so Bedrock is a configured provider wherever Parley runs on AWS,
    # and list_models reads its list whether or not the stage names models to call (the deployed calls'
    # test found the dev stage's list refused when the grant came with named models only).
    assert who_may(dev, LIST_ACTION) == who_may(chosen, LIST_ACTION) == MAY_LIST_MODELS == {"api", "mcp"}


# -- the function ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_the_reason_function_has_its_measured_memory_and_the_longest_timeout(
    synthesized: Synthesized, stage: str
) -> None:
    # 1,024 MB: 130 MB measured at the peak (benchmarks/reason_memory.py), with Lambda's runtime about
    # 190 MB, and the CPU a first step needs (the figures are beside memory_mb in
    # parley.infrastructure.functions).
    template = synthesized.templates[stage]
    layer_id, _ = only(template, "AWS::Lambda::LayerVersion")
    _, function = function_named_in(template, "reason")
    props = function["Properties"]

    assert props["FunctionName"] == f"parley-{stage}-reason"
    assert (props["MemorySize"], props["Timeout"]) == (1024, 900)
    assert props["Timeout"] == max(d.timeout_s for d in FUNCTIONS) == 900  # Lambda's longest
    assert props["Handler"] == "handler.handler"
    assert props["Layers"] == [{"Ref": layer_id}]
    assert props["TracingConfig"] == {"Mode": "Active"}
    assert props["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == "parley"
    log_group = template.to_json()["Resources"][props["LoggingConfig"]["LogGroup"]["Ref"]]
    assert log_group["Properties"]["RetentionInDays"] == (90 if stage == "prod" else 14)


def test_the_reason_function_keeps_content_and_uses_the_runtime(dev: Template) -> None:
    assert "reason" in MAY_KEEP_CONTENT
    assert "reason" in who_may(dev, "s3:PutObject")
    assert "reason" in who_may(dev, "dynamodb:UpdateItem")
    assert "reason" in who_may(dev, "ssm:GetParameter")


# -- who starts it, and the run wait ---------------------------------------------------------------------


def test_only_the_functions_that_start_or_take_up_reasoning_runs_may_invoke_the_reason_function(
    dev: Template, chosen: Template
) -> None:
    for template in (dev, chosen):
        invokers = {d.name for d in FUNCTIONS if REASON_ARN in resources_for(template, d.name, INVOKE)}
        (statement,) = [s for s in function_statements(template, "api") if REASON_ARN in s["Resource"]]

        # A run started (api, mcp, workflow); an agent run's next step after its request's answer (api,
        # mcp), expiry (timer) or backstop (settle).
        assert invokers == MAY_REASON == {"api", "mcp", "workflow", "timer", "settle"}
        assert (statement["Action"], statement["Resource"]) == ([INVOKE], [REASON_ARN])
    # Nothing else may invoke it either: no resource policy names it (the API's permissions are the
    # api and authorizer functions').
    reason_id, _ = function_named_in(dev, "reason")
    for permission in dev.find_resources("AWS::Lambda::Permission").values():
        assert permission["Properties"]["FunctionName"] != get_att(reason_id)
        assert permission["Properties"]["FunctionName"] != {"Ref": reason_id}


def test_the_api_knows_the_reason_function_and_the_run_wait_and_nothing_else_does(dev: Template) -> None:
    variables = variables_of(dev, "api")

    assert render(variables[REASON_FUNCTION_ARN_VARIABLE]) == REASON_ARN
    assert variables[RUN_WAIT_SECONDS_VARIABLE] == "25"
    for definition in FUNCTIONS:
        if definition.name not in MAY_REASON:
            assert REASON_FUNCTION_ARN_VARIABLE not in variables_of(dev, definition.name)
            assert RUN_WAIT_SECONDS_VARIABLE not in variables_of(dev, definition.name)


def test_the_run_wait_ends_well_before_the_apis_integration_timeout(dev: Template) -> None:
    timeouts = {
        method["Properties"]["Integration"]["TimeoutInMillis"] / 1000
        for method in dev.find_resources("AWS::ApiGateway::Method").values()
    }
    assert len(timeouts) == 1  # the api's methods and the MCP front door's
    (integration_timeout,) = timeouts

    assert float(variables_of(dev, "api")[RUN_WAIT_SECONDS_VARIABLE]) == DEFAULT_RUN_WAIT_SECONDS == 25
    assert integration_timeout - RUN_WAIT_MARGIN_SECONDS >= DEFAULT_RUN_WAIT_SECONDS
    assert integration_timeout == INTEGRATION_TIMEOUT_SECONDS
    assert run_wait_variable(75) == "75"
    assert run_wait_variable(12.5) == "12.5"


@pytest.mark.parametrize(("seconds", "integration_timeout"), [(76, 80), (25, 29), (0, 80), (-1, 80)])
def test_a_run_wait_the_api_cannot_answer_after_fails_the_synth(
    seconds: float, integration_timeout: int
) -> None:
    # API Gateway's default integration timeout (29 s) leaves 24 s at most.
    with pytest.raises(ValueError, match="run wait"):
        run_wait_variable(seconds, integration_timeout)


# -- a run is never run twice by Lambda ------------------------------------------------------------------


def test_a_runs_failed_invocation_is_not_retried_and_goes_to_its_queue(dev: Template) -> None:
    reason_id, _ = function_named_in(dev, "reason")
    queue_id, queue = only(dev, "AWS::SQS::Queue", {"QueueName": "parley-dev-reason-failures"})
    _, invoke_config = only(dev, "AWS::Lambda::EventInvokeConfig", {"FunctionName": {"Ref": reason_id}})
    config = invoke_config["Properties"]

    assert config["MaximumRetryAttempts"] == 0
    # Longer than a run's own bound (10 minutes), and no longer than its function may run.
    assert 600 < config["MaximumEventAgeInSeconds"] <= function_named("reason").timeout_s
    assert config["DestinationConfig"] == {"OnFailure": {"Destination": get_att(queue_id)}}
    # (and the timer queue: a reasoning run that asks a person schedules its request's expiry)
    timer_queue_id, _ = only(dev, "AWS::SQS::Queue", {"QueueName": "parley-dev-timer-queue"})
    assert sorted(resources_for(dev, "reason", "sqs:SendMessage")) == sorted(
        [f"${{{queue_id}.Arn}}", f"${{{timer_queue_id}.Arn}}"]
    )
    assert queue["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600
    assert dev.to_json()["Outputs"]["ReasonFailuresQueueUrl"]["Value"] == {"Ref": queue_id}


def test_a_run_in_the_failure_queue_and_a_failing_reason_function_raise_alarms(dev: Template) -> None:
    reason_id, _ = function_named_in(dev, "reason")
    queue_id, _ = only(dev, "AWS::SQS::Queue", {"QueueName": "parley-dev-reason-failures"})
    alarms = [a["Properties"] for a in dev.find_resources("AWS::CloudWatch::Alarm").values()]
    names = {a["AlarmName"]: a for a in alarms}

    assert {
        "parley-dev-reason-errors",
        "parley-dev-reason-throttles",
        "parley-dev-reason-failures-waiting",
    } <= set(names)
    assert names["parley-dev-reason-errors"]["Dimensions"][0]["Value"] == {"Ref": reason_id}
    assert render(names["parley-dev-reason-failures-waiting"]["Dimensions"][0]["Value"]) == (
        f"${{{queue_id}.QueueName}}"
    )


# -- model calls -----------------------------------------------------------------------------------------


def test_without_bedrock_models_no_function_may_call_bedrock(dev: Template, prod: Template) -> None:
    for template in (dev, prod):
        assert bedrock_statements(template) == []
        assert who_may(template, "bedrock:InvokeModel") == set()


def test_only_the_reason_function_calls_the_named_bedrock_models_and_only_them(chosen: Template) -> None:
    (statement,) = bedrock_statements(chosen)

    assert who_may(chosen, "bedrock:InvokeModel") == MAY_CALL_MODELS == {"reason"}
    assert who_may(chosen, "bedrock:InvokeModelWithResponseStream") == {"reason"}
    assert statement["Effect"] == "Allow"
    assert sorted(statement["Action"]) == sorted(MODEL_ACTIONS)
    assert resources_for(chosen, "reason", "bedrock:InvokeModel") == [
        # A foundation model: in the stage's region only.
        REGION_MODEL + "anthropic.claude-sonnet-4-5-20250929-v1:0",
        # A geography's profile: the profile in the stage's region, and its model wherever it routes.
        PROFILE + "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ANY_REGION_MODEL + "anthropic.claude-sonnet-4-5-20250929-v1:0",
        # The global profile: the same.
        PROFILE + "global.anthropic.claude-haiku-4-5-20251001-v1:0",
        ANY_REGION_MODEL + "anthropic.claude-haiku-4-5-20251001-v1:0",
    ]


def test_no_model_grant_is_wider_than_one_model(chosen: Template) -> None:
    for statement in bedrock_statements(chosen):
        assert not any(a.endswith("*") for a in as_list(statement["Action"]))
        for resource in render(as_list(statement["Resource"])):
            assert resource != "*"
            assert not resource.endswith("*")  # no model or profile by prefix
            assert resource.rsplit("/", 1)[1] in BEDROCK_MODELS or any(
                routed_model(model) == resource.rsplit("/", 1)[1] for model in BEDROCK_MODELS
            )


def test_the_profiles_models_in_every_region_are_each_acknowledged_and_nothing_else_is() -> None:
    # The guard of the nag test of the ``options`` stack: the finding exists until it is accepted, and
    # the acknowledgement names it exactly.
    stack = Stack(App(), "Probe")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=list(MODEL_ACTIONS), resources=model_arns(stack, BEDROCK_MODELS))
    )
    before = [v.rule_name for v in AwsSolutionsChecks().validate_scope(stack).violations]
    for model in BEDROCK_MODELS:
        if routed_model(model) is not None:
            accept(role, routed_model_finding(model), "probe")
    after = [v.rule_name for v in AwsSolutionsChecks().validate_scope(stack).violations]

    assert sorted(before) == sorted(
        [
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/"
            "anthropic.claude-sonnet-4-5-20250929-v1:0]",
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/"
            "anthropic.claude-haiku-4-5-20251001-v1:0]",
        ]
    )
    assert after == []


@pytest.mark.parametrize(
    ("model_id", "routed"),
    [
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", None),
        ("amazon.nova-pro-v1:0", None),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("eu.amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"),
        ("apac.anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0"),
        ("us-gov.anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-haiku-20240307-v1:0"),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic.claude-haiku-4-5-20251001-v1:0"),
    ],
)
def test_a_profile_routes_to_its_id_without_the_geography(model_id: str, routed: str | None) -> None:
    assert bedrock_model_id(model_id) == model_id
    assert routed_model(model_id) == routed


@pytest.mark.parametrize(
    "text",
    [
        "sonnet",  # an alias of the operator configuration, not a Bedrock id
        "bedrock-anthropic/us.anthropic.claude-sonnet-4-5-20250929-v1:0",  # a reasoning function's reference
        "anthropic.*",
        "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
        "us.claude",
        "anthropic.claude sonnet",
    ],
)
def test_what_is_no_bedrock_model_id_is_refused(text: str) -> None:
    with pytest.raises(BedrockModelError, match="Bedrock"):
        bedrock_model_id(text)


def test_the_context_names_the_models_comma_separated_each_once() -> None:
    chosen = options_from_context(
        {
            "bedrock_models": " anthropic.claude-sonnet-4-5-20250929-v1:0 ,"
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0,anthropic.claude-sonnet-4-5-20250929-v1:0,"
        }.get
    )

    assert chosen.bedrock_models == (
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    )
    assert options_from_context({}.get).bedrock_models == ()
    assert options_from_context({"bedrock_models": ""}.get).bedrock_models == ()
    with pytest.raises(OptionsError, match=r"context bedrock_models: 'anthropic\.\*' is not a Bedrock"):
        options_from_context({"bedrock_models": "anthropic.claude-x-v1:0,anthropic.*"}.get)


# -- the synth -------------------------------------------------------------------------------------------


def test_the_synth_with_models_named_looks_nothing_up(synthesized: Synthesized) -> None:
    # Offline: no context lookup (the ARNs are built from the ids), and no stack is bound to an account.
    assert synthesized.missing == []
    for stack in synthesized.stacks.values():
        assert stack.environment == "aws://unknown-account/unknown-region"
    assert synthesized.errors["options"] == []
