"""JSONata as Step Functions evaluates it (``parley.local.jsonata_eval``): Step Functions' added
functions, the clock, the time limit, plain JSON results, and templates of ``{% %}`` fields."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from parley.local.jsonata_eval import (
    Expression,
    ExpressionFailed,
    evaluate,
    expression_text,
    parse_template,
    render,
)

NOW = datetime(2025, 3, 4, 5, 6, 7, 890_000, tzinfo=UTC)


def run(text: str, **bindings: Any) -> Any:
    return evaluate(text, bindings, now=lambda: NOW)


def fails(text: str, **bindings: Any) -> str:
    with pytest.raises(ExpressionFailed) as caught:
        run(text, **bindings)
    return caught.value.message


# -- values ----------------------------------------------------------------------------------------------


def test_variables_are_bound_and_results_are_plain_json() -> None:
    states = {"input": {"a": 1, "b": None, "items": [1, None, {"c": 2.0}]}}
    assert run("$states.input.a + 1", states=states) == 2
    assert run("$states.input.b", states=states) is None
    assert run("$states.input.items", states=states) == [1, None, {"c": 2}]
    assert run("[1..3]") == [1, 2, 3]
    assert type(run("[1..3]")) is list
    assert run("$x.y", x={"y": [1, 2]}) == [1, 2]
    assert run("$merge([$x, {'b': null}])", x={"a": 1}) == {"a": 1, "b": None}


def test_whole_numbers_are_ints_as_in_json() -> None:
    assert run("1.0 * 3") == 3
    assert type(run("1.0 * 3")) is int
    assert run("10 / 4") == 2.5
    # Whole floats given in are JSON's whole numbers too ($string writes them as JavaScript does).
    assert run("$string($x)", x={"n": 2.0}) == '{"n":2}'


def test_null_is_a_value_and_undefined_is_a_failure() -> None:
    assert run("$x = null", x=None) is True
    assert run("$exists($x.a)", x={"a": None}) is True
    assert "returned nothing (undefined)" in fails("$x.missing", x={})
    assert "returned nothing" in fails("$nothing")
    # Undefined inside an object or array is left out, as JSONata does.
    assert run("{'a': $x.missing, 'b': 1}", x={}) == {"b": 1}
    assert run("[$x.missing, 2]", x={}) == [2]


def test_a_function_is_not_a_json_result() -> None:
    assert "unsupported result type" in fails("function($a){ $a }")


def test_failures_are_one_exception() -> None:
    assert "does not parse" in fails("1 +")
    assert "must evaluate to a number" in fails("$x + 1", x="text")
    assert "boom" in fails("$error('boom')")


# -- the clock -------------------------------------------------------------------------------------------


def test_now_and_millis_read_the_given_clock() -> None:
    assert run("$now()") == "2025-03-04T05:06:07.890Z"
    assert run("$millis()") == int(NOW.timestamp() * 1000)
    assert run("$now('[Y0001]-[M01]-[D01]')") == "2025-03-04"
    assert run("$fromMillis($millis())") == "2025-03-04T05:06:07.890Z"
    # One instant for the whole expression.
    assert run("$now() = $now()") is True


def test_without_a_clock_now_is_the_real_time() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = evaluate("$now()", {})
    assert datetime.fromisoformat(stamp.replace("Z", "+00:00")) >= before


# -- Step Functions' functions ---------------------------------------------------------------------------


def test_partition() -> None:
    assert run("$partition([1,2,3,4,5,6,7,8,9], 4)") == [[1, 2, 3, 4], [5, 6, 7, 8], [9]]
    assert run("$partition([], 2)") == []
    assert "positive integer" in fails("$partition([1, 2], 0)")
    assert "positive integer" in fails("$partition([1, 2], 1.5)")
    assert fails("$partition('ab', 1)")


def test_range() -> None:
    assert run("$range(0, 10, 2)") == [0, 2, 4, 6, 8, 10]
    assert run("$range(10, 0, -3)") == [10, 7, 4, 1]
    assert run("$range(1, 0, 1)") == []
    assert run("$count($range(1, 1000, 1))") == 1000
    assert "at most 1000" in fails("$range(0, 1000, 1)")
    assert "not 0" in fails("$range(0, 10, 0)")
    assert "integers" in fails("$range(0, 1.5, 1)")


def test_hash() -> None:
    assert run("$hash('hello', 'SHA-256')") == hashlib.sha256(b"hello").hexdigest()
    assert run("$hash('hello', 'MD5')") == hashlib.md5(b"hello").hexdigest()
    assert run("$hash('hello', 'SHA-1')") == hashlib.sha1(b"hello").hexdigest()
    assert run("$hash('hello', 'SHA-384')") == hashlib.sha384(b"hello").hexdigest()
    assert run("$hash('hello', 'SHA-512')") == hashlib.sha512(b"hello").hexdigest()
    assert "algorithm" in fails("$hash('hello', 'SHA-3')")
    assert fails("$hash(1, 'MD5')")


def test_random() -> None:
    value = run("$random()")
    assert 0 <= value < 1
    assert run("$random(42)") == run("$random(42)")
    assert 0 <= run("$random(42)") < 1
    assert fails("$random('seed')")


def test_uuid() -> None:
    made = uuid.UUID(run("$uuid()"))
    assert made.version == 4
    assert run("$uuid() != $uuid()") is True


def test_parse_and_no_eval() -> None:
    assert run("$parse('{\"a\": [1, null, 2.0]}')") == {"a": [1, None, 2]}
    assert run("$parse($x).a", x='{"a": true}') is True
    assert "not JSON" in fails("$parse('{nope')")
    assert "$eval is not available" in fails("$eval('1 + 1')")


# -- the time limit --------------------------------------------------------------------------------------


def test_an_endless_expression_fails_instead_of_running_on() -> None:
    assert "timeout" in fails("($f := function($n){ $f($n + 1) }; $f(0))").lower()


def test_a_runaway_recursion_fails() -> None:
    assert fails("($f := function($n){ 1 + $f($n + 1) }; $f(0))")


def test_a_huge_loop_fails() -> None:
    assert fails("$reduce([1..1000000], function($a, $b){ $a + $b })")
    assert fails("$count($range(0, 100000000, 1))")


# -- templates -------------------------------------------------------------------------------------------


def test_a_template_is_an_expression_only_when_the_whole_string_is_one() -> None:
    assert expression_text("{% 1 + 1 %}") == " 1 + 1 "
    assert expression_text("{%1%}") == "1"
    assert expression_text(" {% 1 %}") is None
    assert expression_text("a {% 1 %}") is None
    assert expression_text(3) is None
    template = parse_template({"a": "{% $x %}", "b": ["{% $x + 1 %}", "plain", 3], "c": {"d": "x"}})
    assert template == {"a": Expression(" $x "), "b": [Expression(" $x + 1 "), "plain", 3], "c": {"d": "x"}}
    assert render(template, {"x": 1}) == {"a": 1, "b": [2, "plain", 3], "c": {"d": "x"}}
    assert render({"raw": "{% $x * 2 %}"}, {"x": 4}) == {"raw": 8}
