"""JSON text kept packed on a table item (issue 26's follow-up on an agent run's cost): zlib, then
base85, as a string attribute.

DynamoDB meters a write by the item's size, one unit a KB (two in a transaction), and an index entry
that projects the item by its size too. The JSON a run keeps for a read or for its next step (a waiting
agent run's state, the record of an ended run) is verbose — repeated keys, the conversation's turns
twice over (``provider_state``) — and packs to about 40% of its size, base85 included: often the
difference between an item under and over 1 KB.

A string and not a binary attribute: every item of the local runtime is journalled as JSON
(``parley.local.persistence``), and text is what every reader of the table already handles. Values
written before this module are plain JSON text under another attribute name; readers take both.
"""

from __future__ import annotations

import base64
import zlib


def pack(text: str) -> str:
    """``text`` compressed and in base85."""
    return base64.b85encode(zlib.compress(text.encode("utf-8", "surrogatepass"), 9)).decode("ascii")


def unpack(packed: str) -> str:
    """The text :func:`pack` made ``packed`` of."""
    return zlib.decompress(base64.b85decode(packed)).decode("utf-8", "surrogatepass")
