"""The local table has the listings' indexes of ``parley.infrastructure.table`` (issue 31), as the
stack's table has them (``tests/cdk/test_listing_indexes.py``)."""

from __future__ import annotations

from moto import mock_aws

from parley.infrastructure.table import FILTER_INDEXES, TABLE
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


def test_each_list_gives_its_slots_indexes_of_their_own_and_reads_one_for_any_combination() -> None:
    from itertools import combinations

    from parley.runs.items import EVENT_SLOTS, REQUEST_SLOTS, RUN_SLOTS, chosen_slot, slot_index

    for slots in (RUN_SLOTS, REQUEST_SLOTS, EVENT_SLOTS):
        indexes = [slot_index(slots, name).name for name in slots]
        assert len(set(indexes)) == len(slots) and set(indexes) <= {i.name for i in FILTER_INDEXES}
    assert {slot_index(RUN_SLOTS, name).name for name in RUN_SLOTS} == {i.name for i in FILTER_INDEXES}
    # Given several filters, a list of runs reads the slot of the one it prefers (name, then status).
    for size in (1, 2, 3):
        for chosen in combinations(("type", "name", "status"), size):
            expected = "name" if "name" in chosen else "status" if "status" in chosen else "type"
            assert chosen_slot(RUN_SLOTS, dict.fromkeys(chosen, "x")) == expected
    assert chosen_slot(REQUEST_SLOTS, {"function": "approve"}) is None  # the unfiltered list, checked


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


def test_items_of_an_earlier_layout_of_the_slots_are_given_todays_once() -> None:
    """Items a data folder kept with the seven slots of an earlier layout (``gsi3`` to ``gsi9``, one a
    combination of filters) lose the slots of no index and get today's."""
    from parley.definitions.model import PlaybookRef
    from parley.local.aws import backfill_listing_indexes
    from parley.runs.items import run_slots

    playbook = PlaybookRef("acme", "campaigns")
    run_id = "0f0e0d0c-0b0a-4908-8706-050403020100"
    at = "2026-10-17T10:18:42.000Z"
    slots = run_slots(playbook, "interaction", "approve", "started", at, run_id)
    kept = {
        "pk": {"S": "PB#acme#campaigns"},
        "sk": {"S": f"RUN#{run_id}"},
        "kind": {"S": "run"},
        "run_id": {"S": run_id},
        "type": {"S": "interaction"},
        "name": {"S": "approve"},
        "status": {"S": "started"},
        "started_at": {"S": at},
        **{f"gsi{n}pk": {"S": f'PB#acme#campaigns#RUN?["earlier-{n}"]'} for n in range(3, 10)},
        **{f"gsi{n}sk": {"S": f"{at}#{run_id}"} for n in range(3, 10)},
    }
    with mock_aws():
        client = local_dynamodb_client()
        table = create_table(client)
        client.put_item(TableName=table, Item=kept)

        given = [backfill_listing_indexes(table), backfill_listing_indexes(table)]
        item = client.get_item(TableName=table, Key={"pk": kept["pk"], "sk": kept["sk"]})["Item"]

    assert given == [1, 0]
    assert {name: value["S"] for name, value in item.items() if name.startswith("gsi")} == slots
