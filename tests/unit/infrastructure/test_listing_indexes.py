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


def test_items_kept_before_the_slots_are_given_them_once() -> None:
    from parley.definitions.model import PlaybookRef
    from parley.local.aws import backfill_listing_indexes
    from parley.runs.items import run_slots

    playbook = PlaybookRef("acme", "campaigns")
    run_id = "0f0e0d0c-0b0a-4908-8706-050403020100"
    slots = run_slots(playbook, "interaction", "approve", "started", "2026-10-17T10:18:42.000Z", run_id)
    kept = {
        "pk": {"S": "PB#acme#campaigns"},
        "sk": {"S": f"RUN#{run_id}"},
        "kind": {"S": "run"},
        "run_id": {"S": run_id},
        "type": {"S": "interaction"},
        "name": {"S": "approve"},
        "status": {"S": "started"},
        "started_at": {"S": "2026-10-17T10:18:42.000Z"},
    }
    with mock_aws():
        client = local_dynamodb_client()
        table = create_table(client)
        client.put_item(TableName=table, Item=kept)

        given = [backfill_listing_indexes(table), backfill_listing_indexes(table)]
        item = client.get_item(TableName=table, Key={"pk": kept["pk"], "sk": kept["sk"]})["Item"]

    assert given == [1, 0]
    assert {name: item[name]["S"] for name in slots} == slots
