"""Reading the operator configuration's values (``parley.reading``) as pydantic's lax mode read them, and
its secrets (``parley.secret``)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import SecretStr

from parley.reading import Reading, Refused, flag, items, mapping, read_record, reads, text, then, whole
from parley.secret import Secret


def read(reader: Any, value: Any) -> Any:
    reading = Reading()
    try:
        return reader(value, ("x",), reading)
    except Refused:
        return [mistake.message for mistake in reading.mistakes]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (25, 25),
        ("25", 25),
        (" 25 ", 25),
        (2.0, 2),
        ("2.0", 2),
        (True, 1),
        (2.5, ["Input should be a valid integer, got a number with a fractional part"]),
        ("x", ["Input should be a valid integer, unable to parse string as an integer"]),
        (None, ["Input should be a valid integer"]),
        (0, ["Input should be greater than or equal to 1"]),
    ],
)
def test_whole_numbers(value: Any, expected: Any) -> None:
    assert read(whole(minimum=1), value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        ("yes", True),
        ("Off", False),
        (1, True),
        (0.0, False),
        (2, ["Input should be a valid boolean, unable to interpret input"]),
        ("maybe", ["Input should be a valid boolean, unable to interpret input"]),
        (None, ["Input should be a valid boolean"]),
    ],
)
def test_booleans(value: Any, expected: Any) -> None:
    assert read(flag, value) == expected


def test_every_mistake_is_named_by_its_place() -> None:
    def short(value: str) -> str:
        if len(value) > 3:
            raise ValueError("at most 3 characters")
        return value

    reading = Reading()
    with pytest.raises(Refused):
        items(then(text, short))(["ab", 5, "abcd"], ("names",), reading)
    assert [(m.at, m.message) for m in reading.mistakes] == [
        (("names", 1), "Input should be a valid string"),
        (("names", 2), "at most 3 characters"),
    ]
    reading = Reading()
    with pytest.raises(Refused):
        mapping(text)({"a": 1, 2: "b"}, ("headers",), reading)
    assert [(m.at, m.message) for m in reading.mistakes] == [
        (("headers", "a"), "Input should be a valid string"),
        (("headers", 2, "[key]"), "Input should be a valid string"),
    ]


@dataclass(frozen=True)
class Window:
    size: int = field(metadata=reads(whole(minimum=1)))
    used: int = field(default=0, metadata=reads(whole()))
    label: str = field(default="", metadata=reads(text, lambda value, reading: value.strip()))

    def checked(self) -> None:
        if self.used > self.size:
            raise ValueError(f"used ({self.used}) is more than size ({self.size})")


def test_a_record_reads_its_fields_then_checks_itself() -> None:
    assert read_record(Window, {"size": "8", "label": " a "}, Reading()) == Window(size=8, used=0, label="a")
    for value, mistakes in [
        ({}, [(("size",), "Field required")]),
        ({"size": 0, "other": 1}, [
            (("size",), "Input should be greater than or equal to 1"),
            ((), "unknown key 'other' (allowed: size, used, label)"),
        ]),
        ({"size": 2, "used": 3}, [((), "used (3) is more than size (2)")]),
        ([], [((), "Input should be a valid dictionary or instance of Window")]),
    ]:  # fmt: skip
        reading = Reading()
        with pytest.raises(Refused):
            read_record(Window, value, reading)
        assert [(m.at, m.message) for m in reading.mistakes] == mistakes


def test_a_secret_never_shows_and_compares_by_its_value() -> None:
    secret = Secret("hunter2")

    assert (repr(secret), str(secret), str(Secret(""))) == ("Secret('**********')", "**********", "")
    assert secret.get_secret_value() == "hunter2"
    assert secret == Secret("hunter2") and secret == SecretStr("hunter2") and secret != "hunter2"
    assert hash(secret) == hash(Secret("hunter2"))
    assert pickle.loads(pickle.dumps(secret)) == secret
