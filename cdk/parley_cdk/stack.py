"""One stage of Parley: the table, the layer and functions, the API, wired with least-privilege grants."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from aws_cdk import CfnElement, CfnOutput, Stack
from constructs import Construct

from parley.infrastructure.table import TABLE_NAME_VARIABLE
from parley_cdk.api import BASE_PATH, HttpApi
from parley_cdk.compute import Compute
from parley_cdk.data import Data
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings


class ParleyStack(Stack):
    """``data`` + ``compute`` + ``api`` for one stage.

    ``repository`` is where ``functions/``, ``layers/`` and ``pyproject.toml`` are; ``environment`` is
    added to every function's own (table name, Powertools service name).
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
        self.compute = Compute(
            self,
            "Compute",
            settings=settings,
            repository=repository,
            environment={**(environment or {}), TABLE_NAME_VARIABLE: self.data.table.table_name},
        )
        self._grant_table_access()
        self.api = HttpApi(self, "Api", settings=settings, handler=self.compute.functions["api"])

        CfnOutput(self, "ApiUrl", value=self.api.rest_api.url_for_path(f"/{BASE_PATH}"))
        CfnOutput(self, "TableName", value=self.data.table.table_name)

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
