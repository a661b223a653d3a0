"""The one DynamoDB table: keys and indexes, read by the CDK stack and by the local server.

Single-table layout (items of one playbook share a partition, so a playbook is one key range):

- definition head (the latest version): pk ``PB#{org}#{playbook}``, sk ``DEF#{type}#{name}``;
  gsi1pk ``PB#{org}#{playbook}#DEF#{type}``, gsi1sk ``{created_at}#{name}``.
- definition version (immutable): pk ``PB#{org}#{playbook}``, sk ``DEFV#{type}#{name}#{version:08d}``.
- run: sk ``RUN#{run_id}``; gsi1pk ``PB#…#RUN``, gsi1sk ``{started_at}#{run_id}``.
- request: sk ``REQ#{run_id}``; gsi1pk ``PB#…#REQ``, gsi1sk ``{requested_at}#{run_id}`` while it is open
  (removed when it leaves the inbox, so the open list is the index).
- event: sk ``EVT#{event_id}``; gsi2pk ``RUN#{org}#{playbook}#{run_id}``, gsi2sk ``{event_id}`` (the history).
- the playbook's open-requests counter: sk ``COUNTER#open_requests``, attribute ``count``.

Later items (deliveries, conversations) add their own prefixes under the same keys.
``gsi1`` serves every "newest first" list: its sort key starts with an ISO 8601 UTC time. ``gsi2``
serves a second view of the same items where one is needed (a run's history among the playbook's
events).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True)
class IndexDefinition:
    name: str
    partition_key: str
    sort_key: str


@dataclass(frozen=True)
class TableDefinition:
    partition_key: str
    sort_key: str
    indexes: tuple[IndexDefinition, ...]
    #: Attribute holding an epoch-seconds expiry, for DynamoDB TTL (moto never deletes; AWS does).
    ttl_attribute: str

    def create_table_arguments(self, table_name: str) -> dict[str, Any]:
        """Arguments for boto3 ``create_table`` (on-demand), as the local runtime creates it."""
        attributes = {self.partition_key, self.sort_key}
        for index in self.indexes:
            attributes.update((index.partition_key, index.sort_key))
        return {
            "TableName": table_name,
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [
                {"AttributeName": self.partition_key, "KeyType": "HASH"},
                {"AttributeName": self.sort_key, "KeyType": "RANGE"},
            ],
            "AttributeDefinitions": [
                {"AttributeName": name, "AttributeType": "S"} for name in sorted(attributes)
            ],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": index.name,
                    "KeySchema": [
                        {"AttributeName": index.partition_key, "KeyType": "HASH"},
                        {"AttributeName": index.sort_key, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }
                for index in self.indexes
            ],
        }


TABLE: Final = TableDefinition(
    partition_key="pk",
    sort_key="sk",
    indexes=(
        IndexDefinition(name="gsi1", partition_key="gsi1pk", sort_key="gsi1sk"),
        IndexDefinition(name="gsi2", partition_key="gsi2pk", sort_key="gsi2sk"),
    ),
    ttl_attribute="ttl",
)

#: The environment variable that names the table in every function (and locally).
TABLE_NAME_VARIABLE: Final = "PARLEY_TABLE"
