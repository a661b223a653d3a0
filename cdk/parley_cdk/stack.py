"""One stage of Parley: the table, the layer and functions, the run's state machine and the scheduler, the
API, wired with least-privilege grants."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from aws_cdk import CfnElement, CfnOutput, Stack
from constructs import Construct

from parley.infrastructure.functions import (
    MAY_END_WAITS,
    MAY_SCHEDULE,
    MAY_START_RUNS,
    SCHEDULE_GROUP_VARIABLE,
    SCHEDULER_ROLE_ARN_VARIABLE,
    STATE_MACHINE_ARN_VARIABLE,
    TIMER_FUNCTION_ARN_VARIABLE,
)
from parley.infrastructure.table import TABLE_NAME_VARIABLE
from parley_cdk.api import BASE_PATH, HttpApi
from parley_cdk.compute import Compute
from parley_cdk.data import Data
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings
from parley_cdk.waiting import RunStateMachine, Scheduling, function_arn, state_machine_arn


class ParleyStack(Stack):
    """``data`` + ``scheduling`` + ``compute`` + ``runs`` + ``api`` for one stage.

    ``repository`` is where ``functions/``, ``layers/`` and ``pyproject.toml`` are; ``environment`` is
    added to every function's own (the table, the state machine, the scheduler: see
    ``parley.infrastructure.functions``; the Powertools service name).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StageSettings,
        repository: Path,
        environment: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description=f"Parley ({settings.name})",
            termination_protection=settings.retain_data,
            **kwargs,
        )
        self.settings = settings
        self.data = Data(self, "Data", settings=settings)
        self.scheduling = Scheduling(self, "Scheduling", settings=settings)
        self.compute = Compute(
            self,
            "Compute",
            settings=settings,
            repository=repository,
            environment={
                **(environment or {}),
                TABLE_NAME_VARIABLE: self.data.table.table_name,
                STATE_MACHINE_ARN_VARIABLE: state_machine_arn(self, settings),
                SCHEDULE_GROUP_VARIABLE: self.scheduling.group_name,
                SCHEDULER_ROLE_ARN_VARIABLE: self.scheduling.role.role_arn,
                TIMER_FUNCTION_ARN_VARIABLE: function_arn(self, settings.resource_name("timer")),
            },
        )
        functions = self.compute.functions
        self.runs = RunStateMachine(
            self, "Runs", settings=settings, wait=functions["wait"], settle=functions["settle"]
        )
        self._grant_table_access()
        self._grant_waiting()
        self.api = HttpApi(self, "Api", settings=settings, handler=functions["api"])

        CfnOutput(self, "ApiUrl", value=self.api.rest_api.url_for_path(f"/{BASE_PATH}"))
        CfnOutput(self, "TableName", value=self.data.table.table_name)
        CfnOutput(self, "StateMachineArn", value=self.runs.state_machine.state_machine_arn)

    def _grant_table_access(self) -> None:
        """Every function reads and writes the one table and its indexes, and nothing else in DynamoDB."""
        table = self.data.table
        for function in self.compute.functions.values():
            table.grant_read_write_data(function)
        logical_id = self.get_logical_id(cast(CfnElement, table.node.default_child))
        accept(
            self.compute,
            f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/index/*]",
            "The grant covers this table's own indexes (a Query on gsi1 serves every newest-first list): "
            "the wildcard stands for an index name under this one table's ARN, nothing wider.",
        )

    def _grant_waiting(self) -> None:
        """Only the functions that must (``parley.infrastructure.functions``: ``MAY_*``, which the local
        runtime enforces too):

        - ``api`` starts a run's execution (run_definition), schedules its expiry and forgets it;
        - ``api`` (answer, cancel), ``wait`` (a request that ended before its token was kept) and
          ``timer`` (expiry) end waits through their tokens; ``settle`` runs after the wait and may not;
        - the schedules may invoke the timer function only.
        """
        functions = self.compute.functions
        for name in sorted(MAY_START_RUNS):
            self.runs.allow_starting(functions[name])
        for name in sorted(MAY_END_WAITS):
            self.runs.allow_ending_waits(functions[name])
        for name in sorted(MAY_SCHEDULE):
            self.scheduling.allow_scheduling(functions[name])
            role = functions[name].role
            assert role is not None  # the factory gives every function its own role
            accept(
                role,
                "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:"
                f"schedule/{self.scheduling.group_name}/*]",
                "Each run's expiry is a one-time schedule named after the run, created and deleted at run "
                "time: the wildcard stands for a schedule name inside this stage's own group, nothing wider.",
            )
        self.scheduling.allow_invoking(functions["timer"])
