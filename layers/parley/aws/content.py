"""The content store on S3 (``parley.ports.content``): the bucket of ``PARLEY_CONTENT_BUCKET`` on AWS,
the same bucket in moto locally."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from parley.aws.edge import translated

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

UNAVAILABLE_CODES: Final = frozenset({"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout"})


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
