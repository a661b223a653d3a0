"""The one DynamoDB table: keys and indexes, read by the CDK stack and by the local server.

Single-table layout: every item of a playbook shares its partition, so a playbook is one key range.
The keys themselves (partition, sort and index keys of every item) are built and described in one
module, ``parley.infrastructure.keys``; this one declares the table's key attributes and indexes.

``gsi1`` serves every "newest first" list: its sort key starts with an ISO 8601 UTC time. ``gsi2``
serves a second view of the same items where one is needed (a run's history among the playbook's
events).

The filtered lists (issue 31: every listing reads in proportion to what it returns) read
:data:`FILTER_INDEXES`, ``gsi3`` to ``gsi5``: sparse, overloaded, and projecting only the keys (and
``expires_at``, the one attribute a list filters on after its key), so that they cost a write only
when an item enters or leaves them or changes its key, never on other updates. Each is a *slot*: a
list gives some of its filters a slot each (``parley.runs.items``: ``list_runs``' ``name``, ``status``
and ``type``; ``list_interactions``' ``to``; ``list_playbook_events``' ``type``), its i-th in
``gsi{3+i}``. An item of the list holds, in that slot's ``{index}pk``, the list's key with the item's
value of the filter (``parley.infrastructure.keys.filter_key``), and in ``{index}sk`` the list's sort
key. So ``GET …/runs?status=rejected`` reads the ``status`` slot from its newest entry on and stops at
its page; a listing given several filters reads the slot of the one it prefers and checks the others on
the items it reads, within a bounded read. Fewer slots than combinations keep writes cheap: every
entry costs a write unit when an item enters a slot, and two when it moves (an ended run's ``status``),
issue 31's follow-up on the inbox run's cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True)
class IndexDefinition:
    name: str
    partition_key: str
    sort_key: str
    #: ``ALL``, or ``INCLUDE`` (the keys and :attr:`included`).
    projection: str = "ALL"
    included: tuple[str, ...] = ()

    def projection_arguments(self) -> dict[str, Any]:
        """``Projection`` of boto3's ``create_table``."""
        if self.projection == "ALL":
            return {"ProjectionType": "ALL"}
        return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(self.included)}


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
                    "Projection": index.projection_arguments(),
                }
                for index in self.indexes
            ],
        }


#: The attribute a filtered list still filters on after its index's key (an open request's expiry).
FILTERED_AFTER_KEY: Final = ("expires_at",)

#: The filter slots (see above): ``gsi3`` to ``gsi5``, one for each filter a list gives a slot (at most
#: three a list).
FILTER_INDEXES: Final = tuple(
    IndexDefinition(
        name=f"gsi{number}",
        partition_key=f"gsi{number}pk",
        sort_key=f"gsi{number}sk",
        projection="INCLUDE",
        included=FILTERED_AFTER_KEY,
    )
    for number in range(3, 6)
)


TABLE: Final = TableDefinition(
    partition_key="pk",
    sort_key="sk",
    indexes=(
        IndexDefinition(name="gsi1", partition_key="gsi1pk", sort_key="gsi1sk"),
        IndexDefinition(name="gsi2", partition_key="gsi2pk", sort_key="gsi2sk"),
        *FILTER_INDEXES,
    ),
    ttl_attribute="ttl",
)

#: The environment variable that names the table in every function (and locally).
TABLE_NAME_VARIABLE: Final = "PARLEY_TABLE"
