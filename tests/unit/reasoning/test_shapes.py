"""Output shapes (output-shapes.md): each shape's schema, its rules and its sentence in the overview."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from parley.reasoning.shapes import SHAPE_NAMES, ShapeName, check_shape, shape_schema, shape_sentence

SERIES: dict[str, Any] = {
    "title": "Sign-ups per week",
    "unit": "people",
    "x_label": "week",
    "y_label": "sign-ups",
    "points": [{"x": "2026-W40", "y": 120}, {"x": "2026-W41", "y": 134.5}],
}
CATEGORIES: dict[str, Any] = {
    "title": "Spend per channel",
    "unit": "USD",
    "items": [{"label": "search", "value": 4200}, {"label": "social", "value": 3100.5}],
}
TABLE: dict[str, Any] = {
    "title": "Open risks",
    "columns": [
        {"name": "risk", "type": "text"},
        {"name": "owner", "type": "text"},
        {"name": "score", "type": "number"},
    ],
    "rows": [["Budget unsourced", "maria", 7], ["No job role", "li", None]],
}
EXAMPLES: dict[ShapeName, dict[str, Any]] = {
    "series": SERIES,
    "categories": CATEGORIES,
    "table": TABLE,
    "text": {"text": "One passage of prose."},
}


def issues(name: ShapeName, answer: Any) -> list[tuple[str, str]]:
    return [(issue.pointer, issue.detail) for issue in check_shape(name, answer)]


def changed(name: ShapeName, **fields: Any) -> dict[str, Any]:
    answer = copy.deepcopy(EXAMPLES[name])
    answer.update(fields)
    return answer


@pytest.mark.parametrize("name", SHAPE_NAMES)
def test_the_pages_examples_match_their_shapes(name: ShapeName) -> None:
    assert check_shape(name, EXAMPLES[name]) == []


@pytest.mark.parametrize("name", SHAPE_NAMES)
def test_every_schema_is_closed_with_every_property_required(name: ShapeName) -> None:
    stack: list[Any] = [shape_schema(name)]
    assert stack[0]["type"] == "object"
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "properties" in node:
                assert node["additionalProperties"] is False
                assert node["required"] == list(node["properties"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def test_optional_fields_are_nullable() -> None:
    answer = changed("series", title=None, unit=None, x_label=None, y_label=None)
    answer["points"][0]["y"] = None
    assert check_shape("series", answer) == []
    assert check_shape("categories", changed("categories", title=None, unit=None)) == []
    assert check_shape("table", changed("table", title=None)) == []


def test_the_schema_is_a_fresh_copy() -> None:
    shape_schema("text")["properties"]["text"]["type"] = "number"
    assert shape_schema("text")["properties"]["text"] == {"type": "string"}


@pytest.mark.parametrize(
    ("name", "sentence"),
    [
        ("series", "a series of points (`x`, `y`) with a title and a unit"),
        ("categories", "values of categories"),
        ("table", "a table of rows under named columns"),
        ("text", "a passage of text"),
    ],
)
def test_the_overview_sentence(name: ShapeName, sentence: str) -> None:
    assert shape_sentence(name) == sentence


def test_the_schema_comes_first_with_its_pointers() -> None:
    answer = changed("series", unit=3, extra=True)
    del answer["title"]
    assert issues("series", answer) == [
        ("", 'Missing required property "title"'),
        ("/unit", "Expected string or null, found integer"),
        ("/extra", "Unexpected property: the schema allows no others here"),
    ]
    assert check_shape("series", answer, "/answer")[0].pointer == "/answer"


class TestSeries:
    def test_points_are_in_ascending_order_of_x(self) -> None:
        points = [{"x": 1, "y": 1}, {"x": 3, "y": 2}, {"x": 2, "y": 3}, {"x": 4, "y": None}]
        assert issues("series", changed("series", points=points)) == [
            ("/points/2/x", "x 2 comes after 3: the points are in ascending order of x")
        ]

    def test_texts_are_ordered_by_their_characters(self) -> None:
        points = [{"x": "Apr", "y": 1}, {"x": "Aug", "y": 2}, {"x": "Feb", "y": 3}]
        assert check_shape("series", changed("series", points=points)) == []
        points = [{"x": "b", "y": 1}, {"x": "B", "y": 2}]
        assert issues("series", changed("series", points=points)) == [
            ("/points/1/x", "x 'B' comes after 'b': the points are in ascending order of x")
        ]

    def test_no_x_twice(self) -> None:
        points = [{"x": 1, "y": 1}, {"x": 1.0, "y": 2}]
        assert issues("series", changed("series", points=points)) == [
            ("/points/1/x", "x 1.0 appears twice: no x twice")
        ]

    def test_every_x_of_one_kind(self) -> None:
        points = [{"x": 1, "y": 1}, {"x": "2", "y": 2}]
        assert issues("series", changed("series", points=points)) == [
            ("/points/1/x", "x is a text while the first x is a number: every x is of one kind")
        ]

    def test_x_is_a_number_or_a_text(self) -> None:
        found = issues("series", changed("series", points=[{"x": True, "y": 1}]))
        assert found == [("/points/0/x", "Expected number or string, found boolean")]

    @pytest.mark.parametrize("y", [float("nan"), float("inf")])
    def test_y_is_finite_or_null(self, y: float) -> None:
        found = issues("series", changed("series", points=[{"x": 1, "y": y}]))
        assert found == [("/points/0/y", "Expected a finite number or null")]

    @pytest.mark.parametrize(("count", "ok"), [(0, False), (1, True), (1_000, True), (1_001, False)])
    def test_one_to_1000_points(self, count: int, ok: bool) -> None:
        points = [{"x": i, "y": i} for i in range(count)]
        found = issues("series", changed("series", points=points))
        assert found == ([] if ok else [("/points", f"Expected 1 to 1,000 points, found {count:,}")])


class TestCategories:
    def test_no_label_twice(self) -> None:
        items = [
            {"label": "search", "value": 1},
            {"label": "social", "value": 2},
            {"label": "search", "value": 3},
        ]
        assert issues("categories", changed("categories", items=items)) == [
            ("/items/2/label", "The label 'search' appears twice: no label twice")
        ]

    @pytest.mark.parametrize(
        ("label", "ok"), [("", False), ("a", True), ("a" * 200, True), ("a" * 201, False)]
    )
    def test_a_label_is_1_to_200_characters(self, label: str, ok: bool) -> None:
        found = issues("categories", changed("categories", items=[{"label": label, "value": 1}]))
        assert found == ([] if ok else [("/items/0/label", "A label is 1 to 200 characters")])

    def test_a_value_is_a_finite_number(self) -> None:
        found = issues("categories", changed("categories", items=[{"label": "a", "value": None}]))
        assert found == [("/items/0/value", "Expected number, found null")]
        found = issues("categories", changed("categories", items=[{"label": "a", "value": float("inf")}]))
        assert found == [("/items/0/value", "Expected a finite number")]

    @pytest.mark.parametrize(("count", "ok"), [(0, False), (1_000, True), (1_001, False)])
    def test_one_to_1000_items(self, count: int, ok: bool) -> None:
        items = [{"label": f"c{i}", "value": i} for i in range(count)]
        found = issues("categories", changed("categories", items=items))
        assert found == ([] if ok else [("/items", f"Expected 1 to 1,000 items, found {count:,}")])


class TestTable:
    def test_every_row_has_a_cell_for_each_column(self) -> None:
        rows = [["a", "b", 1], ["a", "b"]]
        assert issues("table", changed("table", rows=rows)) == [
            ("/rows/1", "Expected 3 cells, one for each column, found 2")
        ]

    def test_each_cell_is_of_its_columns_type_or_null(self) -> None:
        columns = [
            {"name": "t", "type": "text"},
            {"name": "n", "type": "number"},
            {"name": "b", "type": "boolean"},
            {"name": "d", "type": "date"},
        ]
        fine = [["x", 1.5, True, "2026-10-01"], [None, None, None, None]]
        assert check_shape("table", changed("table", columns=columns, rows=fine)) == []
        wrong = [[1, "1", "true", "2026-02-30"], [True, False, 0, "01/10/2026"], ["x", 1, None, 20261001]]
        assert issues("table", changed("table", columns=columns, rows=wrong)) == [
            ("/rows/0/0", "Expected a text or null, as the column's type is text"),
            ("/rows/0/1", "Expected a number or null, as the column's type is number"),
            ("/rows/0/2", "Expected true or false or null, as the column's type is boolean"),
            ("/rows/0/3", "'2026-02-30' is not an ISO 8601 date such as 2026-10-01"),
            ("/rows/1/0", "Expected a text or null, as the column's type is text"),
            ("/rows/1/1", "Expected a number or null, as the column's type is number"),
            ("/rows/1/2", "Expected true or false or null, as the column's type is boolean"),
            ("/rows/1/3", "'01/10/2026' is not an ISO 8601 date such as 2026-10-01"),
            ("/rows/2/3", "Expected a date or null, as the column's type is date"),
        ]

    def test_no_column_name_twice(self) -> None:
        columns = [{"name": "a", "type": "text"}, {"name": "a", "type": "number"}]
        assert issues("table", changed("table", columns=columns, rows=[])) == [
            ("/columns/1/name", "The column 'a' appears twice: no column name twice")
        ]

    def test_column_types(self) -> None:
        found = issues("table", changed("table", columns=[{"name": "a", "type": "money"}], rows=[]))
        assert found == [("/columns/0/type", 'Expected one of "text", "number", "boolean", "date"')]

    @pytest.mark.parametrize(("name", "ok"), [("", False), ("n" * 100, True), ("n" * 101, False)])
    def test_a_column_name_is_1_to_100_characters(self, name: str, ok: bool) -> None:
        found = issues("table", changed("table", columns=[{"name": name, "type": "text"}], rows=[]))
        assert found == ([] if ok else [("/columns/0/name", "A column name is 1 to 100 characters")])

    @pytest.mark.parametrize(("count", "ok"), [(0, False), (1, True), (50, True), (51, False)])
    def test_one_to_50_columns(self, count: int, ok: bool) -> None:
        columns = [{"name": f"c{i}", "type": "text"} for i in range(count)]
        found = issues("table", changed("table", columns=columns, rows=[]))
        assert found == ([] if ok else [("/columns", f"Expected 1 to 50 columns, found {count}")])

    @pytest.mark.parametrize(("count", "ok"), [(0, True), (10_000, True), (10_001, False)])
    def test_zero_to_10000_rows(self, count: int, ok: bool) -> None:
        columns = [{"name": "n", "type": "number"}]
        found = issues("table", changed("table", columns=columns, rows=[[i] for i in range(count)]))
        assert found == ([] if ok else [("/rows", f"Expected 0 to 10,000 rows, found {count:,}")])

    def test_issues_are_capped_at_20_then_counted(self) -> None:
        columns = [{"name": "n", "type": "number"}]
        found = issues("table", changed("table", columns=columns, rows=[["x"]] * 30))
        assert len(found) == 21
        assert found[-1] == ("/rows/20/0", "10 more issues are not shown")


class TestText:
    def test_at_most_200000_characters(self) -> None:
        assert check_shape("text", {"text": "x" * 200_000}) == []
        assert issues("text", {"text": "x" * 200_001}) == [
            ("/text", "The text is 200,001 characters; at most 200,000 are allowed")
        ]

    def test_text_is_text(self) -> None:
        assert issues("text", {"text": None}) == [("/text", "Expected string, found null")]
