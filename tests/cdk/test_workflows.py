"""Workflows on AWS in the synthesized stacks (``parley_cdk.workflows``; workflow-format.md, "On AWS"):
the workflow function, the one role every workflow state machine runs as, who may make and run the
machines and pass that role, who may answer their tasks, and the variables that tell the functions."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks
from cfn import (
    STATE_MACHINE_ARN,
    as_list,
    function_named_in,
    function_statements,
    get_att,
    only,
    render,
    statements_of_role,
)
from conftest import Synthesized

from parley.definitions.model import PlaybookRef
from parley.infrastructure.functions import (
    FUNCTIONS,
    MAY_ANSWER_CALLS,
    MAY_RUN_WORKFLOWS,
    WITHOUT_RUNTIME,
    WORKFLOW_FUNCTION_ARN_VARIABLE,
    WORKFLOW_PREFIX_VARIABLE,
    WORKFLOW_ROLE_ARN_VARIABLE,
    function_named,
)
from parley.workflow.running import execution_arn, machine_name
from parley_cdk.settings import stage_settings
from parley_cdk.waiting import TASK_RESPONSE_ACTIONS
from parley_cdk.workflows import EXECUTION_ACTIONS, MACHINE_ACTIONS, MACHINE_NAMES, WorkflowMachines

pytestmark = pytest.mark.cdk

STATES = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:"
MACHINES = STATES + "stateMachine:parley-dev-wf-*"
VERSIONS = STATES + "stateMachine:parley-dev-wf-*:*"
EXECUTIONS = STATES + "execution:parley-dev-wf-*:*"
WORKFLOW_ARN = "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:parley-dev-workflow"


def workflows_role_id(template: Template) -> str:
    role_id, _ = only(
        template,
        "AWS::IAM::Role",
        {"Description": Match.string_like_regexp("a workflow's state machine invokes the workflow function")},
    )
    return role_id


def variables_of(template: Template, name: str) -> dict[str, Any]:
    _, function = function_named_in(template, name)
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return variables


def workflow_statements(template: Template, name: str) -> list[dict[str, Any]]:
    """Function ``name``'s statements on the workflow machines (or passing their role)."""
    role = f"${{{workflows_role_id(template)}.Arn}}"
    return [
        s
        for s in function_statements(template, name)
        if any(r in (MACHINES, VERSIONS, EXECUTIONS, role) for r in s["Resource"])
    ]


def deployed(value: str) -> str:
    """A rendered value as deployed in an account and region (``${AWS::Region}`` …), role ids as names."""
    for placeholder, actual in (
        ("${AWS::Partition}", "aws"),
        ("${AWS::Region}", "eu-west-1"),
        ("${AWS::AccountId}", "123456789012"),
    ):
        value = value.replace(placeholder, actual)
    return re.sub(r"\$\{(\w+)\.Arn\}", r"arn:aws:iam::123456789012:role/\1", value)


