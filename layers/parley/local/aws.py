"""AWS emulated in process with moto, for the local server (and for tests that want the same).

moto's DynamoDB backend does no locking of its own: two threads writing at once can both pass a
condition, or undo each other's transaction. DynamoDB itself applies each request atomically, so
:func:`serialized` wraps a client to apply one request at a time, which is what the service's
conditional writes rely on.

A wrapped client also tells a :class:`WriteLog` what each write left behind, while it still holds that
lock (so the log sees the writes in the order they were made): the local server's data folder keeps it
on disk before the response (``parley.local.persistence``, issue 27). For DynamoDB that is the image of
every item the write touched, read back from moto's backend (``None``: the item is gone), so keeping it
again never evaluates a condition again; for the content bucket, the object put.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import boto3

from parley.infrastructure.table import TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from parley.aws.content import S3ContentStore

LOCAL_TABLE: Final = "parley-local"
LOCAL_CONTENT_BUCKET: Final = "parley-local-content"
LOCAL_REGION: Final = "us-east-1"


def local_session() -> boto3.session.Session:
    """A session with fake credentials (never the machine's), for clients used under ``mock_aws``."""
    return boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        aws_session_token="testing",
        region_name=LOCAL_REGION,
    )


def local_dynamodb_client() -> DynamoDBClient:
    """A DynamoDB client with fake credentials, applying one request at a time (see above)."""
    return serialized(local_session().client("dynamodb"))


def create_table(client: DynamoDBClient, table_name: str = LOCAL_TABLE) -> str:
    """Create the one table as the CDK stack defines it; returns its name."""
    client.create_table(**TABLE.create_table_arguments(table_name))
    return table_name


def local_content_store(bucket: str = LOCAL_CONTENT_BUCKET) -> S3ContentStore:
    """The content bucket in moto (created here), as the runs store keeps large content on AWS."""
    from parley.aws.content import S3ContentStore

    client = local_session().client("s3")
    client.create_bucket(Bucket=bucket)
    return S3ContentStore(_Serialized(client, moto_lock()), bucket)


class WriteLog(Protocol):
    """Told what each write of a wrapped client left behind (see above)."""

    def items_written(self, table: str, images: list[tuple[Any, Any, Mapping[str, Any] | None]]) -> None:
        """``(partition key, sort key, item or None)`` of each item a write touched, in DynamoDB's JSON."""

    def object_written(self, bucket: str, key: str, body: bytes) -> None: ...


#: The calls that write, by service.
_ITEM_WRITES: Final = frozenset(
    {"put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item"}
)
_OBJECT_WRITES: Final = frozenset({"put_object"})


class _Serialized:
    """Every method call of the wrapped client under one lock; its writes told to ``log``, if set."""

    def __init__(self, client: Any, lock: threading.RLock) -> None:
        self._client = client
        self._lock = lock
        self.log: WriteLog | None = None

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute) or name == "exceptions":
            return attribute
        if name not in _ITEM_WRITES and name not in _OBJECT_WRITES:

            def call(*args: Any, **kwargs: Any) -> Any:
                with self._lock:
                    return attribute(*args, **kwargs)

            return call

        def write(**kwargs: Any) -> Any:
            with self._lock:
                try:
                    result = attribute(**kwargs)
                except Exception:
                    # A transaction refused is meant to change nothing; what it left is kept regardless.
                    if name == "transact_write_items" and self.log is not None:
                        self._tell(self.log, name, kwargs)
                    raise
                if self.log is not None:
                    self._tell(self.log, name, kwargs)
                return result

        return write

    @staticmethod
    def _tell(log: WriteLog, name: str, kwargs: Mapping[str, Any]) -> None:
        if name == "put_object":
            body = kwargs.get("Body", b"")
            if isinstance(body, str):
                body = body.encode("utf-8", "surrogatepass")
            elif not isinstance(body, bytes):
                body = body.read()
            log.object_written(str(kwargs["Bucket"]), str(kwargs["Key"]), body)
            return
        by_table: dict[str, list[Mapping[str, Any]]] = {}
        for table, key in _touched(name, kwargs):
            by_table.setdefault(table, []).append(key)
        for table, keys in by_table.items():
            log.items_written(table, _images(table, keys))


