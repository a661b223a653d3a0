"""JSON Pointers of ``call.read``, ``deliver.sent`` and ``replies.read`` ("Templates and pointers")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.documents.pointers import (
    escape_token,
    join_pointer,
    pointer_problem,
    resolve_pointer,
    split_pointer,
    unescape_token,
)

# RFC 6901, section 5
RFC_DOCUMENT: dict[str, Any] = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize("text", ["/messages", "/messages/0/text", "/a~1b", "/m~0n", "/", "//", "/~01"])
def test_valid_pointers(text: str) -> None:
    assert pointer_problem(text) is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("messages", "starts with a slash"),
        ("#/messages", "starts with a slash"),
        ("/a~2b", "~0"),
        ("/a~", "~0"),
        ("/a~b/c", "~1"),
        ("", "not an empty one"),
    ],
)
def test_invalid_pointers(text: str, words: str) -> None:
    problem = pointer_problem(text)
    assert problem is not None and words in problem


def test_the_empty_pointer_is_the_callers_choice() -> None:
    assert pointer_problem("", allow_empty=True) is None
    assert pointer_problem("", allow_empty=False) is not None


@pytest.mark.parametrize("value", [None, 3, ["/a"], {"a": 1}])
def test_a_pointer_is_text(value: object) -> None:
    assert pointer_problem(value) == "Expected a JSON Pointer as text, such as /messages"


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", RFC_DOCUMENT),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_resolve_the_rfc_examples(pointer: str, expected: Any) -> None:
    assert resolve_pointer(RFC_DOCUMENT, pointer) == (True, expected)


@pytest.mark.parametrize(
    "pointer",
    [
        "/foo/2",
        "/foo/-",
        "/foo/01",
        "/foo/-1",
        "/foo/+1",
        "/foo/1e0",
        "/foo/" + "9" * 5000,
        "/nope",
        "/foo/0/x",
        "/a/b",
        "foo",
        "/m~2n",
        "/ /x",
    ],
)
def test_what_is_not_there_is_not_found(pointer: str) -> None:
    assert resolve_pointer(RFC_DOCUMENT, pointer) == (False, None)


def test_a_null_value_is_found() -> None:
    assert resolve_pointer({"a": None}, "/a") == (True, None)
    assert resolve_pointer({"a": [None]}, "/a/0") == (True, None)


def test_escape_and_join() -> None:
    assert escape_token("a/b~c") == "a~1b~0c"
    assert unescape_token("a~1b~0c") == "a/b~c"
    assert unescape_token("~01") == "~1"
    assert join_pointer("/input", "a/b", 0, "m~n") == "/input/a~1b/0/m~0n"
    assert join_pointer("") == ""
    assert join_pointer("", "") == "/"


def test_split_pointer() -> None:
    assert split_pointer("") == []
    assert split_pointer("/a~1b/0//m~0n") == ["a/b", "0", "", "m~n"]
    with pytest.raises(ValueError, match="slash"):
        split_pointer("a")


names = st.text(max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=15,
)


@given(st.lists(names, max_size=6))
def test_a_joined_pointer_is_valid_and_splits_back(tokens: list[str]) -> None:
    pointer = join_pointer("", *tokens)
    assert pointer_problem(pointer, allow_empty=True) is None
    assert split_pointer(pointer) == tokens


@given(json_values)
def test_every_place_in_a_document_is_found_by_its_pointer(document: Any) -> None:
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        value, pointer = stack.pop()
        assert resolve_pointer(document, pointer) == (True, value)
        if isinstance(value, dict):
            stack.extend((child, join_pointer(pointer, key)) for key, child in value.items())
        elif isinstance(value, list):
            stack.extend((child, join_pointer(pointer, index)) for index, child in enumerate(value))


@given(json_values, st.text(max_size=20))
def test_resolve_never_raises(document: Any, pointer: str) -> None:
    found, value = resolve_pointer(document, pointer)
    assert found or value is None
