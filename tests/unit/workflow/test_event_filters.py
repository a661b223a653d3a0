"""Which events a listen takes (``parley.workflow.event_filters``; ``workflow-format.md``, "Events")."""

from __future__ import annotations

from typing import Any

from parley.workflow.event_filters import json_equal, literal_types, matches, output_of, taken


def event(event_type: str, data: Any = None, **more: Any) -> dict[str, Any]:
    return {
        "type": event_type,
        "id": more.get("id", event_type),
        "time": "t",
        "source": more.get("source", "/s"),
        "subject": more.get("subject"),
        "data": data,
    }


def test_each_attribute_written_must_equal_the_events() -> None:
    approved = event("brief.approved", {"by": "maria", "score": 1}, subject="b-1")
    assert matches(approved, {"with": {"type": "brief.approved"}})
    assert matches(approved, {"with": {"type": "brief.approved", "subject": "b-1", "source": "/s"}})
    assert matches(approved, {"with": {"data": {"score": 1.0, "by": "maria"}}})
    assert not matches(approved, {"with": {"type": "brief.approved", "subject": "b-2"}})
    assert not matches(approved, {"with": {"data": {"by": "maria"}}})
    assert matches(approved, {"with": {}})


def test_json_equality_tells_booleans_from_numbers() -> None:
    assert json_equal(1, 1.0) and json_equal({"a": [1, "x"]}, {"a": [1.0, "x"]})
    assert not json_equal(True, 1) and not json_equal(0, False) and not json_equal(None, "")


def test_an_expression_over_data_must_give_true() -> None:
    approved = event("brief.approved", {"score": 7})
    assert matches(approved, {"with": {"data": "${ $data.score > 5 }"}})
    assert not matches(approved, {"with": {"data": "${ $data.score > 9 }"}})
    assert matches(approved, {"with": {"type": "${ $contains($data, 'approved') }"}})
    assert not matches(approved, {"with": {"data": "${ $data.score }"}})  # 7 is not true
    assert not matches(approved, {"with": {"data": "${ $data.missing.deeper = 1 }"}})


def test_a_failing_or_endless_expression_does_not_hold() -> None:
    approved = event("a", {"n": 1})
    assert not matches(approved, {"with": {"data": "${ $error('no') }"}})
    endless = "${ ($f := function($x){ $f($x) + 1 }; $f(1)) = 1 }"
    assert not matches(approved, {"with": {"data": endless}})


def test_one_and_any_take_the_earliest_match() -> None:
    kept = [event("b", id="1"), event("a", id="2"), event("a", id="3")]
    assert taken({"one": {"with": {"type": "a"}}}, kept) == [1]
    assert taken({"any": [{"with": {"type": "c"}}, {"with": {"type": "b"}}]}, kept) == [0]
    assert taken({"one": {"with": {"type": "c"}}}, kept) is None


def test_all_takes_one_event_per_filter_in_any_order_each_once() -> None:
    filters = {"all": [{"with": {"type": "a"}}, {"with": {"type": "b"}}]}
    assert taken(filters, [event("b"), event("a")]) == [1, 0]
    assert taken(filters, [event("a"), event("a")]) is None
    # The earliest event fits both filters; the only other fits the first: each filter still gets one.
    both = {"all": [{"with": {"source": "/s"}}, {"with": {"type": "x"}}]}
    assert taken(both, [event("x"), event("y")]) == [1, 0]


def test_the_types_written_out_are_where_emitted_events_reach() -> None:
    to = {"all": [{"with": {"type": "a"}}, {"with": {"type": "${ $data = 'b' }"}}, {"with": {"type": "a"}}]}
    assert literal_types(to) == ["a"]
    assert literal_types({"one": {"with": {"source": "/x"}}}) == []


def test_the_output_is_the_data_or_the_envelopes() -> None:
    kept = [event("a", {"n": 1}, subject="s")]
    assert output_of("data", kept) == [{"n": 1}]
    assert output_of("envelope", kept) == [
        {"type": "a", "id": "a", "time": "t", "source": "/s", "subject": "s", "data": {"n": 1}}
    ]
