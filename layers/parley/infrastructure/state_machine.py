"""The run's state machine, written once in ASL: the CDK stack deploys it (with the functions' ARNs as
tokens) and the local runtime creates it in moto (with moto's ARNs).

A waiting run's execution (architecture.md, "The shape"; interaction-format.md, "How a run ends";
agent-runs.md, "A run that waits"):

1. **Wait for the answer**: ``lambda:invoke.waitForTaskToken`` on the ``wait`` function, which keeps the
   task token on the request item. The execution then parks, costing nothing, until an answer sends
   ``SendTaskSuccess`` or an expiry or a cancel sends ``SendTaskFailure`` (``Parley.Expired``,
   ``Parley.Cancelled``). The task's own timeout (``timeout_seconds`` of the input: ``expires`` plus one
   minute) is the backstop when an expiry schedule is lost (``States.Timeout``).
2. **Settle the answer** / **Settle the ending**: the ``settle`` function writes the run's ending from
   what the store says (idempotent, so it is retried), with ``answered`` or ``error`` (the Catch's
   ``{"Error", "Cause"}``). Its answer, ``{"run", "outcome"}``, is kept at ``$.settled.outcome``.
3. **Resume?**: an interaction run has ended by now. A reasoning run whose request was answered or
   expired has not: its type must work again, which settle says with the outcome ``resume``.
4. **Resume the run**: the ``reason`` function, invoked synchronously with ``{"run", "resume": true}``,
   does the run's next step. Its answer is kept at ``$.resumed.outcome``. It is retried on the Lambda
   service's own errors only: resuming may send a call a person approved, which must not be sent again
   blindly (the function is idempotent by a claim, and a run whose work was lost is ended by its own
   backstop, scheduled by the function, so a failure goes to **Settled**).
5. **Waiting again?**: a step that opened another request answers ``{"outcome": "waiting",
   "timeout_seconds": N}``; **Wait again** then rebuilds the execution's state as a fresh input
   (``{"run", "timeout_seconds": N}``) and the execution goes back to 1, parked on a new token. A run
   has at most one open request at a time, so one execution serves all of a run's waits, one after
   another (its name stays ``RunKey.execution_name``).
6. **Settled**: Succeed. The run's ending lives in the table; the execution only waited.

JSONPath only, and no Wait state: timing lives in the scheduler port. The local runtime runs this same
dict through its own interpreter of this subset (``parley.local.steps``), which refuses anything else.
Standard type: an execution may wait up to 30 days and a minute at a time, and Express executions last
at most five minutes.

Execution input: ``{"run": {"org", "playbook", "run_id"}, "timeout_seconds": N}``.
"""

from __future__ import annotations

import json
from typing import Any, Final

from parley.infrastructure.functions import function_named

WAIT_STATE: Final = "Wait for the answer"
SETTLE_ANSWER_STATE: Final = "Settle the answer"
SETTLE_ENDING_STATE: Final = "Settle the ending"
#: The Choice after either settle state: resume the run, or end the execution.
RESUME_CHOICE_STATE: Final = "Resume?"
#: The synchronous invocation of the reason function: a reasoning run's next step after its wait.
RESUME_STATE: Final = "Resume the run"
#: The Choice after the resumption: wait again (another request is open), or end the execution.
WAITING_AGAIN_STATE: Final = "Waiting again?"
#: The Pass state that rebuilds the execution's state for the next wait.
WAIT_AGAIN_STATE: Final = "Wait again"
SETTLED_STATE: Final = "Settled"

#: The settle function's outcome when the run's type must work again (a reasoning run whose request
#: was answered or expired).
RESUME_OUTCOME: Final = "resume"
#: The reason function's outcome when the step it did opened another request (with ``timeout_seconds``).
WAITING_OUTCOME: Final = "waiting"
#: Where the settle and reason functions' outcomes are kept in the execution's state.
SETTLED_OUTCOME_PATH: Final = "$.settled.outcome.outcome"
RESUMED_OUTCOME_PATH: Final = "$.resumed.outcome.outcome"
RESUMED_TIMEOUT_PATH: Final = "$.resumed.outcome.timeout_seconds"

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
#: the minute of the backstop. Standard executions may last a year, so this is well inside (a run that
#: waits again and again shares that year among its waits).
MAX_TIMEOUT_SECONDS: Final = 30 * 24 * 3600 + 60
#: The resumption's own timeout: the reason function's (900 s) and a minute. Lambda answers for a
#: function that ran out of time itself, before; this only bounds an invocation whose answer was lost.
RESUME_TIMEOUT_SECONDS: Final = function_named("reason").timeout_s + 60


