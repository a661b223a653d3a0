"""A called run's ending as the error its task raises: every row of the table of "Calling a function"
(``parley.workflow.errors``), and the uncaught error as the workflow run's rejection ("How a run
ends", ``parley.workflow.running``)."""

from __future__ import annotations

import pytest

from parley.workflow.errors import (
    WorkflowError,
    canonical_type,
    error_of_failure,
    error_of_rejection,
)
from parley.workflow.running import rejection_of

SPEC = "https://open-workflow-specification.org/spec/1.0.0/errors/"
PROBLEMS = "https://on.auto/problems/"


@pytest.mark.parametrize(
    ("reason", "kind", "error_type", "status"),
    [
        ("invalid_input", None, SPEC + "validation", 400),
        ("not_found", None, SPEC + "configuration", 404),
        ("conflict", None, SPEC + "runtime", 409),
        ("conflict", "unworkable", SPEC + "runtime", 409),
        ("conflict", "tools_called", PROBLEMS + "tools_called", 409),
        ("conflict", "effect_unknown", PROBLEMS + "effect_unknown", 409),
        ("unavailable", None, SPEC + "communication", 503),
        ("unavailable", "tools_unfinished", PROBLEMS + "tools_unfinished", 503),
        ("cancelled", "requested", PROBLEMS + "cancelled", 409),
        ("unanswered", "expired", PROBLEMS + "unanswered", 410),
    ],
)
def test_each_row_of_the_table(reason: str, kind: str | None, error_type: str, status: int) -> None:
    rejection = {"reason": reason, "detail": "What the run said.", "because": "server_failed"}
    if kind is not None:
        rejection["kind"] = kind
    error = error_of_rejection(rejection, definition_type="interaction", name="ask", task="/do/0/ask")
    assert (error.type, error.status, error.instance) == (error_type, status, "/do/0/ask")
    assert (error.kind, error.because, error.detail) == (kind, "server_failed", "What the run said.")
    assert error.title is not None and "'ask'" in error.title


def test_a_failed_run_is_runtime_500() -> None:
    error = error_of_failure("It broke.", definition_type="reasoning", name="review", task="/do/1/review")
    assert (error.type, error.status, error.instance) == (SPEC + "runtime", 500, "/do/1/review")


def test_the_former_address_and_short_names_read_as_the_current_types() -> None:
    assert canonical_type("https://serverlessworkflow.io/spec/1.0.0/errors/timeout") == SPEC + "timeout"
    assert canonical_type("runtime") == SPEC + "runtime"
    assert canonical_type(PROBLEMS + "unanswered") == PROBLEMS + "unanswered"


@pytest.mark.parametrize(
    ("error", "reason", "kind"),
    [
        (WorkflowError(PROBLEMS + "unanswered", 410, kind="expired"), "unanswered", "expired"),
        (WorkflowError(PROBLEMS + "tools_called", 409), "conflict", "tools_called"),
        (
            WorkflowError(PROBLEMS + "effect_unknown", 409, kind="effect_unknown"),
            "conflict",
            "effect_unknown",
        ),
        (WorkflowError(SPEC + "validation", 400), "invalid_input", None),
        (WorkflowError("https://example.com/errors/revision-asked", 422), "invalid_input", None),
        (WorkflowError(PROBLEMS + "cancelled", 409, kind="requested"), "invalid_input", "requested"),
        (WorkflowError(SPEC + "timeout", 408), "unavailable", None),
        (WorkflowError("https://example.com/errors/slow-down", 429), "unavailable", None),
        (WorkflowError(SPEC + "runtime", 500), "unavailable", None),
        (
            WorkflowError(SPEC + "communication", 503, kind="tools_unfinished"),
            "unavailable",
            "tools_unfinished",
        ),
    ],
)
def test_an_error_nothing_caught_is_the_runs_rejection(
    error: WorkflowError, reason: str, kind: str | None
) -> None:
    problem = rejection_of(error)
    assert (problem.reason, problem.kind) == (reason, kind)


def test_the_detail_gives_the_title_or_type_its_detail_and_the_task() -> None:
    raised = WorkflowError(
        "https://example.com/errors/revision-asked", 422, "/do/4/stop", title="Revision asked"
    )
    assert rejection_of(raised).detail == "Revision asked (at /do/4/stop)"
    untitled = WorkflowError(SPEC + "runtime", 500, "/do/0/x", detail="It broke.")
    assert rejection_of(untitled).detail == SPEC + "runtime: It broke. (at /do/0/x)"
