from __future__ import annotations

import base64
import json

import pytest

from parley.definitions.cursor import decode_cursor, encode_cursor
from parley.errors import Problem


def test_a_cursor_gives_back_its_position_for_its_own_list() -> None:
    cursor = encode_cursor("list-a", ["2026-10-17T10:18:42.000Z", "some-name"])

    assert decode_cursor("list-a", cursor) == ["2026-10-17T10:18:42.000Z", "some-name"]
    assert cursor.isascii() and "=" not in cursor


def forged(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "!!!",
        "bm90IGpzb24",  # "not json"
        forged([1, 2]),
        forged({"v": 2, "s": "x", "p": []}),
        forged({"v": 1, "s": "0000000000000000", "p": ["a"]}),
    ],
)
def test_cursors_this_list_did_not_give_out_are_bad_requests(cursor: str) -> None:
    with pytest.raises(Problem) as caught:
        decode_cursor("list-a", cursor)
    assert (caught.value.status, caught.value.reason) == (400, "bad_request")


def test_a_cursor_of_another_list_is_refused() -> None:
    with pytest.raises(Problem):
        decode_cursor("list-b", encode_cursor("list-a", ["x"]))
