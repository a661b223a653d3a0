"""Connections in the one table (``parley.infrastructure.table``), under their org (issue 32).

One item per connection: ``pk = ORG#{org}``, ``sk = CONNECTION#{name}`` (the org's items sit apart
from its playbooks' ``PB#…`` partitions, so an org's connections are one query). Attributes: ``org``,
``name``, ``url``, ``status`` (``pending``, ``active``, ``broken``), ``playbooks`` (a list, or absent
for every playbook), ``added_by``, ``added_at``, ``approved_by``, ``approved_at``, ``auth``. No secret:
those are kept by :mod:`parley.connections.secrets`.

The keys are made here and only here (:func:`org_key`, :func:`connection_key`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from parley.connections.model import Connection, ConnectionAuth, ConnectionStatus
from parley.dynamo import ItemCodec, StoreConflict, item_key, translated
from parley.errors import ParleyError
from parley.infrastructure.keys import CONNECTION_PREFIX as CONNECTION_PREFIX
from parley.infrastructure.keys import connection_key as connection_key
from parley.infrastructure.keys import org_key as org_key
from parley.infrastructure.table import TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient


class ConnectionExists(ParleyError):
    """The org already has a connection of that name."""


class ConnectionMissing(ParleyError):
    """The org has no connection of that name."""


def connection_from(item: dict[str, Any]) -> Connection:
    """A stored item (plain values) as a :class:`Connection`."""
    playbooks = item.get("playbooks")
    return Connection(
        org=str(item["org"]),
        name=str(item["name"]),
        url=str(item["url"]),
        status=cast(ConnectionStatus, item["status"]),
        playbooks=tuple(str(p) for p in playbooks) if playbooks is not None else None,
        added_by=str(item["added_by"]),
        added_at=str(item["added_at"]),
        approved_by=_text_or_none(item.get("approved_by")),
        approved_at=_text_or_none(item.get("approved_at")),
        auth=cast(ConnectionAuth, item.get("auth", "none")),
    )


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def item_of(connection: Connection) -> dict[str, Any]:
    """A connection's attributes (plain values; ``None`` left out)."""
    values: dict[str, Any] = {
        "org": connection.org,
        "name": connection.name,
        "url": connection.url,
        "status": connection.status,
        "playbooks": list(connection.playbooks) if connection.playbooks is not None else None,
        "added_by": connection.added_by,
        "added_at": connection.added_at,
        "approved_by": connection.approved_by,
        "approved_at": connection.approved_at,
        "auth": connection.auth,
    }
    return {name: value for name, value in values.items() if value is not None}


class ConnectionStore:
    """An org's connections on the one table, through an injected low-level boto3 client."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._codec = ItemCodec()

    def get(self, org: str, name: str) -> Connection | None:
        with translated():
            found = self._client.get_item(
                TableName=self._table, Key=item_key(org_key(org), connection_key(name)), ConsistentRead=True
            )
        item = found.get("Item")
        return connection_from(self._codec.plain(item)) if item else None

    def list(self, org: str) -> list[Connection]:
        """Every connection of the org, by name."""
        found: list[Connection] = []
        start: dict[str, Any] | None = None
        while True:
            arguments: dict[str, Any] = {
                "TableName": self._table,
                "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
                "ExpressionAttributeNames": {"#pk": TABLE.partition_key, "#sk": TABLE.sort_key},
                "ExpressionAttributeValues": {
                    ":pk": {"S": org_key(org)},
                    ":prefix": {"S": CONNECTION_PREFIX},
                },
                "ConsistentRead": True,
            }
            if start is not None:
                arguments["ExclusiveStartKey"] = start
            with translated():
                page = self._client.query(**arguments)
            found.extend(connection_from(self._codec.plain(item)) for item in page.get("Items", []))
            start = cast("dict[str, Any] | None", page.get("LastEvaluatedKey"))
            if not start:
                return found

    def add(self, connection: Connection) -> None:
        """Keep a new connection; :class:`ConnectionExists` when the org has one of that name."""
        item = {
            **self._codec.serialize(item_of(connection)),
            **item_key(org_key(connection.org), connection_key(connection.name)),
        }
        try:
            with translated():
                self._client.put_item(
                    TableName=self._table,
                    Item=item,
                    ConditionExpression="attribute_not_exists(#pk)",
                    ExpressionAttributeNames={"#pk": TABLE.partition_key},
                )
        except StoreConflict:
            raise ConnectionExists(connection.name) from None

    def set_status(
        self,
        org: str,
        name: str,
        status: ConnectionStatus,
        *,
        approved_by: str | None = None,
        at: str | None = None,
    ) -> Connection:
        """Set the stored status (``approved_by`` and ``at`` record an approval);
        :class:`ConnectionMissing` when there is no such connection."""
        if status == "not_allowed":
            raise ValueError("not_allowed is read against the rules, never stored")
        values: dict[str, Any] = {"status": status}
        if approved_by is not None:
            values["approved_by"] = approved_by
        if at is not None:
            values["approved_at"] = at
        return self._update(org, name, values)

    def set_auth(self, org: str, name: str, auth: ConnectionAuth) -> Connection:
        """Set how the connection authenticates; :class:`ConnectionMissing` when there is none."""
        return self._update(org, name, {"auth": auth})

    def _update(self, org: str, name: str, values: dict[str, Any]) -> Connection:
        names = {f"#f{number}": field for number, field in enumerate(values)}
        placeholders = {
            f":v{number}": self._codec.value(value) for number, value in enumerate(values.values())
        }
        assignments = ", ".join(f"#f{number} = :v{number}" for number in range(len(values)))
        try:
            with translated():
                found = self._client.update_item(
                    TableName=self._table,
                    Key=item_key(org_key(org), connection_key(name)),
                    UpdateExpression=f"SET {assignments}",
                    ConditionExpression="attribute_exists(#pk)",
                    ExpressionAttributeNames={**names, "#pk": TABLE.partition_key},
                    ExpressionAttributeValues=placeholders,
                    ReturnValues="ALL_NEW",
                )
        except StoreConflict:
            raise ConnectionMissing(name) from None
        return connection_from(self._codec.plain(found["Attributes"]))

    def remove(self, org: str, name: str) -> None:
        """Forget the connection (nothing happens when there is none)."""
        with translated():
            self._client.delete_item(TableName=self._table, Key=item_key(org_key(org), connection_key(name)))
