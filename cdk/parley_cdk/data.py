"""The one DynamoDB table, built from ``parley.infrastructure.table.TABLE`` (the local runtime's too)."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from parley.infrastructure.table import TABLE
from parley_cdk.settings import StageSettings


def _string_key(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


class Data(Construct):
    """On-demand table with the definition's keys and indexes, point-in-time recovery and TTL."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StageSettings) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=_string_key(TABLE.partition_key),
            sort_key=_string_key(TABLE.sort_key),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TABLE.ttl_attribute,
            deletion_protection=settings.retain_data,
            removal_policy=settings.removal_policy,
        )
        for index in TABLE.indexes:
            self.table.add_global_secondary_index(
                index_name=index.name,
                partition_key=_string_key(index.partition_key),
                sort_key=_string_key(index.sort_key),
                projection_type=dynamodb.ProjectionType.ALL,
            )
