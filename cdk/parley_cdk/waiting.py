"""Waiting runs: the run's state machine and the scheduler's group and role (architecture.md, "The
shape"; "Everything timed goes through one scheduler port").

- :class:`Scheduling`: the EventBridge Scheduler group every schedule of the stage lives in, and the
  role schedules run as, which may invoke the timer function and nothing else.
- :class:`RunStateMachine`: the Standard state machine of ``parley.infrastructure.state_machine`` (the
  same ASL the local runtime executes), logged and traced, whose role may invoke the wait and settle
  functions and nothing else.

Both are named (``parley-<stage>-…``) so that their ARNs are known before they exist: every function's
environment names them, and the wait and settle functions are themselves referenced by the state
machine, so an ARN taken from the resource would make a dependency cycle.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from parley.infrastructure.state_machine import state_machine_definition
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings

SCHEDULER_PRINCIPAL: Final = "scheduler.amazonaws.com"
#: What answers a workflow's task token: a called run's output or error (never a heartbeat: none is used).
TASK_RESPONSE_ACTIONS: Final = ("states:SendTaskSuccess", "states:SendTaskFailure")
#: What ends a run's wait: every ending is written first, then told to the wait as a success.
WAIT_ENDING_ACTIONS: Final = ("states:SendTaskSuccess",)
#: What making and forgetting timed work takes: one-time schedules in the stage's group.
SCHEDULE_ACTIONS: Final = ("scheduler:CreateSchedule", "scheduler:DeleteSchedule")


def state_machine_name(settings: StageSettings) -> str:
    return settings.resource_name("runs")


def state_machine_arn(scope: Construct, settings: StageSettings) -> str:
    """The state machine's ARN from its name: known before the state machine exists."""
    return Stack.of(scope).format_arn(
        service="states",
        resource="stateMachine",
        resource_name=state_machine_name(settings),
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


def function_arn(scope: Construct, function_name: str) -> str:
    """A function's ARN from its name (the timer's own environment names it: no self-reference)."""
    return Stack.of(scope).format_arn(
        service="lambda",
        resource="function",
        resource_name=function_name,
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


class Scheduling(Construct):
    """The schedule group and the role its schedules run as."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StageSettings) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.group_name = settings.resource_name("timers")
        self.group = scheduler.ScheduleGroup(
            self, "Group", schedule_group_name=self.group_name, removal_policy=settings.removal_policy
        )
        group_arn = stack.format_arn(
            service="scheduler",
            resource="schedule-group",
            resource_name=self.group_name,
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )
        #: Every schedule of the group: what the api function may create and delete.
        self.schedules_arn = stack.format_arn(
            service="scheduler",
            resource="schedule",
            resource_name=f"{self.group_name}/*",
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )
        # Only this account's schedules of this group may assume it (the confused-deputy guard AWS
        # documents for EventBridge Scheduler execution roles).
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal(
                SCHEDULER_PRINCIPAL,
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnEquals": {"aws:SourceArn": group_arn},
                },
            ),
            description=f"Parley {settings.name}: schedules of {self.group_name} invoke the timer function",
        )

    def allow_invoking(self, target: lambda_.IFunction) -> None:
        """The role may invoke ``target`` (the timer function, unqualified), and nothing else."""
        self.role.add_to_principal_policy(
            iam.PolicyStatement(actions=["lambda:InvokeFunction"], resources=[target.function_arn])
        )

    def allow_scheduling(self, grantee: iam.IGrantable) -> None:
        """``grantee`` may create and delete the group's schedules, and pass this role to them."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(SCHEDULE_ACTIONS), resources=[self.schedules_arn])
        )
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["iam:PassRole"],
                resources=[self.role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": SCHEDULER_PRINCIPAL}},
            )
        )


class RunStateMachine(Construct):
    """The Standard state machine whose executions hold waiting runs."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StageSettings,
        wait: lambda_.IFunction,
        settle: lambda_.IFunction,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            description=f"Parley {settings.name}: a run's execution invokes the wait and settle functions",
        )
        # The tasks invoke the unqualified functions only (no version or alias: no ':*').
        self.role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["lambda:InvokeFunction"], resources=[wait.function_arn, settle.function_arn]
            )
        )
        log_group = logs.LogGroup(
            self, "Logs", retention=settings.log_retention, removal_policy=settings.removal_policy
        )
        definition = state_machine_definition(wait.function_arn, settle.function_arn)
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=state_machine_name(settings),
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_string(stack.to_json_string(definition)),
            role=self.role,
            tracing_enabled=True,
            # Every event, but no execution data: the input and output carry answers.
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False),
            removal_policy=settings.removal_policy,
        )
        self.state_machine_arn = state_machine_arn(self, settings)
        accept(
            self.role,
            "AwsSolutions-IAM5[Resource::*]",
            "Logging to CloudWatch Logs (logs:CreateLogDelivery and the other log-delivery actions) and "
            "X-Ray tracing (xray:PutTraceSegments, PutTelemetryRecords, GetSampling*) have no resource-level "
            "permissions: AWS requires Resource '*' for them. CDK adds exactly these for logs and tracing.",
        )

    def allow_starting(self, grantee: iam.IGrantable) -> None:
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["states:StartExecution"], resources=[self.state_machine_arn])
        )

    def allow_ending_waits(self, grantee: iam.IGrantable) -> None:
        """SendTaskSuccess on this state machine's tasks: every ending is told to the wait as a success."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(WAIT_ENDING_ACTIONS), resources=[self.state_machine_arn])
        )