def _lambda_service_retry() -> dict[str, Any]:
    return {
        "ErrorEquals": list(LAMBDA_SERVICE_ERRORS),
        "IntervalSeconds": 1,
        "MaxAttempts": 3,
        "BackoffRate": 2,
        "JitterStrategy": "FULL",
    }


def _outcome_is(path: str, outcome: str) -> dict[str, Any]:
    """A Choice rule: the function's answer at ``path`` is ``outcome``. A path that is not there (an
    answer that is no object, or has no ``outcome``) is no match, where AWS would fail the Choice."""
    return {"And": [{"Variable": path, "IsPresent": True}, {"Variable": path, "StringEquals": outcome}]}


def _settle(settle_function_arn: Any, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Comment": "Write the run's ending from what the store says (idempotent).",
        "Resource": INVOKE_RESOURCE,
        "Parameters": {"FunctionName": settle_function_arn, "Payload": payload},
        # The ending is in the table; the function's own answer is kept beside the input, for the history
        # and for the Choice that follows. (Never ``"ResultPath": null``: CDK's JSON drops nulls, and the
        # deployed ASL would differ.)
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
        "Next": RESUME_CHOICE_STATE,
    }


def state_machine_definition(
    wait_function_arn: Any, settle_function_arn: Any, reason_function_arn: Any
) -> dict[str, Any]:
    """The ASL of the run's state machine, as a dict.

    The ARNs may be strings (moto) or CDK tokens (``Function.function_arn``); the CDK stack passes the
    dict through ``DefinitionBody.from_string(Stack.to_json_string(...))`` so that tokens resolve.
    """
    return {
        "Comment": "A Parley run waiting for its answers (interaction-format.md, 'How a run ends'; "
        "agent-runs.md, 'A run that waits').",
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
            RESUME_CHOICE_STATE: {
                "Type": "Choice",
                "Comment": "A reasoning run whose request was answered or expired works again.",
                "Choices": [{**_outcome_is(SETTLED_OUTCOME_PATH, RESUME_OUTCOME), "Next": RESUME_STATE}],
                "Default": SETTLED_STATE,
            },
            RESUME_STATE: {
                "Type": "Task",
                "Comment": "The reason function does the run's next step; it may open another request.",
                "Resource": INVOKE_RESOURCE,
                "Parameters": {
                    "FunctionName": reason_function_arn,
                    "Payload": {"run.$": "$.run", "resume": True},
                },
                "TimeoutSeconds": RESUME_TIMEOUT_SECONDS,
                "ResultSelector": {"outcome.$": "$.Payload"},
                "ResultPath": "$.resumed",
                # Only when Lambda itself failed: the step may send a call a person approved, so it is
                # never run again blindly (the function is idempotent by a claim besides).
                "Retry": [_lambda_service_retry()],
                # The run's own backstop ends a run whose work was lost.
                "Catch": [
                    {"ErrorEquals": ["States.ALL"], "ResultPath": "$.resume_error", "Next": SETTLED_STATE}
                ],
                "Next": WAITING_AGAIN_STATE,
            },
            WAITING_AGAIN_STATE: {
                "Type": "Choice",
                "Comment": "The step opened another request: wait for it, on a new token.",
                "Choices": [{**_outcome_is(RESUMED_OUTCOME_PATH, WAITING_OUTCOME), "Next": WAIT_AGAIN_STATE}],
                "Default": SETTLED_STATE,
            },
            WAIT_AGAIN_STATE: {
                "Type": "Pass",
                "Comment": "The next wait's input, as an execution's: the run and its wait's timeout.",
                "Parameters": {"run.$": "$.run", "timeout_seconds.$": RESUMED_TIMEOUT_PATH},
                "Next": WAIT_STATE,
            },
            SETTLED_STATE: {"Type": "Succeed"},
        },
    }


def state_machine_json(wait_function_arn: str, settle_function_arn: str, reason_function_arn: str) -> str:
    """:func:`state_machine_definition` as the JSON text ``create_state_machine`` takes."""
    return json.dumps(state_machine_definition(wait_function_arn, settle_function_arn, reason_function_arn))


def execution_input(run: dict[str, str], timeout_seconds: int) -> dict[str, Any]:
    """An execution's input: the run's key and the wait task's timeout (``expires`` plus a minute)."""
    if not 1 <= timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise ValueError(f"a run waits 1 to {MAX_TIMEOUT_SECONDS} seconds, not {timeout_seconds}")
    return {"run": dict(run), "timeout_seconds": int(timeout_seconds)}
