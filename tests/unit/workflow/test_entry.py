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
