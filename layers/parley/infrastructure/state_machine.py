"""The run's state machine, written once in ASL: the CDK stack deploys it (with the functions' ARNs as
tokens) and the local runtime creates it in moto (with moto's ARNs).

A waiting run's execution (architecture.md, "The shape"; interaction-format.md, "How a run ends"):

1. **Wait for the answer**: ``lambda:invoke.waitForTaskToken`` on the ``wait`` function, which keeps the
   task token on the request item. The execution then parks, costing nothing, until an answer sends
   ``SendTaskSuccess`` or an expiry or a cancel sends ``SendTaskFailure`` (``Parley.Expired``,
   ``Parley.Cancelled``). The task's own timeout (``timeout_seconds`` of the input: ``expires`` plus one
   minute) is the backstop when an expiry schedule is lost (``States.Timeout``).
2. **Settle the answer** / **Settle the ending**: the ``settle`` function writes the run's ending from
   what the store says (idempotent, so it is retried), with ``answered`` or ``error`` (the Catch's
   ``{"Error", "Cause"}``).
3. **Settled**: Succeed. The run's ending lives in the table; the execution only waited.

JSONPath only (moto's executor does not run JSONata), and no Wait state: timing lives in the scheduler
port (moto's Wait states run in real time). Standard type: an execution may wait up to 30 days and a
minute, and Express executions last at most five minutes.

Execution input: ``{"run": {"org", "playbook", "run_id"}, "timeout_seconds": N}``.
"""

from __future__ import annotations

import json
from typing import Any, Final

WAIT_STATE: Final = "Wait for the answer"
SETTLE_ANSWER_STATE: Final = "Settle the answer"
SETTLE_ENDING_STATE: Final = "Settle the ending"
SETTLED_STATE: Final = "Settled"

#: The callback integration: Step Functions invokes the function with the token, then waits for it.
WAIT_FOR_TOKEN_RESOURCE: Final = "arn:aws:states:::lambda:invoke.waitForTaskToken"
INVOKE_RESOURCE: Final = "arn:aws:states:::lambda:invoke"

#: Errors of the Lambda service itself (not of the function's code): worth another invocation.
LAMBDA_SERVICE_ERRORS: Final = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
#: The longest a run may wait: ``expires`` is at most 30 days (interaction-format.md, "Bounds"), plus
#: the minute of the backstop. Standard executions may last a year, so this is well inside.
MAX_TIMEOUT_SECONDS: Final = 30 * 24 * 3600 + 60


def _lambda_service_retry() -> dict[str, Any]:
    return {
        "ErrorEquals": list(LAMBDA_SERVICE_ERRORS),
        "IntervalSeconds": 1,
        "MaxAttempts": 3,
        "BackoffRate": 2,
        "JitterStrategy": "FULL",
    }


def _settle(settle_function_arn: Any, payload: dict[str, str]) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Comment": "Write the run's ending from what the store says (idempotent).",
        "Resource": INVOKE_RESOURCE,
        "Parameters": {"FunctionName": settle_function_arn, "Payload": payload},
        # The ending is in the table; the function's own answer is kept beside the input, for the history.
        # (Never ``"ResultPath": null``: CDK's JSON drops nulls, and the deployed ASL would differ.)
        "ResultSelector": {"outcome.$": "$.Payload"},
        "ResultPath": "$.settled",
        "Retry": [
            _lambda_service_retry(),
            # The function's own failures (a throttled table, a bug fixed by a deploy): settling is
            # idempotent, so it is tried again for about an hour before the execution fails.
            {
                "ErrorEquals": ["States.ALL"],
                "IntervalSeconds": 2,
                "MaxAttempts": 10,
                "BackoffRate": 2,
                "MaxDelaySeconds": 900,
                "JitterStrategy": "FULL",
            },
        ],
        "Next": SETTLED_STATE,
    }


def state_machine_definition(wait_function_arn: Any, settle_function_arn: Any) -> dict[str, Any]:
    """The ASL of the run's state machine, as a dict.

    The ARNs may be strings (moto) or CDK tokens (``Function.function_arn``); the CDK stack passes the
    dict through ``DefinitionBody.from_string(Stack.to_json_string(...))`` so that tokens resolve.
    """
    return {
        "Comment": "A Parley run waiting for its answer (interaction-format.md, 'How a run ends').",
        "QueryLanguage": "JSONPath",
        "StartAt": WAIT_STATE,
        "States": {
            WAIT_STATE: {
                "Type": "Task",
                "Comment": "The wait function keeps the token on the request; an answer, an expiry or a "
                "cancel ends the wait through it.",
                "Resource": WAIT_FOR_TOKEN_RESOURCE,
                "Parameters": {
                    "FunctionName": wait_function_arn,
                    "Payload": {"token.$": "$$.Task.Token", "run.$": "$.run"},
                },
                "TimeoutSecondsPath": "$.timeout_seconds",
                "ResultPath": "$.answered",
                "Retry": [_lambda_service_retry()],
                "Catch": [
                    {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": SETTLE_ENDING_STATE}
                ],
                "Next": SETTLE_ANSWER_STATE,
            },
            SETTLE_ANSWER_STATE: _settle(settle_function_arn, {"run.$": "$.run", "answered.$": "$.answered"}),
            SETTLE_ENDING_STATE: _settle(settle_function_arn, {"run.$": "$.run", "error.$": "$.error"}),
            SETTLED_STATE: {"Type": "Succeed"},
        },
    }


def state_machine_json(wait_function_arn: str, settle_function_arn: str) -> str:
    """:func:`state_machine_definition` as the JSON text ``create_state_machine`` takes."""
    return json.dumps(state_machine_definition(wait_function_arn, settle_function_arn))


def execution_input(run: dict[str, str], timeout_seconds: int) -> dict[str, Any]:
    """An execution's input: the run's key and the wait task's timeout (``expires`` plus a minute)."""
    if not 1 <= timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise ValueError(f"a run waits 1 to {MAX_TIMEOUT_SECONDS} seconds, not {timeout_seconds}")
    return {"run": dict(run), "timeout_seconds": int(timeout_seconds)}
