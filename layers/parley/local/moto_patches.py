"""Patches of moto for the local runtime, applied while :func:`patched_moto` is open
(``parley.local.executor.local_aws`` opens it with ``mock_aws``), and undone after.

- **TransactWriteItems without a table copy.** moto 5.2's ``DynamoDBBackend.transact_write_items``
  deep-copies every table the transaction names (once per item naming it) before it writes, so that it
  can put the copy back if a condition fails: its cost and its garbage grow with the table, tens of
  megabytes a call once a playbook holds thousands of runs. The patched method is moto's own, step for
  step (each item's condition, then its write, in order; every item's ``CancellationReasons``; the same
  errors raised directly), except that it keeps, for the rollback, only the items it writes: each one's
  before-image (a copy of that one item, or "there was none"), and each table's stream length. A
  transaction that is cancelled puts those back in reverse order, so it leaves the table as it found it.
  Since the items a transaction names are distinct (moto refuses two operations on one item), a
  condition never sees an earlier operation's write: checking each one before its write, as moto does,
  is checking them all before any write.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Iterator
from typing import Any, Final

_LOCK: Final = threading.Lock()
_STATE: dict[str, Any] = {"depth": 0, "original": None}


@contextlib.contextmanager
def patched_moto() -> Iterator[None]:
    """moto patched for the block (nested and concurrent blocks share one patch, removed with the last)."""
    from moto.dynamodb.models import DynamoDBBackend

    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["original"] = DynamoDBBackend.__dict__["transact_write_items"]
            DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                DynamoDBBackend.transact_write_items = _STATE["original"]  # type: ignore[method-assign]
                _STATE["original"] = None


def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
    """``DynamoDBBackend.transact_write_items`` of moto 5.2.5, rolling back by before-images."""
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        ConditionalCheckFailed,
        MockValidationException,
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )

    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    undo = _Undo()
    target_items: set[tuple[str, str]] = set()

    def check_unicity(table_name: str, key: dict[str, Any]) -> None:
        item = (str(table_name), str(dict(sorted(key.items()))))
        if item in target_items:
            raise MultipleTransactionsException()
        target_items.add(item)

    # [(Code, Message, Item), ..]
    errors: list[tuple[str, str, dict[str, Any]] | tuple[None, None, None]] = []
    for item in transact_items:
        original_item: dict[str, Any] | None = None
        # Check transact writes are not performing multiple operations on the same item
        if len(list(item.keys())) > 1:
            raise TransactWriteSingleOpException

        try:
            op_type, op = next(iter(item.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise ValueError("Unsupported transaction operation")

            table_name = op["TableName"]
            condition_expression = op.get("ConditionExpression")
            expression_attribute_names = op.get("ExpressionAttributeNames")
            expression_attribute_values = op.get("ExpressionAttributeValues")
            return_values_on_condition_check_failure = op.get("ReturnValuesOnConditionCheckFailure")

            if op_type == "Put":
                attrs = op["Item"]
                table = self.get_table(table_name)
                key = {table.hash_key_attr: attrs[table.hash_key_attr]}
                if table.range_key_attr is not None:
                    key[table.range_key_attr] = attrs[table.range_key_attr]
            else:
                key = op["Key"]

            check_unicity(table_name, key)

            current = self.get_item(table_name, key)
            if condition_expression is not None:
                condition_op = get_filter_expression(
                    condition_expression,
                    expression_attribute_names,
                    expression_attribute_values,
                )
                if not condition_op.expr(current):
                    if return_values_on_condition_check_failure == "ALL_OLD" and current:
                        original_item = current.to_json()["Attributes"]
                    raise ConditionalCheckFailed(item=original_item)

            if op_type != "ConditionCheck":
                # The one change: keep this item as it is now, not a copy of the whole table.
                undo.keep(self, table_name, key, current)
            if op_type == "Put":
                attrs = op["Item"]
                self.put_item(
                    table_name,
                    attrs,
                    condition_expression=condition_expression,
                    expression_attribute_names=expression_attribute_names,
                    expression_attribute_values=expression_attribute_values,
                )
            elif op_type == "Delete":
                self.delete_item(
                    table_name,
                    key,
                    condition_expression=condition_expression,
                    expression_attribute_names=expression_attribute_names,
                    expression_attribute_values=expression_attribute_values,
                )
            elif op_type == "Update":
                update_expression = op["UpdateExpression"]
                self.update_item(
                    table_name,
                    key,
                    update_expression=update_expression,
                    condition_expression=condition_expression,
                    expression_attribute_names=expression_attribute_names,
                    expression_attribute_values=expression_attribute_values,
                )
            errors.append((None, None, None))
        except (MultipleTransactionsException, MockValidationException):
            # Rollback to the original state, and reraise the error
            undo.roll_back()
            raise
        except ConditionalCheckFailed as e:
            errors.append(("ConditionalCheckFailed", str(e.message), original_item))  # type: ignore[arg-type]
        except Exception as e:
            # For other exceptions, capture their details
            errors.append((type(e).__name__, str(e), original_item))  # type: ignore[arg-type]

    if any(code is not None for code, _, _ in errors):
        # Rollback to the original state, and reraise the errors
        undo.roll_back()
        raise TransactionCanceledException(errors)


class _Undo:
    """Before-images of the items a transaction writes, and the length of each table's stream."""

    def __init__(self) -> None:
        self._images: list[tuple[Any, Any, Any, Any]] = []  # (table, hash value, range value, item)
        self._streams: dict[int, tuple[Any, int]] = {}  # id(table) -> (table, records before)

    def keep(self, backend: Any, table_name: str, key: dict[str, Any], current: Any) -> None:
        table = backend.get_table(table_name)
        hash_value, range_value = backend.get_keys_value(table, key)
        self._images.append((table, hash_value, range_value, copy.deepcopy(current)))
        if table.stream_shard is not None and id(table) not in self._streams:
            self._streams[id(table)] = (table, len(table.stream_shard.items))

    def roll_back(self) -> None:
        for table, hash_value, range_value, before in reversed(self._images):
            if range_value is None:
                if before is None:
                    table.items.pop(hash_value, None)
                else:
                    table.items[hash_value] = before
            elif before is None:
                if hash_value in table.items:
                    table.items[hash_value].pop(range_value, None)
            else:
                table.items[hash_value][range_value] = before
        for table, length in self._streams.values():
            if table.stream_shard is not None:
                del table.stream_shard.items[length:]
        self._images.clear()
        self._streams.clear()
