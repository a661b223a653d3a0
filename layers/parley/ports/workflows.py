"""The port workflows run through (``workflow-format.md``, "On AWS"): Step Functions on AWS
(``parley.aws.workflows``), the local executor's interpreter of the same machines locally
(``parley.local.executor``).

One state machine per workflow, a version per definition version: :meth:`WorkflowEngine.create_state_machine`
with the same name and the same definition answers the version it made before, with another definition
a new one. Executions are named after the run, so starting one twice is harmless.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class WorkflowEngine(Protocol):
    """Where compiled workflows run."""

    #: The ARN of the workflow entry function the machines' Lambda tasks invoke (put in place of
    #: ``parley.workflow.engine.ENTRY_FUNCTION``).
    workflow_function_arn: str

    def create_state_machine(self, name: str, definition: Mapping[str, Any]) -> str:
        """The ARN of the version of the machine ``name`` that runs ``definition`` (made if new)."""
        ...

    def start_execution(self, state_machine_arn: str, name: str, input_value: Any) -> str:
        """Start (once) the execution ``name`` of a version; its ARN."""
        ...

    def stop_execution(self, execution_arn: str, error: str, cause: str) -> None:
        """Stop an execution where it is (nothing for one that has ended)."""
        ...

    def describe_execution(self, execution_arn: str) -> dict[str, Any]:
        """``status`` (``RUNNING``, ``SUCCEEDED``, ``FAILED``, ``ABORTED``, ``UNKNOWN``), ``output``,
        ``error``, ``cause``."""
        ...

    def execution_history(self, execution_arn: str) -> list[dict[str, Any]]:
        """The execution's events, oldest first: ``id``, ``type``, ``name`` (the state's), and for a
        failure ``error`` and ``cause``."""
        ...

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess to a workflow's task (a token already spent is no error)."""
        ...

    def fail(self, token: str, error: str, cause: str) -> None:
        """SendTaskFailure to a workflow's task (a token already spent is no error)."""
        ...

    def settle(self, timeout: float | None = None) -> None:
        """Return once the executions just started or signalled are at rest (parked or ended), where
        the engine can tell (locally); at once where it cannot (AWS)."""
        ...
