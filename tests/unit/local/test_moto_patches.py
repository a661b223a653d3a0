"""moto patched for the local runtime (``parley.local.moto_patches``): transactions roll back by the
before-images of the items they write, not by a copy of the whole table."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from parley.local.aws import create_table, local_session
from parley.local.executor import local_aws

TABLE = "parley-patch-test"


@pytest.fixture
def client() -> Iterator[Any]:
    with local_aws():
        dynamodb = local_session().client("dynamodb")
        create_table(dynamodb, TABLE)
        yield dynamodb


def key(sk: str) -> dict[str, Any]:
    return {"pk": {"S": "PB#acme#campaigns"}, "sk": {"S": sk}}


def item(sk: str, **attributes: str) -> dict[str, Any]:
    return {**key(sk), **{name: {"S": value} for name, value in attributes.items()}}


def get(client: Any, sk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = client.get_item(TableName=TABLE, Key=key(sk), ConsistentRead=True).get(
        "Item"
    )
    return found


def seed(count: int) -> None:
    """``count`` run items, straight into moto's table (a batch write of 10,000 items takes seconds)."""
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    from parley.local.aws import moto_table

    table = moto_table(TABLE)
    for i in range(count):
        attributes = key(f"RUN#{i:06d}")
        hash_value, range_value = DynamoType(attributes["pk"]), DynamoType(attributes["sk"])
        table.items[hash_value][range_value] = Item(hash_value, range_value, attributes)


def put(sk: str, **attributes: str) -> dict[str, Any]:
    return {"Put": {"TableName": TABLE, "Item": item(sk, **attributes)}}


def condition_absent(sk: str) -> dict[str, Any]:
    return {
        "ConditionCheck": {
            "TableName": TABLE,
            "Key": key(sk),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def test_a_transaction_whose_third_condition_fails_leaves_the_first_two_items_untouched(client: Any) -> None:
    client.put_item(TableName=TABLE, Item=item("REQ#1", state="open"))
    client.put_item(TableName=TABLE, Item=item("RUN#1", status="started"))
    client.put_item(TableName=TABLE, Item=item("COUNTER#open_requests", count="1"))

    with pytest.raises(ClientError) as caught:
        client.transact_write_items(
            TransactItems=[
                put("NEW#1", status="new"),  # a new item: gone again
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": key("REQ#1"),
                        "UpdateExpression": "SET #state = :answered",
                        "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": {":answered": {"S": "answered"}},
                    }
                },
                condition_absent("RUN#1"),  # fails: the run exists
                {"Delete": {"TableName": TABLE, "Key": key("COUNTER#open_requests")}},
            ]
        )

    error = caught.value.response
    assert error["Error"]["Code"] == "TransactionCanceledException"
    reasons = [reason["Code"] for reason in error["CancellationReasons"]]
    assert reasons == ["None", "None", "ConditionalCheckFailed", "None"]
    assert get(client, "NEW#1") is None
    assert get(client, "REQ#1") == item("REQ#1", state="open")
    assert get(client, "COUNTER#open_requests") == item("COUNTER#open_requests", count="1")
    assert get(client, "RUN#1") == item("RUN#1", status="started")


def test_a_transaction_that_holds_writes_every_item(client: Any) -> None:
    client.put_item(TableName=TABLE, Item=item("REQ#1", state="open"))

    client.transact_write_items(
        TransactItems=[
            put("RUN#2", status="started"),
            condition_absent("REQ#2"),
            {"Delete": {"TableName": TABLE, "Key": key("REQ#1")}},
        ]
    )

    assert get(client, "RUN#2") == item("RUN#2", status="started")
    assert get(client, "REQ#1") is None


def test_a_transaction_refused_outright_changes_nothing(client: Any) -> None:
    client.put_item(TableName=TABLE, Item=item("RUN#1", status="started"))

    with pytest.raises(ClientError) as caught:
        client.transact_write_items(
            TransactItems=[
                put("RUN#1", status="succeeded"),
                {"Delete": {"TableName": TABLE, "Key": key("RUN#1")}},  # the same item twice
            ]
        )

    assert caught.value.response["Error"]["Code"] == "ValidationException"
    assert get(client, "RUN#1") == item("RUN#1", status="started")


def test_a_failed_condition_can_return_the_item_as_it_is(client: Any) -> None:
    client.put_item(TableName=TABLE, Item=item("RUN#1", status="started"))

    with pytest.raises(ClientError) as caught:
        client.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": TABLE,
                        "Item": item("RUN#1", status="again"),
                        "ConditionExpression": "attribute_not_exists(pk)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                }
            ]
        )

    (reason,) = caught.value.response["CancellationReasons"]
    assert reason["Code"] == "ConditionalCheckFailed"
    assert reason["Item"] == item("RUN#1", status="started")


def test_a_transaction_takes_no_more_memory_with_ten_thousand_items_than_with_ten(client: Any) -> None:
    def transaction(i: int, fail: bool) -> None:
        items = [put(f"NEW#{i}", status="new"), condition_absent("RUN#000001" if fail else f"NONE#{i}")]
        try:
            client.transact_write_items(TransactItems=items)
        except ClientError:
            assert fail

    def measure() -> int:
        for i in range(5):  # warm
            transaction(i, fail=i % 2 == 0)
        tracemalloc.start()
        transaction(99_999, fail=True)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return peak

    seed(10)
    small_peak = measure()
    seed(10_000)
    large_peak = measure()

    # A copy of 10,000 items would take megabytes; the before-images do not grow with the table. (Its
    # time is measured by make bench's local_scale, not asserted here: timings vary on a shared machine.)
    assert large_peak < small_peak + 256 * 1024, (small_peak, large_peak)


def test_the_patch_is_undone_after_the_block() -> None:
    from moto.dynamodb.models import DynamoDBBackend

    from parley.local import moto_patches

    original = DynamoDBBackend.transact_write_items
    with local_aws():
        assert DynamoDBBackend.transact_write_items is moto_patches.transact_write_items
        with local_aws():
            assert DynamoDBBackend.transact_write_items is moto_patches.transact_write_items
        assert DynamoDBBackend.transact_write_items is moto_patches.transact_write_items
    assert DynamoDBBackend.transact_write_items is original
