"""``Waits`` on Step Functions: one Standard execution per waiting run, parked on a task token
(``parley.infrastructure.state_machine``; architecture.md, "The shape").

Every call is safe to repeat, because the handlers that make them run at least once:

- ``start`` names the execution after the run (``RunKey.execution_name``): a second start finds
  ``ExecutionAlreadyExists`` (or, while the first runs with the same input, the same execution).
- ``start`` of a later wait of an agent run names its execution after the request's number
  (``RunKey.wait_execution_name``): a name is never used twice.
- ``succeed`` on a token that already ended (answered, expired, cancelled, timed out) gets
  ``TaskTimedOut``, ``InvalidToken`` or ``TaskDoesNotExist``: the wait is over either way. Every ending
  is told as a success (the ending is in the table already), so SendTaskFailure is never needed.

Overload and outages become ``503 unavailable`` problems at this edge; anything else is a bug and
propagates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final

from parley.aws.edge import translated
from parley.infrastructure.state_machine import execution_input

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.client import SFNClient

    from parley.ports.waiting import RunKey

#: The token's wait has already ended: what an at-least-once caller may find.
ENDED_TOKEN_CODES: Final = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})
#: SendTaskFailure takes a cause of at most 32,768 characters and an error of at most 256 (a workflow's
#: task answered with a called run's error: ``parley.aws.workflows``).
MAX_CAUSE: Final = 32_768
MAX_ERROR: Final = 256
#: Step Functions is overloaded or out of reach: try again later.
UNAVAILABLE_CODES: Final = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "InternalServerError",
        "InternalFailure",
        "ExecutionLimitExceeded",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)


class StepFunctionsWaits:
    """The ``Waits`` port on one state machine (the ARN of ``PARLEY_STATE_MACHINE_ARN``)."""

    def __init__(self, client: SFNClient, state_machine_arn: str) -> None:
        self._client = client
        self.state_machine_arn = state_machine_arn

    def execution_arn(self, run: RunKey, number: int = 1) -> str:
        """The ARN of the execution of the run's ``number``-th wait (``…:execution:<machine>:<name>``)."""
        prefix, _, name = self.state_machine_arn.rpartition(":stateMachine:")
        return f"{prefix}:execution:{name}:{run.wait_execution_name(number)}"

    def start(self, run: RunKey, *, timeout_seconds: int, number: int = 1) -> None:
        payload = json.dumps(execution_input(run.as_json(), timeout_seconds), separators=(",", ":"))
        with _translated("start the run's execution", ignore={"ExecutionAlreadyExists"}):
            self._client.start_execution(
                stateMachineArn=self.state_machine_arn, name=run.wait_execution_name(number), input=payload
            )

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        with _translated("end the run's wait", ignore=ENDED_TOKEN_CODES):
            self._client.send_task_success(taskToken=token, output=json.dumps(dict(output)))


def _translated(action: str, *, ignore: Set[str]) -> AbstractContextManager[None]:
    return translated("Step Functions", action, ignore=ignore, unavailable=UNAVAILABLE_CODES)
