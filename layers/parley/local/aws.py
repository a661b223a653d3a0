"""AWS emulated in process with moto, for the local server (and for tests that want the same).

moto's DynamoDB backend does no locking of its own: two threads writing at once can both pass a
condition, or undo each other's transaction. DynamoDB itself applies each request atomically, so
:func:`serialized` wraps a client to apply one request at a time, which is what the service's
conditional writes rely on.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any, Final, cast

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
    return S3ContentStore(client, bucket)


class _Serialized:
    """Every method call of the wrapped client under one lock."""

    def __init__(self, client: Any, lock: threading.RLock) -> None:
        self._client = client
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute) or name == "exceptions":
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return call


def moto_table(name: str = LOCAL_TABLE) -> Any:
    """moto's own ``Table`` behind the emulated DynamoDB, for work that would be slow through botocore
    (reading or loading tens of thousands of items); hold :func:`moto_lock` while using it."""
    from moto.dynamodb.models import dynamodb_backends

    from parley.local.functions import LOCAL_ACCOUNT

    return dynamodb_backends[LOCAL_ACCOUNT][LOCAL_REGION].get_table(name)


@functools.cache
def moto_lock() -> threading.RLock:
    """The one lock of every serialized client (held across calls, it keeps the table still)."""
    return threading.RLock()


def serialized(client: DynamoDBClient, lock: threading.RLock | None = None) -> DynamoDBClient:
    """``client``, applying one request at a time (one lock shared by every wrapped client, as moto's
    backend is shared by the whole process)."""
    return cast("DynamoDBClient", _Serialized(client, lock or moto_lock()))
