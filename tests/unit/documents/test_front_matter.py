"""Front matter: split from the body, read as YAML 1.2 core schema ("How a document is checked")."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.documents.front_matter import (
    MAX_NESTING,
    LineIndex,
    LoadedFrontMatter,
    SplitDocument,
    load_front_matter,
    split_document,
)
from parley.documents.problems import DocumentProblem

# interaction-format.md, "A function document"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "definitions"
APPROVE_CAMPAIGN_BRIEF = (EXAMPLES / "approve-campaign-brief.md").read_text(encoding="utf-8")


def load(yaml_text: str, first_line: int = 2) -> LoadedFrontMatter:
    loaded = load_front_matter(yaml_text, first_line)
    assert isinstance(loaded, LoadedFrontMatter), loaded
    return loaded


def problems_of(yaml_text: str, first_line: int = 2) -> list[DocumentProblem]:
    loaded = load_front_matter(yaml_text, first_line)
    assert isinstance(loaded, list), loaded
    return loaded


# --- splitting -------------------------------------------------------------------------------------------


def test_split_the_spec_example() -> None:
    split = split_document(APPROVE_CAMPAIGN_BRIEF)
    assert isinstance(split, SplitDocument)
    assert split.front_matter.startswith("description: Asks")
    assert split.front_matter.endswith("note: { type: string, maxLength: 2000 }\n")
    assert split.front_matter_first_line == 2
    assert split.body.startswith("The review of your campaign brief is ready:\n")
    assert split.body_first_line == 20
    assert APPROVE_CAMPAIGN_BRIEF.splitlines()[split.body_first_line - 1] == split.body.splitlines()[0]


def test_split_handles_crlf_and_a_byte_order_mark() -> None:
    split = split_document("\ufeff---\r\na: 1\r\nb: 2\r\n---\r\nHello\r\nthere\r\n")
    assert split == SplitDocument("a: 1\nb: 2\n", 2, "Hello\nthere\n", 5)


def test_split_reads_a_lone_carriage_return_as_a_line_end() -> None:
    split = split_document("---\ra: 1\r---\rHi")
    assert split == SplitDocument("a: 1\n", 2, "Hi", 4)


def test_split_allows_trailing_blanks_on_the_fences_and_an_empty_body() -> None:
    assert split_document("---  \na: 1\n--- \t") == SplitDocument("a: 1\n", 2, "", 4)
    assert split_document("---\n---\n") == SplitDocument("", 2, "", 3)


def test_an_indented_fence_inside_a_block_scalar_does_not_close() -> None:
    split = split_document("---\nnote: |\n  ---\n  more\n---\nbody")
    assert isinstance(split, SplitDocument)
    assert split.front_matter == "note: |\n  ---\n  more\n"
    assert load(split.front_matter).data == {"note": "---\nmore\n"}
    assert split.body == "body"


@pytest.mark.parametrize(
    "source", ["", "hello", "\n---\na: 1\n---\n", " ---\na: 1\n---\n", "--- a: 1\n---\n", "----\na: 1\n---\n"]
)
def test_a_document_starts_with_its_fence(source: str) -> None:
    split = split_document(source)
    assert isinstance(split, list)
    assert [p.line for p in split] == [1]
    assert "starts with a line '---'" in split[0].message


def test_an_unclosed_front_matter_is_a_problem_on_its_first_line() -> None:
    split = split_document("---\na: 1\nb: 2\n")
    assert split == [
        DocumentProblem(1, "", "The front matter opened on line 1 is not closed by a line '---'")
    ]


# --- the core schema -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "Yes",
        "NO",
        "On",
        "2026-10-01",
        "2026-10-01T10:00:00Z",
        "12:30",
        "1_000",
        "0b101",
        "0O17",
        "0X1F",
        "+0x1F",
        "1e",
        "e5",
        ".",
        "._1",
        "infinity",
        "nan",
        "P2D",
        "0x",
        "0o8",
    ],
)
def test_these_stay_strings(text: str) -> None:
    assert load(f"value: {text}\n").data == {"value": text}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        ("null", None),
        ("Null", None),
        ("NULL", None),
        ("~", None),
        ("", None),
        ("0", 0),
        ("-17", -17),
        ("+17", 17),
        ("012", 12),
        ("0o17", 15),
        ("0x1F", 31),
        ("0xff", 255),
        ("1.5", 1.5),
        ("-1.5", -1.5),
        (".5", 0.5),
        ("1.", 1.0),
        ("1e3", 1000.0),
        ("1.5E-3", 0.0015),
        ("+12.5e+2", 1250.0),
    ],
)
def test_core_schema_values(text: str, value: Any) -> None:
    data = load(f"value: {text}\n").data
    assert data == {"value": value}
    assert type(data["value"]) is type(value)


@pytest.mark.parametrize("text", ["'true'", '"null"', "'12'", '"1.5"', "|\n  12\n", ">\n  true\n"])
def test_quoted_and_block_scalars_are_strings(text: str) -> None:
    value = load(f"value: {text}").data["value"]
    assert isinstance(value, str)


@pytest.mark.parametrize("text", [".inf", "-.inf", "+.Inf", ".INF", ".nan", ".NaN", ".NAN"])
def test_numbers_must_be_finite(text: str) -> None:
    assert problems_of(f"a: 1\nvalue: {text}\n") == [
        DocumentProblem(3, "/value", f"Numbers must be finite: quote {text} to keep it as text")
    ]


def test_a_float_too_large_is_not_finite() -> None:
    [problem] = problems_of("value: 1e999\n")
    assert (problem.line, problem.pointer) == (2, "/value")
    assert "finite" in problem.message


def test_a_number_with_too_many_digits_is_a_problem() -> None:
    [problem] = problems_of("value: " + "9" * 5000 + "\n")
    assert (problem.line, problem.pointer) == (2, "/value")
    assert "too long" in problem.message


def test_the_spec_example_loads() -> None:
    split = split_document(APPROVE_CAMPAIGN_BRIEF)
    assert isinstance(split, SplitDocument)
    data = load(split.front_matter, split.front_matter_first_line).data
    assert data["expires"] == "P2D"
    assert data["to"] == "{{ input.owner }}"
    assert data["output"]["schema"]["properties"]["verdict"] == {
        "type": "string",
        "enum": ["approve", "revise"],
    }
    assert data["output"]["schema"]["properties"]["note"]["maxLength"] == 2000


# --- refusals --------------------------------------------------------------------------------------------


def test_a_duplicate_key_is_refused_at_its_second_line() -> None:
    assert problems_of("a: 1\nb: 2\na: 3\n") == [
        DocumentProblem(4, "/a", "The key 'a' appears twice in this mapping")
    ]


def test_duplicate_keys_deep_down_are_each_reported() -> None:
    problems = problems_of("a:\n  b: 1\n  b: 2\n  c:\n    - {d: 1, d: 2}\n")
    assert [(p.line, p.pointer) for p in problems] == [(4, "/a/b"), (6, "/a/c/0/d")]


def test_quoted_and_plain_spellings_of_one_key_are_duplicates() -> None:
    assert [p.pointer for p in problems_of("a: 1\n'a': 2\n")] == ["/a"]


def test_anchors_and_aliases_are_refused() -> None:
    problems = problems_of("base: &b {x: 1}\nother: *b\n")
    assert problems == [
        DocumentProblem(2, "/base", "Anchors (&b) are not allowed: write the value out"),
        DocumentProblem(3, "/other", "Aliases (*b) are not allowed: write the value out"),
    ]


def test_an_alias_as_a_key_is_one_problem() -> None:
    assert [(p.line, p.message) for p in problems_of("a: &k x\n*k : 1\nb: 2\n")] == [
        (2, "Anchors (&k) are not allowed: write the value out"),
        (3, "Aliases (*k) are not allowed: write the value out"),
    ]


def test_a_merge_key_needs_an_alias_and_is_refused() -> None:
    problems = problems_of("base: &b {x: 1}\nother:\n  <<: *b\n")
    assert [p.message.split(" ")[0] for p in problems] == ["Anchors", "Aliases"]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("!!str 12", "!!str"),
        ("!!int '12'", "!!int"),
        ("!!binary aGk=", "!!binary"),
        ("!custom x", "!custom"),
        ("! x", "!"),
        ("!!map {a: 1}", "!!map"),
        ("!!seq [1]", "!!seq"),
        ("!<tag:example.com,2000:x> y", "tag:example.com,2000:x"),
    ],
)
def test_every_tag_is_refused(text: str, shown: str) -> None:
    assert problems_of(f"a: 1\nvalue: {text}\n") == [
        DocumentProblem(3, "/value", f"Tags such as {shown} are not allowed: write the value plainly")
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1: a\n", "quote 1"),
        ("true: a\n", "quote true"),
        ("null: a\n", "quote null"),
        ("~: a\n", "quote null"),
        ("1.5: a\n", "quote 1.5"),
        ("? [a, b]\n: 1\n", "not a mapping or a list"),
        ("? {a: 1}\n: 1\n", "not a mapping or a list"),
    ],
)
def test_keys_are_text(text: str, words: str) -> None:
    [problem] = problems_of(text)
    assert problem.line == 2 and problem.pointer == ""
    assert words in problem.message


def test_a_key_that_is_not_text_is_reported_under_its_mapping() -> None:
    assert [(p.line, p.pointer) for p in problems_of("a:\n  b:\n    7: x\n")] == [(4, "/a/b")]


def test_every_refusal_of_a_document_is_collected() -> None:
    problems = problems_of("a: &x 1\nb: !!str 2\nc: .nan\nd: 1\nd: 2\n")
    assert [(p.line, p.pointer) for p in problems] == [(2, "/a"), (3, "/b"), (4, "/c"), (6, "/d")]


# --- nesting ---------------------------------------------------------------------------------------------


def nested_flow(levels: int) -> str:
    """Front matter whose deepest list is at ``levels``; the front matter mapping is level 1."""
    inner = levels - 1
    return "deep: " + "[" * inner + "]" * inner + "\n"


def nested_block(levels: int) -> str:
    return (
        "".join("  " * depth + f"k{depth}:\n" for depth in range(levels - 1)) + "  " * (levels - 1) + "x: 1\n"
    )


@pytest.mark.parametrize("build", [nested_flow, nested_block])
def test_nesting_is_limited_to_72_levels(build: Any) -> None:
    assert MAX_NESTING == 72
    load(build(72))
    [problem] = problems_of(build(73))
    assert problem.message == "Nesting is limited to 72 levels"
    assert problem.line == (2 if build is nested_flow else 74)


def test_a_hundred_thousand_levels_come_back_as_a_problem_fast() -> None:
    for text in ("a: " + "[" * 100_000 + "]" * 100_000, "a: " + "{b: " * 100_000 + "}" * 100_000):
        started = time.perf_counter()
        problems = problems_of(text)
        # Only a clock tells "fast" (stopped at the limit, not read to the end): about 0.03 s on an idle
        # machine, so 2 s is a loose bound (over 60x) a loaded runner does not trip.
        assert time.perf_counter() - started < 2
        assert [p.message for p in problems] == ["Nesting is limited to 72 levels"]
        assert problems[0].line == 2


def test_the_python_parser_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    split = split_document(APPROVE_CAMPAIGN_BRIEF)
    assert isinstance(split, SplitDocument)
    loaded = load(split.front_matter)
    assert loaded.lines.line_of("/output/schema/properties/verdict") == 17
    assert load("value: yes\nn: 0x10\n").data == {"value": "yes", "n": 16}
    assert [p.message for p in problems_of("a: " + "[" * 200)] == ["Nesting is limited to 72 levels"]
    assert [p.line for p in problems_of("a: 1\nb: [1,\n")] == [4]


# --- the document as a whole -----------------------------------------------------------------------------


def test_one_document_only() -> None:
    assert problems_of("a: 1\n--- b\n") == [DocumentProblem(3, "", "The front matter is one YAML document")]


@pytest.mark.parametrize(
    ("text", "line"), [("a: b: c\n", 2), ("a: 1\nb: [1, 2\n", 4), ("a:\n  b: 1\n c: 2\n", 4), ("a: 'x\n", 3)]
)
def test_a_yaml_error_names_its_line(text: str, line: int) -> None:
    [problem] = problems_of(text)
    assert problem.line == line
    assert problem.message.startswith("Invalid YAML: ")


def test_a_yaml_error_line_counts_from_the_first_line() -> None:
    [problem] = problems_of("a: 1\nb: c: d\n", first_line=10)
    assert problem.line == 11


@pytest.mark.parametrize(("text", "code"), [("a: 1\nb: \x00\n", "U+0000"), ("a: 1\nb: \x07\n", "U+0007")])
def test_a_control_character_is_refused_at_its_line(text: str, code: str) -> None:
    [problem] = problems_of(text)
    assert problem.line == 3
    assert code in problem.message


def test_a_lone_surrogate_is_refused() -> None:
    [problem] = problems_of("a: 1\nb: \ud800\n")
    assert problem.line == 3


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n", "12\n", "[a: 1]\n"])
def test_the_front_matter_is_a_mapping(text: str) -> None:
    assert [p.message for p in problems_of(text)] == [
        "The front matter is a mapping of fields, such as 'name: value'"
    ]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "~\n"])
def test_an_empty_front_matter_is_a_problem_on_the_opening_fence(text: str) -> None:
    assert problems_of(text) == [DocumentProblem(1, "", "The front matter is empty: write its fields")]


# --- lines -----------------------------------------------------------------------------------------------


def test_lines_of_nested_keys_and_items() -> None:
    split = split_document(APPROVE_CAMPAIGN_BRIEF)
    assert isinstance(split, SplitDocument)
    lines = load(split.front_matter, split.front_matter_first_line).lines
    assert lines.line_of("/description") == 2
    assert lines.line_of("/expires") == 4
    assert lines.line_of("/input/schema") == 6
    assert lines.line_of("/input/schema/required/1") == 8
    assert lines.line_of("/input/schema/properties/owner") == 10
    assert lines.line_of("/input/schema/properties/owner/type") == 10
    assert lines.line_of("/output/schema/properties/verdict/enum/1") == 17
    assert lines.line_of("/output/schema/properties/note/maxLength") == 18


def test_a_missing_place_takes_the_line_of_its_nearest_ancestor() -> None:
    split = split_document(APPROVE_CAMPAIGN_BRIEF)
    assert isinstance(split, SplitDocument)
    lines = load(split.front_matter, split.front_matter_first_line).lines
    assert lines.line_of("/output/schema/properties/missing") == 16
    assert lines.line_of("/output/schema/properties/verdict/enum/9/x") == 17
    assert lines.line_of("/model") == 1
    assert lines.line_of("") == 1
    assert "/output" in lines and "/model" not in lines
    assert lines.get("/model") is None


def test_lines_of_escaped_names_and_block_sequences() -> None:
    lines = load("a/b:\n  m~n:\n    - x\n    -\n      y: 1\n").lines
    assert lines.line_of("/a~1b") == 2
    assert lines.line_of("/a~1b/m~0n") == 3
    assert lines.line_of("/a~1b/m~0n/0") == 4
    assert lines.line_of("/a~1b/m~0n/1/y") == 6


def test_value_lines_start_where_the_text_of_a_block_scalar_does() -> None:
    lines = load("to: '{{ input.owner }}'\nnote: |\n  first\n  second\nlist:\n  - >\n    folded\n").lines
    assert lines.value_line_of("/to") == 2
    assert lines.value_line_of("/note") == 4
    assert lines.line_of("/note") == 3
    assert lines.line_of("/list/0") == 7
    assert lines.value_line_of("/list/0") == 8
    assert lines.value_line_of("/missing") == 1


def test_lines_count_only_newlines_even_after_other_line_separators() -> None:
    lines = load("a: 'x\u2028y\u0085z'\nb: 1\n").lines
    assert lines.line_of("/b") == 3


def test_line_index_built_by_hand() -> None:
    lines = LineIndex(root_line=3, keys={"/a": 5})
    assert lines.line_of("/a/b/c") == 5
    assert lines.line_of("/z") == 3
    assert lines.line_of("not-a-pointer") == 3


# --- never raises ----------------------------------------------------------------------------------------

yaml_alphabet = st.sampled_from(list("ab:-[]{},'\"&*!|>#?%@`~ \n\t.0123456789eExyo\\\u2028\x00\ud800é"))
MUTABLE = APPROVE_CAMPAIGN_BRIEF.split("---\n")[1]


@settings(max_examples=300, deadline=None)
@given(st.text(yaml_alphabet, max_size=60) | st.text(max_size=60))
def test_random_text_never_raises(text: str) -> None:
    loaded = load_front_matter(text, 2)
    assert isinstance(loaded, list | LoadedFrontMatter)
    if isinstance(loaded, list):
        assert loaded and all(p.line >= 1 for p in loaded)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, len(MUTABLE)), st.integers(0, 3), st.text(yaml_alphabet, max_size=4)),
        max_size=4,
    )
)
def test_mutated_yaml_never_raises(edits: list[tuple[int, int, str]]) -> None:
    text = MUTABLE
    for at, cut, insert in edits:
        text = text[:at] + insert + text[at + cut :]
    loaded = load_front_matter(text, 2)
    if isinstance(loaded, list):
        assert all(2 <= p.line <= text.count("\n") + 2 for p in loaded if p.line > 1)
    else:
        assert isinstance(loaded.data, dict)


# JSON written with ASCII escapes is YAML; PyYAML reads no surrogate pair, so text stays in the BMP.
bmp_text = st.text(st.characters(codec="utf-8", max_codepoint=0xFFFF), max_size=20)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | bmp_text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(bmp_text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_json_reads_back_as_the_same_value(value: Any) -> None:
    loaded = load(json.dumps({"value": value}))
    assert loaded.data == {"value": value}