def journal_writes(client: Any, log: WriteLog | None) -> None:
    """Tell ``log`` what each write of ``client`` (a client of this module) leaves behind from now on."""
    if not isinstance(client, _Serialized):
        raise TypeError("only a client of parley.local.aws tells its writes")
    client.log = log


def _touched(name: str, kwargs: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(table, item or key)`` of each item a DynamoDB write may have changed."""
    if name == "put_item":
        return [(kwargs["TableName"], kwargs["Item"])]
    if name in ("update_item", "delete_item"):
        return [(kwargs["TableName"], kwargs["Key"])]
    touched: list[tuple[str, Mapping[str, Any]]] = []
    if name == "transact_write_items":
        for entry in kwargs["TransactItems"]:
            if "Put" in entry:
                touched.append((entry["Put"]["TableName"], entry["Put"]["Item"]))
            for kind in ("Update", "Delete"):
                if kind in entry:
                    touched.append((entry[kind]["TableName"], entry[kind]["Key"]))
    else:  # batch_write_item
        for table, requests in kwargs["RequestItems"].items():
            for request in requests:
                if "PutRequest" in request:
                    touched.append((table, request["PutRequest"]["Item"]))
                elif "DeleteRequest" in request:
                    touched.append((table, request["DeleteRequest"]["Key"]))
    return touched


def _images(name: str, keys: list[Mapping[str, Any]]) -> list[tuple[Any, Any, Mapping[str, Any] | None]]:
    """The items at ``keys`` of table ``name`` as moto holds them now (``None``: not there)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    table = moto_table(name)
    hash_name, range_name = table.hash_key_attr, table.range_key_attr
    images: list[tuple[Any, Any, Mapping[str, Any] | None]] = []
    for key in keys:
        pk, sk = key[hash_name], key.get(range_name) if range_name else None
        item = table.get_item(DynamoType(pk), DynamoType(sk) if sk is not None else None)
        images.append((pk, sk, None if item is None else item.to_json()["Attributes"]))
    return images


def moto_table(name: str = LOCAL_TABLE) -> Any:
    """moto's own ``Table`` behind the emulated DynamoDB, for work that would be slow through botocore
    (reading or loading tens of thousands of items); hold :func:`moto_lock` while using it."""
    from moto.dynamodb.models import dynamodb_backends

    from parley.local.functions import LOCAL_ACCOUNT

    return dynamodb_backends[LOCAL_ACCOUNT][LOCAL_REGION].get_table(name)


def backfill_listing_indexes(name: str = LOCAL_TABLE) -> int:
    """Give the runs, open requests and events of moto's table the listings' filter slots they should
    hold (issue 31: items a data folder kept from before the slots, or from an earlier layout of them;
    ``parley.runs.items.with_listing_indexes``), in place, under :func:`moto_lock`; how many items
    changed. Idempotent: a restart finds none to change."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    from parley.runs.items import holds_listing_indexes, with_listing_indexes

    table = moto_table(name)
    given = 0
    with moto_lock():
        for by_sort in table.items.values():
            for item in by_sort.values():
                kind, state = item.attrs.get("kind"), item.attrs.get("state")
                if kind is None or holds_listing_indexes(
                    kind.value, state.value if state is not None else None, item.attrs
                ):
                    continue
                attributes = item.to_json()["Attributes"]
                whole = with_listing_indexes(attributes)
                if whole == attributes:
                    continue
                for removed in attributes.keys() - whole.keys():
                    del item.attrs[removed]
                for added, value in whole.items():
                    if attributes.get(added) != value:
                        item.attrs[added] = DynamoType(value)
                given += 1
    return given


@functools.cache
def moto_lock() -> threading.RLock:
    """The one lock of every serialized client (held across calls, it keeps the table still)."""
    return threading.RLock()


def serialized(client: DynamoDBClient, lock: threading.RLock | None = None) -> DynamoDBClient:
    """``client``, applying one request at a time (one lock shared by every wrapped client, as moto's
    backend is shared by the whole process)."""
    return cast("DynamoDBClient", _Serialized(client, lock or moto_lock()))
