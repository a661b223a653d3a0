"""What every DynamoDB adapter of the one table shares: item (de)serialization and the translation of
botocore errors into the ports' own.

- A write whose condition did not hold: :class:`StoreConflict` (for a transaction, ``reasons`` gives
  each item's cancellation code, so the caller can tell *which* condition failed).
- Another transaction writing the same items at that moment: :class:`StoreContention` (try again).
- DynamoDB busy or failing: ``Problem("unavailable")``, ``503``.
- Anything else propagates (and becomes ``500 internal``).

boto3's (de)serializers load when a :class:`ItemCodec` is first built, not with this module: the api
handler's cold import stays small (see ``make bench``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from parley.errors import Problem
from parley.infrastructure.table import TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import AttributeValueTypeDef

#: Error codes that mean "DynamoDB is busy or failing": the caller may try again later.
UNAVAILABLE_CODES: Final = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "ThrottlingError",
        "ProvisionedThroughputExceeded",
    }
)
#: A transaction item's cancellation code when its condition did not hold.
CONDITION_FAILED: Final = "ConditionalCheckFailed"


class StoreConflict(Exception):
    """A write's condition did not hold.

    ``reasons`` holds one cancellation code per item of a cancelled transaction (``"None"`` for the
    items that were fine), and is empty for a single write.
    """

    def __init__(self, code: str, reasons: Sequence[str] = ()) -> None:
        super().__init__(code)
        self.reasons = tuple(reasons)

    def failed(self, index: int) -> bool:
        """Whether the condition of the transaction's item ``index`` is one that did not hold."""
        return index < len(self.reasons) and self.reasons[index] == CONDITION_FAILED


class StoreContention(Exception):
    """Another transaction was writing the same items at that moment; trying again may succeed."""


@contextmanager
def translated() -> Iterator[None]:
    """Translate botocore errors at the adapter edge (see the module's docstring)."""
    from botocore.exceptions import ClientError

    try:
        yield
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code == "ConditionalCheckFailedException":
            raise StoreConflict(code) from exc
        if code == "TransactionConflictException":
            raise StoreContention(code) from exc
        if code == "TransactionCanceledException":
            listed = [str(r.get("Code")) for r in exc.response.get("CancellationReasons", [])]
            reasons = set(listed)
            if CONDITION_FAILED in reasons:
                raise StoreConflict(code, listed) from exc
            if "TransactionConflict" in reasons:
                raise StoreContention(code) from exc
            if reasons & UNAVAILABLE_CODES:
                raise Problem("unavailable", "The store is busy; try again shortly.") from exc
        if code in UNAVAILABLE_CODES:
            raise Problem("unavailable", "The store is busy; try again shortly.") from exc
        raise


def item_key(pk: str, sk: str) -> dict[str, AttributeValueTypeDef]:
    """The table key of an item."""
    return {TABLE.partition_key: {"S": pk}, TABLE.sort_key: {"S": sk}}


class ItemCodec:
    """Plain Python values to DynamoDB attribute values and back (boto3's own type rules)."""

    def __init__(self) -> None:
        from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

        self._serializer = TypeSerializer()
        self._deserializer = TypeDeserializer()

    def serialize(self, values: Mapping[str, Any]) -> dict[str, AttributeValueTypeDef]:
        """Every attribute of ``values``; ``None`` values are kept as DynamoDB ``NULL``."""
        return {name: self._serializer.serialize(value) for name, value in values.items()}

    def value(self, value: Any) -> AttributeValueTypeDef:
        serialized: AttributeValueTypeDef = self._serializer.serialize(value)
        return serialized

    def plain(self, item: Mapping[str, Any]) -> dict[str, Any]:
        return {name: self._deserializer.deserialize(value) for name, value in item.items()}
