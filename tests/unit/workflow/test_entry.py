"""The workflow function's entry (``parley.executions.workflow``): EventBridge's status change of an
execution Step Functions ended reads as the entry's ``ended`` event."""

from __future__ import annotations

import json

from parley.executions.workflow import STATUS_CHANGE, _ended_of
from parley.workflow.engine import ENDED_ACTION


def test_a_status_change_names_the_run_from_the_executions_input() -> None:
    run = {"org": "acme", "playbook": "campaigns", "run_id": "0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"}
    detail = {
        "status": "FAILED",
        "error": "States.DataLimitExceeded",
        "cause": "The state/task returned a result with a size exceeding the maximum",
        "input": json.dumps({"run": run, "input": {}, "depth": 0}),
    }
    assert STATUS_CHANGE == "Step Functions Execution Status Change"
    assert _ended_of(detail) == {
        "action": ENDED_ACTION,
        "run": run,
        "status": "FAILED",
        "error": "States.DataLimitExceeded",
        "cause": detail["cause"],
    }


def test_an_input_that_is_not_json_names_no_run() -> None:
    assert _ended_of({"status": "TIMED_OUT", "input": "{"})["run"] is None


def test_an_execution_failed_without_its_end_ends_with_the_error_it_failed_with() -> None:
    from parley.workflow.running import execution_error

    raised = {"type": "https://example.com/errors/no", "status": 422, "title": "No", "instance": "/do/1/stop"}
    assert execution_error({"error": "Parley.Error", "cause": json.dumps(raised)}).as_json() == raised
    expression = execution_error({"error": "States.QueryEvaluationError", "cause": "x is not a number"})
    assert (expression.type.rpartition("/")[2], expression.status) == ("expression", 400)
    too_big = execution_error({"error": "States.DataLimitExceeded", "cause": ""})
    assert (too_big.status, "256 KiB" in (too_big.detail or "")) == (500, True)
    timed_out = execution_error({"status": "TIMED_OUT"})
    assert (timed_out.type.rpartition("/")[2], timed_out.status) == ("timeout", 408)
