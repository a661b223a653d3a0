"""The DynamoDB adapter: the item layout of ``parley.infrastructure.table`` and errors at its edge."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from parley.clock import ManualClock
from parley.definitions.model import Definition, PlaybookRef
from parley.definitions.service import DefinitionService
from parley.definitions.store import DynamoDefinitionStore, StoreConflict, StoreContention
from parley.errors import Problem

PLAYBOOK = PlaybookRef("acme", "campaigns")
SOURCE = "---\ndescription: First\n---\nHello\n"


def test_items_follow_the_table_layout(
    dynamodb: tuple[Any, str], manual_clock: ManualClock, stub_check: Any
) -> None:
    client, table = dynamodb
    service = DefinitionService(DynamoDefinitionStore(client, table), manual_clock, stub_check)
    service.create_definition(PLAYBOOK, "interaction", "laid-out", SOURCE)
    service.update_definition(PLAYBOOK, "interaction", "laid-out", SOURCE + "more")

    items = client.query(
        TableName=table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "PB#acme#campaigns"}},
    )["Items"]

    keys = sorted(
        (item["sk"]["S"], item.get("gsi1pk", {}).get("S"), item.get("gsi1sk", {}).get("S")) for item in items
    )
    assert keys == [
        (
            "DEF#interaction#laid-out",
            "PB#acme#campaigns#DEF#interaction",
            "2026-10-17T10:18:42.000Z#laid-out",
        ),
        ("DEFV#interaction#laid-out#00000001", None, None),
        ("DEFV#interaction#laid-out#00000002", None, None),
    ]
    head = next(item for item in items if item["sk"]["S"].startswith("DEF#"))
    assert head["version"] == {"N": "2"}
    assert head["status"] == {"S": "active"}


class FailingClient:
    """A client whose every call fails with one botocore error."""

    def __init__(self, code: str, reasons: list[str] | None = None) -> None:
        self.code = code
        self.reasons = reasons

    def __getattr__(self, name: str) -> Any:
        def fail(**_: Any) -> Any:
            response: dict[str, Any] = {"Error": {"Code": self.code, "Message": "no"}}
            if self.reasons is not None:
                response["CancellationReasons"] = [{"Code": code} for code in self.reasons]
            raise ClientError(response, name)  # type: ignore[arg-type]

        return fail


DEFINITION = Definition(
    type="interaction",
    name="any-name",
    version=2,
    status="active",
    media_type="text/markdown",
    description=None,
    source=SOURCE,
    overview="",
    created_at="2026-10-17T10:18:42.000Z",
    updated_at="2026-10-17T10:18:42.000Z",
)


@pytest.mark.parametrize(
    ("code", "reasons", "expected"),
    [
        ("ConditionalCheckFailedException", None, StoreConflict),
        ("TransactionCanceledException", ["None", "ConditionalCheckFailed"], StoreConflict),
        ("TransactionCanceledException", ["TransactionConflict", "None"], StoreContention),
        ("TransactionConflictException", None, StoreContention),
    ],
)
def test_failed_conditions_become_port_errors(code: str, reasons: list[str] | None, expected: type) -> None:
    store = DynamoDefinitionStore(FailingClient(code, reasons), "t")  # type: ignore[arg-type]

    with pytest.raises(expected):
        store.save_version(PLAYBOOK, DEFINITION)


@pytest.mark.parametrize(
    ("code", "reasons"),
    [
        ("ProvisionedThroughputExceededException", None),
        ("ThrottlingException", None),
        ("TransactionCanceledException", ["ThrottlingError"]),
    ],
)
def test_an_overloaded_store_is_unavailable(code: str, reasons: list[str] | None) -> None:
    store = DynamoDefinitionStore(FailingClient(code, reasons), "t")  # type: ignore[arg-type]

    with pytest.raises(Problem) as caught:
        store.get(PLAYBOOK, "interaction", "any-name") if reasons is None else store.create(
            PLAYBOOK, DEFINITION
        )
    assert (caught.value.status, caught.value.reason) == (503, "unavailable")


def test_other_store_errors_are_not_hidden() -> None:
    store = DynamoDefinitionStore(FailingClient("ResourceNotFoundException"), "t")  # type: ignore[arg-type]

    with pytest.raises(ClientError):
        store.get(PLAYBOOK, "interaction", "any-name")


class ContendedStore:
    """A store whose writes meet another transaction ``times`` times before they go through."""

    def __init__(self, store: DynamoDefinitionStore, times: int) -> None:
        self._store = store
        self.left = times

    def _contend(self) -> None:
        if self.left > 0:
            self.left -= 1
            raise StoreContention("TransactionConflict")

    def create(self, playbook: PlaybookRef, definition: Definition) -> None:
        self._contend()
        self._store.create(playbook, definition)

    def save_version(self, playbook: PlaybookRef, definition: Definition) -> None:
        self._contend()
        self._store.save_version(playbook, definition)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_writes_that_meet_another_transaction_are_tried_again(
    dynamodb: tuple[Any, str], manual_clock: ManualClock, stub_check: Any
) -> None:
    client, table = dynamodb
    contended = ContendedStore(DynamoDefinitionStore(client, table), times=2)
    service = DefinitionService(contended, manual_clock, stub_check)  # type: ignore[arg-type]

    assert service.create_definition(PLAYBOOK, "interaction", "contended", SOURCE).version == 1
    contended.left = 3
    assert service.update_definition(PLAYBOOK, "interaction", "contended", SOURCE + "x").version == 2

    contended.left = 100
    with pytest.raises(Problem) as caught:
        service.update_definition(PLAYBOOK, "interaction", "contended", SOURCE + "y")
    assert caught.value.status == 409
