"""How a rejected document lists its problems ("How a document is checked"): each once, in line order."""

from __future__ import annotations

from parley.documents.problems import DocumentProblems


def test_a_problem_found_twice_is_reported_once() -> None:
    problems = DocumentProblems()
    problems.add(3, "/config/temperature", "Expected number")
    problems.add(3, "/config/temperature", "Expected number")
    assert problems.lines() == ["Line 3, /config/temperature: Expected number"]


def test_a_pointer_and_its_message_are_one_problem_whichever_line_found_it() -> None:
    problems = DocumentProblems()
    problems.add(7, "/output/schema", "Expected a mapping")  # found at the value's line
    problems.add(6, "/output/schema", "Expected a mapping")  # and at the key's
    problems.add(6, "/output/schema", "Another problem")
    assert problems.lines() == [
        "Line 6, /output/schema: Another problem",
        "Line 6, /output/schema: Expected a mapping",
    ]
    problem = problems.to_problem()
    assert problem.detail.startswith("The document has 2 problems: ")
    assert len(problem.errors) == 2


def test_without_a_pointer_the_line_tells_two_problems_apart() -> None:
    problems = DocumentProblems()
    problems.add(9, "", "the filter 'nope' is not available")
    problems.add(12, "", "the filter 'nope' is not available")
    problems.add(12, "", "the filter 'nope' is not available")
    assert problems.lines() == [
        "Line 9: the filter 'nope' is not available",
        "Line 12: the filter 'nope' is not available",
    ]


def test_the_rest_is_counted_after_20_distinct_problems() -> None:
    problems = DocumentProblems()
    for line in range(1, 26):
        problems.add(line, "/tools", "Expected a list")
        problems.add(line, f"/x{line}", "Expected text")
    lines = problems.lines()
    assert len(lines) == 21
    assert lines[-1] == "Line 20: 6 more issues are not shown"
