"""The local table has the listings' indexes of ``parley.infrastructure.table`` (issue 31), as the
stack's table has them (``tests/cdk/test_listing_indexes.py``)."""

from __future__ import annotations

from moto import mock_aws

from parley.infrastructure.table import FILTER_INDEXES, TABLE, filter_index
from parley.local.aws import create_table, local_dynamodb_client


def test_the_local_table_has_every_index_with_its_keys_and_projection() -> None:
    with mock_aws():
        client = local_dynamodb_client()
        described = client.describe_table(TableName=create_table(client))["Table"]

    indexes = {index["IndexName"]: index for index in described.get("GlobalSecondaryIndexes", [])}
    assert sorted(indexes) == sorted(index.name for index in TABLE.indexes)
    for slot in FILTER_INDEXES:
        assert [key["AttributeName"] for key in indexes[slot.name]["KeySchema"]] == [
            slot.partition_key,
            slot.sort_key,
        ]
        assert indexes[slot.name]["Projection"]["ProjectionType"] == "INCLUDE"


def test_each_combination_of_a_lists_filters_has_a_slot_of_its_own() -> None:
    names = ("type", "name", "status")
    chosen = [{"type"}, {"name"}, {"status"}, {"type", "name"}, {"type", "status"}, {"name", "status"}]
    slots = [filter_index(names, c).name for c in [*chosen, set(names)]]

    assert sorted(slots) == sorted(index.name for index in FILTER_INDEXES)
