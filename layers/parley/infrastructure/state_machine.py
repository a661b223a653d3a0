"""The run's state machine, written once in ASL: the CDK stack deploys it (with the functions' ARNs as
tokens) and the local runtime creates it in moto (with moto's ARNs).

The store is the truth and the execution only waits (architecture.md, "The shape"; interaction-format.md,
"How a run ends"; agent-runs.md, "A run that waits"). Whatever ends a request writes its ending in the
write that decides it — an answer writes ``request_answered`` with the run's ``succeeded``, an expiry or a
cancel the request's end with the run's rejection, an agent run's answer the request's end (and has the
``reason`` function take the run's next step at once) — so the execution has nothing left to do:

1. **Wait for the answer**: ``lambda:invoke.waitForTaskToken`` on the ``wait`` function, which keeps the
   task token on the request item. The execution parks, costing nothing, until the ending's writer sends
   ``SendTaskSuccess`` with the ending's name (``{"ending": "answered"}``, ``expired``, ``cancelled``,
   ``delivered``, ``undelivered``); the execution ends there. **One state transition** a wait, whatever
   ended it.
2. **Settle the ending**, only when the wait failed: its own timeout (``timeout_seconds`` of the input:
   ``expires`` plus one minute) ran out because the expiry's schedule or the ending's ``SendTaskSuccess``
   was lost, or the wait function kept failing. The ``settle`` function ends from what the store says what
   nothing else has: it expires an open request past its time, ends a run whose request was answered but
   whose ending was never written (data an older version wrote), or has an agent run take its next step.
   Idempotent, so it is retried for about an hour.

An agent run that asks again waits in a new execution (``RunKey.wait_execution_name``), started by the
``reason`` function's step that asked. A run a workflow called has no execution: its ending answers the
workflow's own task token (``parley.runs.store``'s ``ended`` hook), and the workflow's bounds end it.

JSONPath only, and no Wait state: timing lives in the scheduler port. The local runtime runs this same
dict through its own interpreter (``parley.local.steps``), which refuses anything it does not interpret.
Standard type: an execution may wait up to 30 days and a minute, and Express executions last at most five
minutes.

Execution input: ``{"run": {"org", "playbook", "run_id"}, "timeout_seconds": N}``.
"""

from __future__ import annotations

import json
from typing import Any, Final

WAIT_STATE: Final = "Wait for the answer"
SETTLE_ENDING_STATE: Final = "Settle the ending"

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
#: The longest one wait may last: ``expires`` is at most 30 days (interaction-format.md, "Bounds"), plus
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


def state_machine_definition(wait_function_arn: Any, settle_function_arn: Any) -> dict[str, Any]:
    """The ASL of the run's state machine, as a dict.

    The ARNs may be strings (moto) or CDK tokens (``Function.function_arn``); the CDK stack passes the
    dict through ``DefinitionBody.from_string(Stack.to_json_string(...))`` so that tokens resolve.
    """
    return {
        "Comment": "A Parley run waiting for its answer; the ending is in the table before the token "
        "ends the wait (interaction-format.md, 'How a run ends'; agent-runs.md, 'A run that waits').",
        "QueryLanguage": "JSONPath",
        "StartAt": WAIT_STATE,
        "States": {
            WAIT_STATE: {
                "Type": "Task",
                "Comment": "The wait function keeps the token on the request; the ending's writer ends the "
                "wait through it, once the ending is written.",
                "Resource": WAIT_FOR_TOKEN_RESOURCE,
                "Parameters": {
                    "FunctionName": wait_function_arn,
                    "Payload": {"token.$": "$$.Task.Token", "run.$": "$.run"},
                },
                "TimeoutSecondsPath": "$.timeout_seconds",
                "Retry": [_lambda_service_retry()],
                "Catch": [
                    {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": SETTLE_ENDING_STATE}
                ],
                "End": True,
            },
            SETTLE_ENDING_STATE: {
                "Type": "Task",
                "Comment": "The backstop: end from what the store says what nothing else has (idempotent).",
                "Resource": INVOKE_RESOURCE,
                "Parameters": {
                    "FunctionName": settle_function_arn,
                    "Payload": {"run.$": "$.run", "error.$": "$.error"},
                },
                # The ending is in the table; the function's answer is kept for the history. (Never
                # ``"ResultPath": null``: CDK's JSON drops nulls, and the deployed ASL would differ.)
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
                "End": True,
            },
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
