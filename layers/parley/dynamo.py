"""What every DynamoDB adapter of the one table shares: item (de)serialization and the translation of
botocore errors into the ports' own (the errors themselves live in ``parley.errors``; their names here
are the same classes).

- A write whose condition did not hold: :class:`StoreConflict` (for a transaction, ``reasons`` gives
  each item's cancellation code, so the caller can tell *which* condition failed).
- Another transaction writing the same items at that moment: :class:`StoreContention` (try again).
- DynamoDB busy or failing: ``Problem("unavailable")``, ``503``.
- Anything else propagates (and becomes ``500 internal``).

boto3's (de)serializers load when a :class:`ItemCodec` is first built, not with this module: the api
handler's cold import stays small (see ``make bench``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from parley.errors import CONDITION_FAILED, Problem
from parley.errors import StoreConflict as StoreConflict
from parley.errors import StoreContention as StoreContention
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
