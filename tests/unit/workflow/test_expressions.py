"""Expressions (workflow-format.md, "Expressions"): what is one, parsing it with jsonata-python, the
variables it reads and the functions it calls, and which of them its place does not have."""

from __future__ import annotations

import pytest

from parley.workflow.expressions import (
    EVERY_PLACE,
    FUNCTIONS,
    VARIABLES_OF_PLACE,
    ExpressionSyntaxError,
    ParsedExpression,
    Reference,
    condition_body,
    expression_body,
    parse_expression,
    reading_problems,
)


def test_expression_body_and_condition_body_stay_as_they_are() -> None:
    assert expression_body("${ $data.owner }") == "$data.owner"
    assert expression_body("plain") is None
    assert expression_body(3) is None
    assert condition_body("  $data.ok ") == "$data.ok"
    assert condition_body("${ $data.ok }") == "$data.ok"


def test_variables_read_and_functions_called_with_where_they_start() -> None:
    parsed = parse_expression('$merge([$input, { "review": $data }])')
    assert parsed.reads == (Reference("input", 8), Reference("data", 28))
    assert parsed.calls == (Reference("merge", 0),)
    assert parsed.variables == {"input", "data"}
    assert parsed.functions == {"merge"}


def test_the_context_and_the_root_are_not_variables() -> None:
    assert parse_expression("$.a + $$.b").reads == ()


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("($x := 1; $x + 1)", {"x"}),
        ("($f := function($a, $b){ $a + $b }; $f(1, 2))", {"f", "a", "b"}),
        ('$data.items@$item#$i.{ "at": $i, "name": $item.name }', {"item", "i"}),
        ("$data.items#$position[$position < 3]", {"position"}),
    ],
)
def test_names_the_expression_binds_are_its_own(text: str, bound: set[str]) -> None:
    parsed = parse_expression(text)
    assert parsed.bound == bound
    assert parsed.variables <= {"data"}
    assert parsed.functions == set()


def test_a_function_passed_by_name_is_read_as_a_variable() -> None:
    parsed = parse_expression("$map($data.names, $uppercase)")
    assert parsed.variables == {"data", "uppercase"}
    assert reading_problems(parsed, EVERY_PLACE) == []


def test_a_partial_application_calls_its_function() -> None:
    assert parse_expression("$data ~> $substring(?, 1)").functions == {"substring"}


def test_nested_places_are_walked() -> None:
    parsed = parse_expression(
        '$a ? $b : [$c[$d > 1], {"k": $e}, $f^($g), | $h | {"x": $i} |, function($p){ $j }]'
    )
    assert parsed.variables == set("abcdefghij")


def test_an_expression_that_does_not_parse() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression("$data.")
    assert caught.value.message == "Unexpected end of expression"
    assert caught.value.location == 6
    assert caught.value.code == "S0207"


@pytest.mark.parametrize("text", ["$data7/", "[1]&~**|1", "/(/", "(" * 5000 + ")" * 5000])
def test_text_jsonata_python_stumbles_on_is_an_expression_that_does_not_parse(text: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression(text)
    assert 0 <= caught.value.location <= len(text)


def test_every_function_of_jsonata_and_step_functions_but_eval() -> None:
    assert {"partition", "range", "hash", "random", "uuid", "parse", "now", "millis", "merge"} <= FUNCTIONS
    assert "eval" not in FUNCTIONS


def problems(text: str, place: str = "value") -> list[tuple[int, str]]:
    return reading_problems(parse_expression(text), VARIABLES_OF_PLACE[place])


def test_every_place_reads_the_six_variables() -> None:
    assert problems("[$data, $input, $context, $task, $workflow, $runtime]") == []


def test_output_only_in_export_as() -> None:
    assert problems("$output.x", "export.as") == []
    assert problems("$output.x") == [
        (0, "The expression reads $output, which this place does not have: only export.as reads $output")
    ]


def test_item_and_index_only_in_a_for() -> None:
    assert problems("$item.name & $index", "for") == []
    assert [offset for offset, _ in problems("$item.name & $index")] == [0, 13]


def test_error_only_in_a_catch_but_the_function_everywhere() -> None:
    assert problems("$error.status", "catch") == []
    assert problems('$error("stop")') == []
    assert problems("$error.status")[0][1].endswith(
        "$error is read only in a catch's when, exceptWhen and do"
    )


def test_where_another_place_names_a_variable() -> None:
    parsed = parse_expression("$item")
    found = reading_problems(parsed, {"data", "user"}, elsewhere={"item": "this for names its item $user"})
    assert found == [
        (0, "The expression reads $item, which this place does not have: this for names its item $user")
    ]


def test_unknown_variables_and_functions() -> None:
    assert problems("$nope + $shout($data)") == [
        (
            0,
            "The expression reads $nope, which is not a variable here; this place reads $data, $input, "
            "$context, $task, $workflow, $runtime",
        ),
        (
            8,
            "$shout() is not a function: the functions are JSONata's and Step Functions' ($partition, "
            "$range, $hash, $random, $uuid, $parse)",
        ),
    ]


def test_eval_is_not_run() -> None:
    assert problems('$eval("1")') == [(0, "Step Functions does not run $eval; read JSON text with $parse")]


def test_a_parsed_expression_is_plain_data() -> None:
    parsed = parse_expression("$data")
    assert parsed == ParsedExpression("$data", (Reference("data", 0),), (), frozenset())
