"""Where definitions are kept: the port the service uses, and its DynamoDB adapter.

Items (see ``parley.infrastructure.table``): a *head* per name, ``DEF#{type}#{name}``, holding the
latest version and the status, indexed in ``gsi1`` by ``{created_at}#{name}`` for newest-first lists;
and one immutable item per version, ``DEFV#{type}#{name}#{version:08d}``. Every write is conditional,
and a new version writes its version item and the head in one transaction, so concurrent writers never
lose a version nor leave half of one: the loser's condition fails and the service decides what that
means (``409`` for a taken name; read again and retry for an update).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from parley.definitions.model import Definition, PlaybookRef
from parley.dynamo import ItemCodec, StoreConflict, StoreContention, item_key, translated
from parley.infrastructure.keys import definition_head_key as head_key
from parley.infrastructure.keys import definition_version_key as version_key
from parley.infrastructure.keys import definitions_list_key as list_key
from parley.infrastructure.keys import definitions_list_sort_key as list_sort_key
from parley.infrastructure.keys import playbook_key
from parley.infrastructure.table import TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import AttributeValueTypeDef, QueryInputTypeDef

LIST_INDEX: Final = TABLE.indexes[0].name

__all__ = ["DefinitionStore", "DynamoDefinitionStore", "StoreConflict", "StoreContention"]


@dataclass(frozen=True)
class DefinitionVersion:
    """One saved version, never changed after it is written."""

    type: str
    name: str
    version: int
    media_type: str
    description: str | None
    source: str
    overview: str
    warnings: tuple[str, ...]
    created_at: str


@dataclass(frozen=True)
class ListPosition:
    """Where a newest-first list stopped: the last definition shown on the page."""

    created_at: str
    name: str


class DefinitionStore(Protocol):
    """The port: what the definitions service needs from storage."""

    def get(self, playbook: PlaybookRef, definition_type: str, name: str) -> Definition | None:
        """The head of ``name``, read strongly consistent; ``None`` if the name was never saved."""
        ...

    def get_version(
        self, playbook: PlaybookRef, definition_type: str, name: str, version: int
    ) -> DefinitionVersion | None: ...

    def create(self, playbook: PlaybookRef, definition: Definition) -> None:
        """Save version 1 and the head. :class:`StoreConflict` if the name was ever saved."""
        ...

    def save_version(self, playbook: PlaybookRef, definition: Definition) -> None:
        """Save ``definition.version`` and make it the head, if the head is still the active
        ``definition.version - 1``; else :class:`StoreConflict`."""
        ...

    def retire(self, playbook: PlaybookRef, definition: Definition) -> None:
        """Write the retired head, if the head is still the active ``definition.version``; else
        :class:`StoreConflict`."""
        ...

    def list_heads(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        *,
        include_retired: bool,
        limit: int,
        after: ListPosition | None,
    ) -> tuple[list[Definition], bool]:
        """Up to ``limit`` heads, newest first, after ``after``; and whether more follow."""
        ...


class DynamoDefinitionStore:
    """:class:`DefinitionStore` on the one table, through an injected low-level boto3 client."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        # boto3's (de)serializers load with the store, not with this module (see `parley.dynamo`).
        self._codec = ItemCodec()

    @property
    def client(self) -> DynamoDBClient:
        """The client, for the other stores of the same table (runs live beside definitions)."""
        return self._client

    @property
    def table_name(self) -> str:
        return self._table

    # --- reads ---------------------------------------------------------------------------------

    def get(self, playbook: PlaybookRef, definition_type: str, name: str) -> Definition | None:
        with translated():
            response = self._client.get_item(
                TableName=self._table,
                Key=self._key(playbook_key(playbook), head_key(definition_type, name)),
                ConsistentRead=True,
            )
        item = response.get("Item")
        return self._head_from(item) if item else None

    def get_version(
        self, playbook: PlaybookRef, definition_type: str, name: str, version: int
    ) -> DefinitionVersion | None:
        with translated():
            response = self._client.get_item(
                TableName=self._table,
                Key=self._key(playbook_key(playbook), version_key(definition_type, name, version)),
                ConsistentRead=True,
            )
        item = response.get("Item")
        if not item:
            return None
        data = self._plain(item)
        return DefinitionVersion(
            type=data["type"],
            name=data["name"],
            version=int(data["version"]),
            media_type=data["media_type"],
            description=data.get("description"),
            source=data["source"],
            overview=data["overview"],
            warnings=tuple(data.get("warnings") or ()),
            created_at=data["created_at"],
        )

    def list_heads(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        *,
        include_retired: bool,
        limit: int,
        after: ListPosition | None,
    ) -> tuple[list[Definition], bool]:
        # Fetch one more than the page so that "more follow" is known without an empty last page.
        # A filter applies after DynamoDB's own Limit, so keep querying until the page is full.
        wanted = limit + 1
        query: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": LIST_INDEX,
            "KeyConditionExpression": "#gpk = :gpk",
            "ExpressionAttributeNames": {"#gpk": TABLE.indexes[0].partition_key},
            "ExpressionAttributeValues": {":gpk": {"S": list_key(playbook, definition_type)}},
            "ScanIndexForward": False,
        }
        if not include_retired:
            query["FilterExpression"] = "#status = :active"
            query["ExpressionAttributeNames"] = {**query["ExpressionAttributeNames"], "#status": "status"}
            query["ExpressionAttributeValues"] = {
                **query["ExpressionAttributeValues"],
                ":active": {"S": "active"},
            }
        start: Mapping[str, AttributeValueTypeDef] | None = None
        if after is not None:
            start = {
                **self._key(playbook_key(playbook), head_key(definition_type, after.name)),
                TABLE.indexes[0].partition_key: {"S": list_key(playbook, definition_type)},
                TABLE.indexes[0].sort_key: {"S": list_sort_key(after.created_at, after.name)},
            }
        found: list[Definition] = []
        while len(found) < wanted:
            page_query: QueryInputTypeDef = {**query, "Limit": wanted}
            if start is not None:
                page_query["ExclusiveStartKey"] = start
            with translated():
                response = self._client.query(**page_query)
            found.extend(self._head_from(item) for item in response.get("Items", []))
            start = response.get("LastEvaluatedKey")
            if not start:
                break
        return found[:limit], len(found) > limit

    # --- writes --------------------------------------------------------------------------------

    def create(self, playbook: PlaybookRef, definition: Definition) -> None:
        with translated():
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": self._head_item(playbook, definition),
                            "ConditionExpression": "attribute_not_exists(#pk)",
                            "ExpressionAttributeNames": {"#pk": TABLE.partition_key},
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": self._version_item(playbook, definition),
                            "ConditionExpression": "attribute_not_exists(#pk)",
                            "ExpressionAttributeNames": {"#pk": TABLE.partition_key},
                        }
                    },
                ]
            )

    def save_version(self, playbook: PlaybookRef, definition: Definition) -> None:
        with translated():
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": self._head_item(playbook, definition),
                            "ConditionExpression": "#version = :previous AND #status = :active",
                            "ExpressionAttributeNames": {"#version": "version", "#status": "status"},
                            "ExpressionAttributeValues": {
                                ":previous": {"N": str(definition.version - 1)},
                                ":active": {"S": "active"},
                            },
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": self._version_item(playbook, definition),
                            "ConditionExpression": "attribute_not_exists(#pk)",
                            "ExpressionAttributeNames": {"#pk": TABLE.partition_key},
                        }
                    },
                ]
            )

    def retire(self, playbook: PlaybookRef, definition: Definition) -> None:
        with translated():
            self._client.put_item(
                TableName=self._table,
                Item=self._head_item(playbook, definition),
                ConditionExpression="#version = :version AND #status = :active",
                ExpressionAttributeNames={"#version": "version", "#status": "status"},
                ExpressionAttributeValues={
                    ":version": {"N": str(definition.version)},
                    ":active": {"S": "active"},
                },
            )

    # --- items ---------------------------------------------------------------------------------

    def _key(self, pk: str, sk: str) -> dict[str, AttributeValueTypeDef]:
        return item_key(pk, sk)

    def _serialize(self, values: Mapping[str, Any]) -> dict[str, AttributeValueTypeDef]:
        return self._codec.serialize(values)

    def _plain(self, item: Mapping[str, Any]) -> dict[str, Any]:
        return self._codec.plain(item)

    def _content(self, definition: Definition) -> dict[str, Any]:
        return {
            "type": definition.type,
            "name": definition.name,
            "version": definition.version,
            "media_type": definition.media_type,
            "description": definition.description,
            "source": definition.source,
            "overview": definition.overview,
            "warnings": list(definition.warnings),
            **({"shows": json.dumps(definition.shows)} if definition.shows is not None else {}),
            **({"uses": list(definition.uses)} if definition.uses else {}),
        }

    def _head_item(self, playbook: PlaybookRef, definition: Definition) -> dict[str, AttributeValueTypeDef]:
        index = TABLE.indexes[0]
        return self._serialize(
            {
                TABLE.partition_key: playbook_key(playbook),
                TABLE.sort_key: head_key(definition.type, definition.name),
                index.partition_key: list_key(playbook, definition.type),
                index.sort_key: list_sort_key(definition.created_at, definition.name),
                "kind": "definition",
                **self._content(definition),
                "status": definition.status,
                "created_at": definition.created_at,
                "updated_at": definition.updated_at,
            }
        )

    def _version_item(
        self, playbook: PlaybookRef, definition: Definition
    ) -> dict[str, AttributeValueTypeDef]:
        return self._serialize(
            {
                TABLE.partition_key: playbook_key(playbook),
                TABLE.sort_key: version_key(definition.type, definition.name, definition.version),
                "kind": "definition_version",
                **self._content(definition),
                # A version is saved when the head changes to it.
                "created_at": definition.updated_at,
            }
        )

    def _head_from(self, item: Mapping[str, Any]) -> Definition:
        data = self._plain(item)
        return Definition(
            type=data["type"],
            name=data["name"],
            version=int(data["version"]),
            status=data["status"],
            media_type=data["media_type"],
            description=data.get("description"),
            source=data["source"],
            overview=data["overview"],
            warnings=tuple(data.get("warnings") or ()),
            created_at=data["created_at"],
            updated_at=data["updated_at"],
            shows=json.loads(data["shows"]) if data.get("shows") else None,
            uses=tuple(data.get("uses") or ()),
        )
