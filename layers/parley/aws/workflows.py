"""``WorkflowEngine`` on Step Functions (``workflow-format.md``, "On AWS, and what a caller can see of it"):
one Standard state machine per workflow, a published version per distinct definition, executions
named after their runs.

- **Names.** A machine is named the stage's prefix (``PARLEY_WORKFLOW_PREFIX``, such as ``parley-dev-``)
  followed by the name the workflow type gives it (``parley.workflow.running.machine_name``), so that the
  stack's grants reach the stage's own machines only. A name longer than Step Functions' 80 characters
  keeps its beginning (the prefix the grants name) and ends with a digest of the whole.
- **Versions.** Every version this adapter publishes carries, as its description, a digest of what it
  runs: the definition (keys sorted, so the same machine always gives the same digest) and the role.
  :meth:`StepFunctionsWorkflows.create_state_machine` looks among the machine's newest versions for that
  digest and answers the version it finds; otherwise it publishes one: ``CreateStateMachine`` with
  ``publish`` the first time, ``UpdateStateMachine`` with ``publish`` afterwards (the update and the
  publication are one call, so a version never holds another caller's definition). The same definition
  asked again answers the same version, even after other definitions were published; an in-process cache
  spares the lookups after the first.
- **Executions** are started on a version's ARN; their ARN is ``…:execution:<machine>:<name>`` whatever
  the version. Starting one that exists, stopping one that has ended or never was, and answering a task
  token already spent are no errors: every caller runs at least once.

Overload and outages (throttling, 5xx, a concurrent publication's ``ConflictException``, the endpoint
out of reach) become ``503 unavailable`` problems at this edge (``parley.aws.edge.translated``); anything
else is a bug and propagates.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Set
from typing import TYPE_CHECKING, Any, Final

from parley.aws.edge import translated
from parley.aws.stepfunctions import ENDED_TOKEN_CODES, MAX_CAUSE, MAX_ERROR, UNAVAILABLE_CODES
from parley.errors import Problem

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.client import SFNClient

#: Step Functions' longest state machine (and execution) name.
MAX_NAME: Final = 80
#: What a version's description says before the digest of what it runs.
DESCRIPTION_PREFIX: Final = "parley sha256:"
#: The newest versions a lookup reads before it publishes another (each costs a DescribeStateMachine;
#: Step Functions keeps at most 1,000 a machine). A definition asked again after this many others gets a
#: version of its own again, which runs the same.
MAX_VERSIONS_SEARCHED: Final = 100
#: How many (machine, digest) → version answers, and version → description readings, the process keeps.
CACHE_SIZE: Final = 512
#: Publishing: a concurrent publication of the same machine is a conflict worth trying again.
PUBLISH_UNAVAILABLE_CODES: Final = UNAVAILABLE_CODES | {"ConflictException"}
#: The statuses the port speaks of (``parley.ports.workflows``, and ``TIMED_OUT`` as the local executor
#: says it); a failed execution waiting for a redrive (which Parley never asks) has failed.
STATUSES: Final = {
    "RUNNING": "RUNNING",
    "SUCCEEDED": "SUCCEEDED",
    "FAILED": "FAILED",
    "TIMED_OUT": "TIMED_OUT",
    "ABORTED": "ABORTED",
    "PENDING_REDRIVE": "FAILED",
}
#: The error a timed-out execution ends with (``parley.workflow.engine.TIMEOUT_ERROR``).
TIMED_OUT_ERROR: Final = "States.Timeout"


class StepFunctionsWorkflows:
    """The ``WorkflowEngine`` port on Step Functions.

    ``prefix`` starts every machine's name (``PARLEY_WORKFLOW_PREFIX``); ``role_arn`` is the role every
    machine runs as (``PARLEY_WORKFLOW_ROLE_ARN``); ``workflow_function_arn`` is the workflow entry the
    machines invoke (``PARLEY_WORKFLOW_FUNCTION_ARN``), whose partition, region and account the machines'
    ARNs share.
    """

    def __init__(self, client: SFNClient, *, prefix: str, role_arn: str, workflow_function_arn: str) -> None:
        parts = workflow_function_arn.split(":")
        if len(parts) < 7 or parts[0] != "arn" or parts[2] != "lambda":
            raise ValueError(
                f"the workflow function's ARN is a Lambda function's, not {workflow_function_arn!r}"
            )
        self._client = client
        self.prefix = prefix
        self.role_arn = role_arn
        self.workflow_function_arn = workflow_function_arn
        self._arn_base = f"arn:{parts[1]}:states:{parts[3]}:{parts[4]}"
        self._versions: dict[tuple[str, str], str] = {}
        self._descriptions: dict[str, str] = {}

    # --- names ----------------------------------------------------------------------------------------

    def machine_name(self, name: str) -> str:
        """The state machine's name: the prefix and ``name``, cut to 80 characters with a digest."""
        full = self.prefix + name
        if len(full) <= MAX_NAME:
            return full
        digest = hashlib.sha256(full.encode()).hexdigest()[:12]
        return f"{full[: MAX_NAME - len(digest) - 1]}-{digest}"

    def state_machine_arn(self, name: str) -> str:
        """The ARN of the (unversioned) state machine of ``name``."""
        return f"{self._arn_base}:stateMachine:{self.machine_name(name)}"

    @staticmethod
    def execution_arn(state_machine_arn: str, name: str) -> str:
        """The ARN of the execution ``name`` of a machine or of one of its versions."""
        base, _, rest = state_machine_arn.partition(":stateMachine:")
        return f"{base}:execution:{rest.split(':', 1)[0]}:{name}"

    def description(self, definition: Mapping[str, Any]) -> str:
        """What a version that runs ``definition`` as this role says it runs."""
        canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256(f"{self.role_arn}\n{canonical}".encode()).hexdigest()
        return DESCRIPTION_PREFIX + digest

    # --- machines and their versions ------------------------------------------------------------------

    def create_state_machine(self, name: str, definition: Mapping[str, Any]) -> str:
        """The ARN of the version (``…:stateMachine:<machine>:<n>``) of machine ``name`` that runs
        ``definition``: the one published before, else a new one."""
        machine = self.machine_name(name)
        description = self.description(definition)
        known = self._versions.get((machine, description))
        if known is not None:
            return known
        machine_arn = self.state_machine_arn(name)
        exists, version = self._published(machine_arn, description)
        if version is None:
            text = json.dumps(dict(definition), separators=(",", ":"), ensure_ascii=False)
            version = self._publish(machine, machine_arn, text, description, exists=exists)
        _remember(self._versions, (machine, description), version)
        return version

    def _published(self, machine_arn: str, description: str) -> tuple[bool, str | None]:
        """Whether the machine exists, and its newest version that says ``description`` (``None`` when
        none of the newest :data:`MAX_VERSIONS_SEARCHED` does)."""
        searched = 0
        kwargs: dict[str, Any] = {"stateMachineArn": machine_arn, "maxResults": MAX_VERSIONS_SEARCHED}
        while True:
            page = _call(
                "list the workflow's versions",
                lambda: self._client.list_state_machine_versions(**kwargs),
                ignore={"StateMachineDoesNotExist"},
            )
            if page is None:
                return False, None
            for item in page.get("stateMachineVersions", []):
                arn = str(item["stateMachineVersionArn"])
                if self._description_of(arn) == description:
                    return True, arn
                searched += 1
                if searched >= MAX_VERSIONS_SEARCHED:
                    return True, None
            token = page.get("nextToken")
            if not token:
                return True, None
            kwargs["nextToken"] = token

    def _description_of(self, version_arn: str) -> str | None:
        """A version's description (a version never changes: read once a process); ``None`` for one
        deleted meanwhile."""
        known = self._descriptions.get(version_arn)
        if known is not None:
            return known
        response = _call(
            "read a version of the workflow",
            lambda: self._client.describe_state_machine(stateMachineArn=version_arn),
            ignore={"StateMachineDoesNotExist"},
        )
        if response is None:
            return None
        description = str(response.get("description") or "")
        _remember(self._descriptions, version_arn, description)
        return description

    def _publish(self, machine: str, machine_arn: str, text: str, description: str, *, exists: bool) -> str:
        """Publish a version of ``text``: create the machine with ``publish`` unless it ``exists`` (or
        another caller has just made it), else update it with ``publish``."""
        from botocore.exceptions import ClientError

        action = "publish the workflow's state machine"
        try:
            created = None
            if not exists:
                created = _call(
                    action,
                    lambda: self._client.create_state_machine(
                        name=machine,
                        definition=text,
                        roleArn=self.role_arn,
                        type="STANDARD",
                        publish=True,
                        versionDescription=description,
                    ),
                    ignore={"StateMachineAlreadyExists"},
                    unavailable=PUBLISH_UNAVAILABLE_CODES,
                )
            if created is not None and created.get("stateMachineVersionArn"):
                return str(created["stateMachineVersionArn"])
            # The machine exists (made for an earlier definition, or by another caller just now).
            updated = _call(
                action,
                lambda: self._client.update_state_machine(
                    stateMachineArn=machine_arn,
                    definition=text,
                    roleArn=self.role_arn,
                    publish=True,
                    versionDescription=description,
                ),
                unavailable=PUBLISH_UNAVAILABLE_CODES,
            )
        except ClientError as exc:
            if _code(exc) != "ServiceQuotaExceededException":
                raise
            raise Problem(
                "unavailable",
                f"The workflow's state machine {machine} has as many versions as Step Functions keeps "
                "(1,000): an operator must delete old ones (DeleteStateMachineVersion) before this "
                "definition can run.",
            ) from exc
        assert updated is not None  # nothing ignored
        return str(updated["stateMachineVersionArn"])

    # --- executions -----------------------------------------------------------------------------------

    def start_execution(self, state_machine_arn: str, name: str, input_value: Any) -> str:
        """Start the execution ``name`` of a version; when one of that name exists, its ARN."""
        payload = json.dumps(input_value, separators=(",", ":"), ensure_ascii=False)
        started = _call(
            "start the workflow's execution",
            lambda: self._client.start_execution(stateMachineArn=state_machine_arn, name=name, input=payload),
            ignore={"ExecutionAlreadyExists"},
        )
        if started is not None and started.get("executionArn"):
            return str(started["executionArn"])
        return self.execution_arn(state_machine_arn, name)

    def stop_execution(self, execution_arn: str, error: str, cause: str) -> None:
        """Stop a running execution; one that has ended, or never was, is left as it is."""
        from botocore.exceptions import ClientError

        try:
            _call(
                "stop the workflow's execution",
                lambda: self._client.stop_execution(
                    executionArn=execution_arn, error=error[:MAX_ERROR], cause=cause[:MAX_CAUSE]
                ),
                ignore={"ExecutionDoesNotExist"},
            )
        except ClientError:
            # Step Functions does not document what it says to a stop of an execution that has ended:
            # look, and complain only about one still running.
            if self.describe_execution(execution_arn)["status"] == "RUNNING":
                raise

    def describe_execution(self, execution_arn: str) -> dict[str, Any]:
        """``status`` (``RUNNING``, ``SUCCEEDED``, ``FAILED``, ``TIMED_OUT``, ``ABORTED``, or ``UNKNOWN``
        for an execution that does not exist), ``output`` (the JSON value; ``None`` unless it
        succeeded), ``error`` (``States.Timeout`` for a timed-out execution), ``cause``."""
        response = _call(
            "read the workflow's execution",
            lambda: self._client.describe_execution(executionArn=execution_arn),
            ignore={"ExecutionDoesNotExist"},
        )
        if response is None:
            return {"status": "UNKNOWN", "output": None, "error": None, "cause": None}
        status = str(response["status"])
        error = response.get("error")
        if status == "TIMED_OUT" and not error:
            error = TIMED_OUT_ERROR
        output = response.get("output")
        return {
            "status": STATUSES.get(status, "UNKNOWN"),
            "output": json.loads(output) if isinstance(output, str) and output else None,
            "error": error,
            "cause": response.get("cause"),
        }

    def execution_history(self, execution_arn: str) -> list[dict[str, Any]]:
        """The execution's events, oldest first, every page read (:func:`history_events`). An execution
        that does not exist has none."""
        events: list[Mapping[str, Any]] = []
        kwargs: dict[str, Any] = {
            "executionArn": execution_arn,
            "reverseOrder": False,
            # With the data: a task's output size and a retry's attempt and delay are read from it.
            "includeExecutionData": True,
            "maxResults": 1000,
        }
        while True:
            page = _call(
                "read the workflow's history",
                lambda: self._client.get_execution_history(**kwargs),
                ignore={"ExecutionDoesNotExist"},
            )
            if page is None:
                return []
            events.extend(page.get("events", []))
            token = page.get("nextToken")
            if not token:
                return history_events(events)
            kwargs["nextToken"] = token

    # --- tokens ---------------------------------------------------------------------------------------

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess with ``output`` as JSON (a token already spent is no error)."""
        payload = json.dumps(dict(output), separators=(",", ":"), ensure_ascii=False)
        _call(
            "answer the workflow's task",
            lambda: self._client.send_task_success(taskToken=token, output=payload),
            ignore=ENDED_TOKEN_CODES,
        )

    def fail(self, token: str, error: str, cause: str) -> None:
        """SendTaskFailure (a token already spent is no error)."""
        _call(
            "answer the workflow's task",
            lambda: self._client.send_task_failure(
                taskToken=token, error=error[:MAX_ERROR], cause=cause[:MAX_CAUSE]
            ),
            ignore=ENDED_TOKEN_CODES,
        )

    def settle(self, timeout: float | None = None) -> None:
        """Nothing to wait for: Step Functions runs the executions elsewhere."""
        return None


def history_events(events: Any) -> list[dict[str, Any]]:
    """Step Functions' history events (``GetExecutionHistory``'s, oldest first) as the port's, as the
    local executor gives them: ``id``, ``type``, ``timestamp`` (ISO 8601 UTC), ``name`` (the state the
    event belongs to: its own for a state's entry and exit, else that of the event before it, following
    ``previousEventId``, else of the state entered last; ``None`` before the first state), and ``error``
    and ``cause`` (``None`` unless the event's details carry them)."""
    from parley.clock import format_time

    names: dict[int, str | None] = {}
    found: list[dict[str, Any]] = []
    last_entered: str | None = None
    for event in events:
        event_id = int(event["id"])
        details: Mapping[str, Any] = next(
            (
                value
                for key, value in event.items()
                if key.endswith("EventDetails") and isinstance(value, dict)
            ),
            {},
        )
        if "stateEnteredEventDetails" in event or "stateExitedEventDetails" in event:
            name: str | None = str(details.get("name"))
            if "stateEnteredEventDetails" in event:
                last_entered = name
        else:
            previous = event.get("previousEventId")
            name = names.get(previous, last_entered)
        names[event_id] = name
        timestamp = event.get("timestamp")
        mapped: dict[str, Any] = {
            "id": event_id,
            "type": str(event["type"]),
            "timestamp": format_time(timestamp) if timestamp is not None else None,
            "name": name,
            "error": details.get("error"),
            "cause": details.get("cause"),
        }
        if "stateExitedEventDetails" in event and isinstance(details.get("output"), str):
            mapped["output_size"] = len(details["output"].encode("utf-8"))
        if "stateEnteredEventDetails" in event and isinstance(details.get("input"), str):
            mapped["input_size"] = len(details["input"].encode("utf-8"))
            if str(event["type"]) == "WaitStateEntered":
                mapped["input"] = _parsed(details["input"])
        found.append(mapped)
    return found


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _remember(cache: dict[Any, str], key: Any, value: str) -> None:
    """Keep ``value`` under ``key``, dropping the oldest entry beyond :data:`CACHE_SIZE`."""
    cache[key] = value
    while len(cache) > CACHE_SIZE:
        del cache[next(iter(cache))]


def _call(
    action: str,
    call: Callable[[], Mapping[str, Any]],
    *,
    ignore: Set[str] = frozenset(),
    unavailable: Set[str] = UNAVAILABLE_CODES,
) -> Mapping[str, Any] | None:
    """What ``call`` answers, or ``None`` when its error is one of ``ignore``; overload and outages are
    ``503 unavailable`` (``parley.aws.edge.translated``)."""
    with translated("Step Functions", action, ignore=ignore, unavailable=unavailable):
        return call()
    return None


def _code(error: Any) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))
