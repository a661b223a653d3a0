"""Workflows on AWS (``workflow-format.md``, "On AWS, and what a caller can see of it"): the one role every
workflow's state machine runs as, and what the functions may do with the stage's workflow machines.

The machines are not in the stack: the api function (and mcp, and the workflow function for a workflow a
workflow calls) creates one Standard state machine per workflow and publishes a version per definition
at run time (``parley.aws.workflows``). Each is named ``parley-<stage>-`` (``PARLEY_WORKFLOW_PREFIX``)
followed by the name ``parley.workflow.running.machine_name`` gives, which starts with
:data:`MACHINE_NAMES`; the grants name exactly that (``parley-<stage>-wf-*``), so they reach neither the
stage's run state machine (``parley-<stage>-runs``) nor another stage's machines.

- The role (:attr:`WorkflowMachines.role`) is assumed by Step Functions and may invoke the workflow
  function, unqualified, and nothing else: the compiled machines' only tasks are that function's.
- ``MAY_RUN_WORKFLOWS`` (:meth:`WorkflowMachines.allow_running`): create and update the machines,
  publish, list and read their versions, start executions of them, read and stop the executions, and
  pass that one role to Step Functions.
- ``MAY_ANSWER_CALLS`` (:meth:`WorkflowMachines.allow_answering`): SendTaskSuccess/SendTaskFailure on the
  workflow machines' tasks, as the run state machine's are granted (``parley_cdk.waiting``).
- :meth:`WorkflowMachines.tell_endings`: an EventBridge rule sends the workflow function each execution
  of the stage's machines that Step Functions itself ended (``FAILED``, ``TIMED_OUT``: a payload past
  256 KiB, the history's bound, its own timeout), so that no run is left ``started`` by it.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from parley.executions.workflow import STATUS_CHANGE
from parley.infrastructure.functions import (
    WORKFLOW_FUNCTION_ARN_VARIABLE,
    WORKFLOW_PREFIX_VARIABLE,
    WORKFLOW_ROLE_ARN_VARIABLE,
)
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings
from parley_cdk.waiting import TASK_RESPONSE_ACTIONS

STATES_PRINCIPAL: Final = "states.amazonaws.com"
#: How every workflow machine's name goes on after the stage's prefix (``machine_name``'s ``wf-``).
MACHINE_NAMES: Final = "wf-"
#: On the machines and their versions: make a machine, publish a version of it (CreateStateMachine and
#: UpdateStateMachine with ``publish`` take PublishStateMachineVersion too), find a version again by its
#: description, and start an execution of a version.
MACHINE_ACTIONS: Final = (
    "states:CreateStateMachine",
    "states:UpdateStateMachine",
    "states:PublishStateMachineVersion",
    "states:ListStateMachineVersions",
    "states:DescribeStateMachine",
    "states:StartExecution",
)
#: The statuses of an execution that ended without its machine's end task.
ENDED_STATUSES: Final = ("FAILED", "TIMED_OUT")
ENDINGS_RETRY_ATTEMPTS: Final = 8
#: On the machines' executions: a run's state, its history, and its cancellation.
EXECUTION_ACTIONS: Final = (
    "states:DescribeExecution",
    "states:GetExecutionHistory",
    "states:StopExecution",
)


class WorkflowMachines(Construct):
    """The workflows' role, the ARNs of the stage's workflow machines, and the grants on them.

    ``function_arn`` is the workflow function's ARN from its name (its own environment names it, so a
    reference to the function would be a cycle).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StageSettings, function_arn: str
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        #: ``parley-<stage>-``: what ``PARLEY_WORKFLOW_PREFIX`` says.
        self.prefix = settings.resource_name("")
        #: Every workflow machine's name, as a pattern.
        self.names = f"{self.prefix}{MACHINE_NAMES}*"
        self.function_arn = function_arn

        def states_arn(resource: str, name: str) -> str:
            return stack.format_arn(
                service="states",
                resource=resource,
                resource_name=name,
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            )

        self.machines_arn = states_arn("stateMachine", self.names)
        self.versions_arn = states_arn("stateMachine", f"{self.names}:*")
        self.executions_arn = states_arn("execution", f"{self.names}:*")
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal(STATES_PRINCIPAL),
            description=f"Parley {settings.name}: a workflow's state machine invokes the workflow function",
        )
        self._shown = {
            arn: "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:" + shown
            for arn, shown in (
                (self.machines_arn, f"stateMachine:{self.names}"),
                (self.versions_arn, f"stateMachine:{self.names}:*"),
                (self.executions_arn, f"execution:{self.names}:*"),
            )
        }

    @property
    def environment(self) -> dict[str, str]:
        """The variables ``parley.aws.environment.workflows_from_environment`` reads."""
        return {
            WORKFLOW_PREFIX_VARIABLE: self.prefix,
            WORKFLOW_ROLE_ARN_VARIABLE: self.role.role_arn,
            WORKFLOW_FUNCTION_ARN_VARIABLE: self.function_arn,
        }

    def allow_invoking(self, workflow: lambda_.IFunction) -> None:
        """The role may invoke the workflow function (unqualified, as the machines name it), and nothing
        else."""
        self.role.add_to_principal_policy(
            iam.PolicyStatement(actions=["lambda:InvokeFunction"], resources=[workflow.function_arn])
        )

    def tell_endings(self, workflow: lambda_.IFunction) -> events.Rule:
        """The rule that sends the workflow function the stage's workflow executions Step Functions
        ended without their end task (the entry's ``ended``: ``parley.executions.workflow``)."""
        return events.Rule(
            self,
            "Endings",
            description="Parley: a workflow execution Step Functions failed or timed out ends its run",
            event_pattern=events.EventPattern(
                source=["aws.states"],
                detail_type=[STATUS_CHANGE],
                detail={
                    "status": list(ENDED_STATUSES),
                    "stateMachineArn": events.Match.prefix(self.machines_arn.removesuffix("*")),
                },
            ),
            targets=[
                targets.LambdaFunction(
                    workflow, retry_attempts=ENDINGS_RETRY_ATTEMPTS, max_event_age=Duration.hours(24)
                )
            ],
        )

    def allow_running(self, grantee: iam.IRole) -> None:
        """``grantee`` may make the stage's workflow machines and their versions, start, read and stop
        their executions, and pass the workflows' role (to Step Functions only)."""
        grantee.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(MACHINE_ACTIONS), resources=[self.machines_arn, self.versions_arn]
            )
        )
        grantee.add_to_principal_policy(
            iam.PolicyStatement(actions=list(EXECUTION_ACTIONS), resources=[self.executions_arn])
        )
        grantee.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["iam:PassRole"],
                resources=[self.role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": STATES_PRINCIPAL}},
            )
        )
        reason = (
            "Workflow state machines are made at run time, one per workflow, with a version per definition "
            'and an execution per run (workflow-format.md, "On AWS"): the wildcard stands for a workflow\'s '
            f"name, version or run under this stage's own prefix {self.names}, which neither the run state "
            "machine nor another stage's machines match."
        )
        for arn in (self.machines_arn, self.versions_arn, self.executions_arn):
            accept(grantee, f"AwsSolutions-IAM5[Resource::{self._shown[arn]}]", reason)

    def allow_answering(self, grantee: iam.IRole) -> None:
        """SendTaskSuccess/SendTaskFailure on the workflow machines' tasks (a called run's ending answers
        the workflow that waits for it), as the run state machine's are granted."""
        grantee.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(TASK_RESPONSE_ACTIONS), resources=[self.machines_arn, self.versions_arn]
            )
        )
        reason = (
            "A called run's ending answers the task token of the workflow that waits for it; the workflow "
            "machines are made at run time, so the wildcard stands for a workflow's name or version under "
            f"this stage's own prefix {self.names}, and only SendTaskSuccess/SendTaskFailure are given."
        )
        for arn in (self.machines_arn, self.versions_arn):
            accept(grantee, f"AwsSolutions-IAM5[Resource::{self._shown[arn]}]", reason)
