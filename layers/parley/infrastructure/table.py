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

The filtered lists (issue 31: every listing reads in proportion to what it returns) each read one of
:data:`FILTER_INDEXES`, ``gsi3`` to ``gsi9``: sparse, overloaded, and projecting only the keys (and
``expires_at``, the one attribute a list filters on after its key), so that they cost a write only
when an item enters or leaves them or changes its key, never on other updates. A list with filters
``names`` (such as ``list_runs``' ``type``, ``name`` and ``status``) gives each combination of them
one slot (:func:`filter_index`): an item of the list holds, in that slot's ``{index}pk``, the list's
key with the item's values of the combination, and in ``{index}sk`` the list's sort key
(``parley.runs.items.filter_keys``). So ``GET …/runs?type=reasoning&status=rejected`` reads the slot
of ``(type, status)`` from its newest entry on and stops at its page.
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

#: The filter slots (see above): ``gsi3`` to ``gsi9``, one for each of the at most 7 combinations of a
#: list's at most 3 filters.
FILTER_INDEXES: Final = tuple(
    IndexDefinition(
        name=f"gsi{number}",
        partition_key=f"gsi{number}pk",
        sort_key=f"gsi{number}sk",
        projection="INCLUDE",
        included=FILTERED_AFTER_KEY,
    )
    for number in range(3, 10)
)


def filter_index(names: tuple[str, ...], chosen: frozenset[str] | set[str]) -> IndexDefinition:
    """The slot of the combination ``chosen`` (not empty) of a list whose filters are ``names`` (at most
    three, in a fixed order): the combination's bits, in the order of ``names``, number the slot."""
    if not chosen or not chosen <= set(names) or len(names) > 3:
        raise ValueError(f"no filter slot for {sorted(chosen)} of {names}")
    mask = sum(1 << position for position, name in enumerate(names) if name in chosen)
    return FILTER_INDEXES[mask - 1]


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