def matches(pattern: str, arn: str) -> bool:
    """Whether IAM's ``*`` pattern takes ``arn`` (``*`` is any run of characters, ``:`` included)."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), arn) is not None


# -- the function ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_the_workflow_function_is_deployed_from_its_folder(synthesized: Synthesized, stage: str) -> None:
    template = synthesized.templates[stage]
    layer_id, _ = only(template, "AWS::Lambda::LayerVersion")
    _, function = function_named_in(template, "workflow")
    props = function["Properties"]
    definition = function_named("workflow")

    assert definition.asset_dir == "functions/workflow"
    assert props["FunctionName"] == f"parley-{stage}-workflow"
    assert (props["Handler"], props["MemorySize"], props["Timeout"]) == (
        "handler.handler",
        definition.memory_mb,
        definition.timeout_s,
    )
    assert props["Layers"] == [{"Ref": layer_id}]
    assert props["TracingConfig"] == {"Mode": "Active"}


def test_the_workflow_functions_handler_is_the_workflow_entry() -> None:
    import importlib.util
    from pathlib import Path

    from parley.executions.workflow import handle_workflow

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "workflow_handler", root / function_named("workflow").handler
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    assert module.handler is handle_workflow


# -- the role the machines run as ------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["dev", "prod", "options"])
def test_one_role_for_every_workflow_machine_assumed_by_step_functions(
    synthesized: Synthesized, stage: str
) -> None:
    template = synthesized.templates[stage]
    role_id = workflows_role_id(template)
    role = template.to_json()["Resources"][role_id]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]

    assert (trust["Effect"], trust["Action"], trust["Principal"]) == (
        "Allow",
        "sts:AssumeRole",
        {"Service": "states.amazonaws.com"},
    )
    assert "ManagedPolicyArns" not in role and "Policies" not in role


def test_the_workflow_machines_may_invoke_the_workflow_function_and_nothing_else(dev: Template) -> None:
    workflow_id, _ = function_named_in(dev, "workflow")

    statements = statements_of_role(dev, workflows_role_id(dev))

    # Unqualified: the compiled machines name the function, not a version or alias (no ':*').
    assert [(s["Effect"], s["Action"], s["Resource"]) for s in statements] == [
        ("Allow", ["lambda:InvokeFunction"], [f"${{{workflow_id}.Arn}}"])
    ]
    assert "Condition" not in statements[0]


# -- who may make and run the machines -------------------------------------------------------------------


def test_the_functions_that_run_workflows_make_and_run_the_stages_machines_only(dev: Template) -> None:
    role = f"${{{workflows_role_id(dev)}.Arn}}"
    for definition in FUNCTIONS:
        statements = [
            s for s in workflow_statements(dev, definition.name) if "iam:PassRole" not in s["Action"]
        ]
        running = [
            (sorted(s["Action"]), s["Resource"])
            for s in statements
            if "states:CreateStateMachine" in s["Action"]
        ]
        executions = [
            (sorted(s["Action"]), s["Resource"]) for s in statements if "states:StopExecution" in s["Action"]
        ]
        passing = [s for s in function_statements(dev, definition.name) if role in s["Resource"]]
        if definition.name not in MAY_RUN_WORKFLOWS:
            assert running == executions == passing == [], definition.name
            continue
        assert running == [(sorted(MACHINE_ACTIONS), [MACHINES, VERSIONS])], definition.name
        assert executions == [(sorted(EXECUTION_ACTIONS), [EXECUTIONS])], definition.name
        (pass_role,) = passing
        assert (pass_role["Effect"], pass_role["Action"], pass_role["Resource"]) == (
            "Allow",
            ["iam:PassRole"],
            [role],
        )
        assert pass_role["Condition"] == {"StringEquals": {"iam:PassedToService": "states.amazonaws.com"}}
    assert {"api", "mcp", "timer", "workflow"} == MAY_RUN_WORKFLOWS
    # Nothing tags the machines, deletes them or runs them otherwise.
    assert set(MACHINE_ACTIONS) | set(EXECUTION_ACTIONS) == {
        "states:CreateStateMachine",
        "states:UpdateStateMachine",
        "states:PublishStateMachineVersion",
        "states:ListStateMachineVersions",
        "states:DescribeStateMachine",
        "states:StartExecution",
        "states:DescribeExecution",
        "states:GetExecutionHistory",
        "states:StopExecution",
    }


def test_the_functions_that_end_called_runs_answer_the_workflows_tokens_only(dev: Template) -> None:
    for definition in FUNCTIONS:
        answering = [
            (s["Action"], s["Resource"])
            for s in workflow_statements(dev, definition.name)
            if any(a in TASK_RESPONSE_ACTIONS for a in s["Action"])
        ]
        if definition.name in MAY_ANSWER_CALLS:
            assert answering == [(list(TASK_RESPONSE_ACTIONS), [MACHINES, VERSIONS])], definition.name
        else:
            assert answering == [], definition.name
    assert TASK_RESPONSE_ACTIONS == ("states:SendTaskSuccess", "states:SendTaskFailure")  # no heartbeat
    assert {"api", "mcp", "timer", "settle", "reason", "workflow"} == MAY_ANSWER_CALLS


def test_only_the_functions_that_run_workflows_may_pass_the_workflows_role(
    dev: Template, chosen: Template
) -> None:
    for template in (dev, chosen):
        role = f"${{{workflows_role_id(template)}.Arn}}"
        passers = {
            d.name
            for d in FUNCTIONS
            if any(
                "iam:PassRole" in s["Action"] and role in s["Resource"]
                for s in function_statements(template, d.name)
            )
        }
        assert passers == MAY_RUN_WORKFLOWS
    # No policy of the stack passes a role it does not name.
    for policy in dev.find_resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if "iam:PassRole" in as_list(statement["Action"]):
                assert "*" not in str(render(as_list(statement["Resource"])))
                assert "iam:PassedToService" in statement["Condition"]["StringEquals"]


def test_the_grants_reach_the_workflow_machines_and_nothing_else_of_the_stage() -> None:
    playbook = PlaybookRef("acme", "campaigns")
    machine = "parley-dev-" + machine_name(playbook, "brief-approval")
    machine_arn = STATES + "stateMachine:" + machine
    version = machine_arn + ":3"
    execution = execution_arn(version, "acme-campaigns-r-1")

    assert machine_name(playbook, "x").startswith(MACHINE_NAMES)
    assert matches(MACHINES, machine_arn) and matches(VERSIONS, version) and matches(EXECUTIONS, execution)
    assert not matches(VERSIONS, machine_arn)
    for elsewhere in (
        STATE_MACHINE_ARN,  # the run state machine, parley-dev-runs
        STATES + "execution:parley-dev-runs:acme-campaigns-r-1",
        STATES + "stateMachine:parley-prod-" + machine_name(playbook, "brief-approval"),
        STATES + "execution:parley-prod-" + machine_name(playbook, "brief-approval") + ":r-1",
    ):
        assert not any(matches(pattern, elsewhere) for pattern in (MACHINES, VERSIONS, EXECUTIONS)), elsewhere


def test_prod_grants_reach_prods_machines(prod: Template) -> None:
    prod_machines = MACHINES.replace("parley-dev-", "parley-prod-")
    (statement,) = [s for s in function_statements(prod, "api") if "states:CreateStateMachine" in s["Action"]]

    assert statement["Resource"] == [prod_machines, prod_machines + ":*"]


# -- what the functions are told -------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_every_function_with_a_runtime_knows_the_prefix_the_role_and_the_workflow_function(
    synthesized: Synthesized, stage: str
) -> None:
    template = synthesized.templates[stage]
    role_id = workflows_role_id(template)
    workflow_id, workflow = function_named_in(template, "workflow")
    for definition in FUNCTIONS:
        variables = variables_of(template, definition.name)
        if definition.name in WITHOUT_RUNTIME:
            assert not any(name.startswith("PARLEY_WORKFLOW") for name in variables)
            continue
        assert variables[WORKFLOW_PREFIX_VARIABLE] == f"parley-{stage}-"
        assert variables[WORKFLOW_ROLE_ARN_VARIABLE] == get_att(role_id)
        # The workflow function by its name's ARN (its own environment names it: no self-reference).
        assert render(variables[WORKFLOW_FUNCTION_ARN_VARIABLE]) == WORKFLOW_ARN.replace(
            "-dev-", f"-{stage}-"
        )
    assert workflow["Properties"]["FunctionName"] == f"parley-{stage}-workflow"
    assert render(get_att(workflow_id)) == f"${{{workflow_id}.Arn}}"


def test_the_port_built_from_those_variables_makes_machines_the_grants_reach(dev: Template) -> None:
    from parley.aws.environment import workflows_from_environment
    from parley.aws.workflows import StepFunctionsWorkflows

    variables = variables_of(dev, "api")
    environment = {
        name: deployed(str(render(variables[name])))
        for name in (WORKFLOW_PREFIX_VARIABLE, WORKFLOW_ROLE_ARN_VARIABLE, WORKFLOW_FUNCTION_ARN_VARIABLE)
    }
    workflows = workflows_from_environment(environment, client=object())
    assert isinstance(workflows, StepFunctionsWorkflows)
    name = machine_name(PlaybookRef("acme", "campaigns"), "a-workflow-with-a-name-long-enough-to-be-cut-" * 2)

    machine_arn = workflows.state_machine_arn(name)

    assert machine_arn.startswith("arn:aws:states:eu-west-1:123456789012:stateMachine:parley-dev-wf-")
    assert matches(deployed(MACHINES), machine_arn) and matches(deployed(VERSIONS), machine_arn + ":12")
    execution = workflows.execution_arn(machine_arn + ":12", "acme-campaigns-r-1")
    assert matches(deployed(EXECUTIONS), execution)
    assert workflows.workflow_function_arn == deployed(WORKFLOW_ARN)
    assert workflows.role_arn == deployed(f"${{{workflows_role_id(dev)}.Arn}}")


def test_the_stack_names_where_the_workflow_machines_are(dev: Template, prod: Template) -> None:
    assert dev.to_json()["Outputs"]["WorkflowStateMachines"]["Value"] == "parley-dev-wf-*"
    assert prod.to_json()["Outputs"]["WorkflowStateMachines"]["Value"] == "parley-prod-wf-*"


# -- cdk-nag ---------------------------------------------------------------------------------------------


def _probe(acknowledged: bool) -> list[str]:
    """The findings of a stack with the workflows' grants to one role: as made (acknowledged), or the
    same statements added without the acknowledgements."""
    stack = Stack(App(), "Probe")
    machines = WorkflowMachines(
        stack, "Workflows", settings=stage_settings("dev"), function_arn="arn:aws:lambda:r:1:function:f"
    )
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    if acknowledged:
        machines.allow_running(role)
        machines.allow_answering(role)
    else:
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=[*MACHINE_ACTIONS, *TASK_RESPONSE_ACTIONS],
                resources=[machines.machines_arn, machines.versions_arn],
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(EXECUTION_ACTIONS), resources=[machines.executions_arn])
        )
    return sorted(v.rule_name for v in AwsSolutionsChecks().validate_scope(stack).violations)


def test_the_workflow_grants_are_acknowledged_finding_by_finding_and_nothing_else_is() -> None:
    # The guard of the nag test of the stacks: the statements give exactly these findings, and the
    # grants as made acknowledge each one (and nothing wider).
    shown = "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:"

    assert _probe(acknowledged=False) == sorted(
        f"AwsSolutions-IAM5[Resource::{shown}{resource}]"
        for resource in (
            "stateMachine:parley-dev-wf-*",
            "stateMachine:parley-dev-wf-*:*",
            "execution:parley-dev-wf-*:*",
        )
    )
    assert _probe(acknowledged=True) == []


def test_an_execution_step_functions_ended_is_sent_to_the_workflow_function(dev: Template) -> None:
    _, rule = only(
        dev,
        "AWS::Events::Rule",
        {"Description": Match.string_like_regexp("failed or timed out ends its run")},
    )
    pattern = rule["Properties"]["EventPattern"]
    assert pattern["source"] == ["aws.states"]
    assert pattern["detail-type"] == ["Step Functions Execution Status Change"]
    assert pattern["detail"]["status"] == ["FAILED", "TIMED_OUT"]
    (prefix,) = pattern["detail"]["stateMachineArn"]
    assert render(prefix["prefix"]) == STATES + "stateMachine:parley-dev-wf-"
    (target,) = rule["Properties"]["Targets"]
    workflow_id, _ = function_named_in(dev, "workflow")
    assert render(target["Arn"]) == "${" + workflow_id + ".Arn}"
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 8
