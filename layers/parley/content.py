"""Where content too large for a table item is kept (``interaction-format.md``, "Bounds": what a
function's ``read`` takes is 1 MiB as JSON with the run's record; "What is kept and shown": the tool's
whole result).

A DynamoDB item holds at most 400 KB, so the runs store keeps a JSON value larger than
:data:`ITEM_CONTENT_MAX` as one object here and only its key on the item. On AWS that is an S3 bucket
(``PARLEY_CONTENT_BUCKET``); locally the same bucket in moto. Objects are written before the item that
names them, so an item never names a missing object (a write that then fails leaves an object nobody
names, which costs a few bytes and nothing else).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol

from parley.aws_edge import translated

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

#: JSON text larger than this (bytes) leaves the item for the content store.
ITEM_CONTENT_MAX: Final = 64 * 1024

UNAVAILABLE_CODES: Final = frozenset({"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout"})


class ContentStore(Protocol):
    """JSON text by key."""

    def put(self, key: str, text: str) -> None: ...

    def get(self, key: str) -> str: ...


class ContentMissing(RuntimeError):
    """Content too large for an item, and no content store to keep it in."""


class S3ContentStore:
    """A :class:`ContentStore` on one S3 bucket, through an injected client."""

    def __init__(self, client: S3Client | Any, bucket: str) -> None:
        self._client = client
        self.bucket = bucket

    def put(self, key: str, text: str) -> None:
        with translated(
            "The content bucket", "keep the content", ignore=frozenset(), unavailable=UNAVAILABLE_CODES
        ):
            self._client.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=text.encode("utf-8", "surrogatepass"),
                ContentType="application/json",
            )

    def get(self, key: str) -> str:
        with translated(
            "The content bucket", "read the content", ignore=frozenset(), unavailable=UNAVAILABLE_CODES
        ):
            response = self._client.get_object(Bucket=self.bucket, Key=key)
            body: bytes = response["Body"].read()
        return body.decode("utf-8", "surrogatepass")
