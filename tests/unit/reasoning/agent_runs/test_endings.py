"""How a tool-calling run ends when it cannot finish (reasoning-format.md, "When a tool-calling run cannot
finish", "Limits on time and failures")."""

from __future__ import annotations

import pytest

from parley.errors import Problem
from parley.reasoning.agent_runs.endings import (
    BECAUSE_WORDS,
    Because,
    because_words,
    cannot_finish,
    request_too_long,
)
from parley.runs.model import CalledTool, Rejection


def test_only_read_only_tools_end_as_tools_unfinished_503() -> None:
    problem = cannot_finish(
        [("graph", "search", True), ("graph", "query", True), ("graph", "search", True)],
        "run_bound",
        because_words("run_bound"),
    )
    assert problem.status == 503
    assert (problem.kind, problem.because) == ("tools_unfinished", "run_bound")
    assert problem.detail == (
        "The run did not finish within its bound (10 minutes, or its model call's limit when that is "
        "longer). The run called graph/search and graph/query and did not finish; their servers mark them "
        "read-only, so a new run under a new run id may do the work again."
    )
    assert Rejection.of(problem).reason == "unavailable"


def test_one_read_only_tool() -> None:
    problem = cannot_finish([CalledTool("graph", "search", True)], "server_failed", "Down.")
    assert problem.detail == (
        "Down. The run called graph/search and did not finish; its server marks it read-only, so a new run "
        "under a new run id may do the work again."
    )


def test_any_tool_not_read_only_ends_as_effect_unknown_409() -> None:
    problem = cannot_finish(
        [("graph", "search", True), ("notes", "add", False), ("mail", "send", False)],
        "no_answer",
        because_words("no_answer"),
    )
    assert problem.status == 409
    assert (problem.kind, problem.because) == ("effect_unknown", "no_answer")
    assert problem.detail == (
        "The model called a tool in its last step, which is made without tools, instead of answering. "
        "The run called graph/search, notes/add and mail/send and did not finish; notes/add and mail/send "
        "are not marked read-only, so the run may have changed something: check the run's history and the "
        "external systems before running the function again under a new run id."
    )
    assert Rejection.of(problem).reason == "conflict"
    assert Rejection.of(problem).problem().as_json()["type"] == "https://on.auto/problems/effect_unknown"


def test_one_tool_not_read_only() -> None:
    problem = cannot_finish([("notes", "add", False), ("notes", "add", False)], "model_unavailable", "Slow.")
    assert "; notes/add is not marked read-only," in problem.detail


def test_before_its_first_call_the_run_ends_as_plain_unavailable() -> None:
    problem = cannot_finish([], "model_unavailable", because_words("model_unavailable"))
    assert problem == Problem(
        "unavailable",
        "The model did not answer within its call's limit. No tool was called; try again.",
        because="model_unavailable",
    )


@pytest.mark.parametrize("because", ["server_failed", "model_unavailable", "run_bound", "no_answer"])
def test_each_because_has_words_and_is_kept(because: Because) -> None:
    assert because in BECAUSE_WORDS
    problem = cannot_finish([("g", "s", True)], because, BECAUSE_WORDS[because])
    assert problem.because == because
    assert problem.detail.startswith(BECAUSE_WORDS[because])


def test_a_request_too_long_is_unworkable() -> None:
    problem = request_too_long("HTTP 413", 1_234_567, 198_000)
    assert (problem.reason, problem.kind, problem.status) == ("conflict", "unworkable", 409)
    assert problem.detail == (
        "The provider signalled that the request is too long (HTTP 413). The tools returned 1,234,567 bytes "
        "and the provider counted 198,000 input tokens for the last step. Ask the tools for less, such as "
        "one page of their data."
    )
    assert "did not count" in request_too_long("context_length_exceeded", 10, None).detail
