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

from typing import Final, Protocol

from parley.errors import ContentMissing as ContentMissing

#: JSON text larger than this (bytes) leaves the item for the content store.
ITEM_CONTENT_MAX: Final = 64 * 1024


class ContentStore(Protocol):
    """JSON text by key."""

    def put(self, key: str, text: str) -> None: ...

    def get(self, key: str) -> str: ...
