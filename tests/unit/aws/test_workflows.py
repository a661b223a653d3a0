"""The Step Functions ``WorkflowEngine`` adapter (``parley.aws.workflows``).

Against moto's Step Functions where it serves (machines, ``publish`` and ``versionDescription`` on create
and update, versions' ARNs and descriptions read with DescribeStateMachine, executions stored and not
run). moto 5.2 lacks two things this adapter uses, which the ``moto_sfn`` fixture adds for the test
only, in moto's own terms: ``ListStateMachineVersions`` (not implemented: it reads moto's own version
records, newest first, with ``maxResults``/``nextToken``), and starting an execution on a version's ARN
(moto raises ``AttributeError``: the execution is started on the version's machine, as AWS names it).
What moto cannot make (races, Step Functions' own errors, real histories) goes through botocore's
``Stubber``, which also checks every request against the service's model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from botocore.stub import ANY, Stubber

from parley.aws import workflows as module
from parley.aws.workflows import MAX_NAME, StepFunctionsWorkflows, history_events
from parley.errors import Problem
from parley.workflow.engine import ERROR_NAME

ACCOUNT = "123456789012"
REGION = "us-east-1"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/parley-dev-workflows"
FUNCTION = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:parley-dev-workflow"
PREFIX = "parley-dev-"
NAME = "wf-0123456789ab-brief-approval"
MACHINE = PREFIX + NAME
MACHINE_ARN = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{MACHINE}"


def definition(result: str = "approved") -> dict[str, Any]:
    return {
        "QueryLanguage": "JSONata",
        "StartAt": "/do/0/approval",
        "States": {"/do/0/approval": {"Type": "Pass", "Output": {"verdict": result}, "End": True}},
    }


def _client() -> Any:
    return boto3.client(
        "stepfunctions", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
    )


def _adapter(client: Any, *, role: str = ROLE, prefix: str = PREFIX) -> StepFunctionsWorkflows:
    return StepFunctionsWorkflows(client, prefix=prefix, role_arn=role, workflow_function_arn=FUNCTION)


# -- moto, with what it lacks ----------------------------------------------------------------------------


def _list_state_machine_versions(self: Any) -> Any:
    """ListStateMachineVersions in moto's terms: the machine's versions, newest first, paged."""
    from moto.core.responses import ActionResult
    from moto.stepfunctions.models import StateMachine

    machine = self.stepfunction_backend.describe_state_machine(self._get_param("stateMachineArn"))
    assert isinstance(machine, StateMachine)
    versions = sorted(machine.versions.values(), key=lambda v: v.version, reverse=True)
    start = int(self._get_param("nextToken") or 0)
    size = int(self._get_param("maxResults") or 100) or 100
    page = versions[start : start + size]
    response: dict[str, Any] = {
        "stateMachineVersions": [
            {"stateMachineVersionArn": v.arn, "creationDate": v.creation_date} for v in page
        ]
    }
    if start + size < len(versions):
        response["nextToken"] = str(start + size)
    return ActionResult(response)


@pytest.fixture
def moto_sfn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """moto's Step Functions with ListStateMachineVersions and executions of versions (module doc)."""
    from moto import mock_aws
    from moto.stepfunctions.models import StateMachineVersion, StepFunctionBackend
    from moto.stepfunctions.responses import StepFunctionResponse

    start = StepFunctionBackend.start_execution

    def start_execution(self: Any, state_machine_arn: str, name: str, execution_input: str) -> Any:
        machine = self.describe_state_machine(state_machine_arn)
        source = machine.source_arn if isinstance(machine, StateMachineVersion) else state_machine_arn
        execution = start(self, source, name, execution_input)
        execution.version_arn = state_machine_arn  # what the test may check
        return execution

    monkeypatch.setattr(
        StepFunctionResponse, "list_state_machine_versions", _list_state_machine_versions, raising=False
    )
    monkeypatch.setattr(StepFunctionBackend, "start_execution", start_execution)
    with mock_aws():
        yield _client()


def _moto_machine(client: Any) -> Any:
    from moto.stepfunctions.models import stepfunctions_backends

    backend = stepfunctions_backends[ACCOUNT][REGION]
    return backend.describe_state_machine(MACHINE_ARN)


class Counting:
    """A client that counts the calls made through it."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return attribute(*args, **kwargs)

        return counted


# -- state machines and versions -------------------------------------------------------------------------


def test_the_first_definition_creates_the_machine_and_publishes_its_first_version(moto_sfn: Any) -> None:
    workflows = _adapter(moto_sfn)

    version = workflows.create_state_machine(NAME, definition())

    assert version == f"{MACHINE_ARN}:1"
    machine = moto_sfn.describe_state_machine(stateMachineArn=MACHINE_ARN)
    assert (machine["name"], machine["type"], machine["roleArn"]) == (MACHINE, "STANDARD", ROLE)
    assert json.loads(machine["definition"]) == definition()
    published = moto_sfn.describe_state_machine(stateMachineArn=version)
    assert json.loads(published["definition"]) == definition()
    assert published["description"] == workflows.description(definition())
    assert published["description"].startswith("parley sha256:") and len(published["description"]) <= 256


def test_the_same_definition_asked_again_answers_the_same_version(moto_sfn: Any) -> None:
    first = _adapter(moto_sfn).create_state_machine(NAME, definition())
    # Another process (no cache), and the same machine written with its keys in another order.
    reordered = dict(reversed(list(definition().items())))
    again = _adapter(moto_sfn).create_state_machine(NAME, reordered)

    assert again == first == f"{MACHINE_ARN}:1"
    assert sorted(_moto_machine(moto_sfn).versions) == [1]


def test_a_changed_definition_publishes_a_new_version_and_the_old_one_keeps_its_own(moto_sfn: Any) -> None:
    workflows = _adapter(moto_sfn)
    first = workflows.create_state_machine(NAME, definition("approved"))

    second = workflows.create_state_machine(NAME, definition("revise"))

    assert (first, second) == (f"{MACHINE_ARN}:1", f"{MACHINE_ARN}:2")
    assert json.loads(moto_sfn.describe_state_machine(stateMachineArn=first)["definition"]) == definition()
    assert json.loads(moto_sfn.describe_state_machine(stateMachineArn=second)["definition"]) == definition(
        "revise"
    )
    assert json.loads(moto_sfn.describe_state_machine(stateMachineArn=MACHINE_ARN)["definition"]) == (
        definition("revise")
    )


def test_an_earlier_definition_asked_after_a_later_one_finds_its_version(moto_sfn: Any) -> None:
    _adapter(moto_sfn).create_state_machine(NAME, definition("approved"))
    _adapter(moto_sfn).create_state_machine(NAME, definition("revise"))

    again = _adapter(moto_sfn).create_state_machine(NAME, definition("approved"))

    assert again == f"{MACHINE_ARN}:1"
    assert sorted(_moto_machine(moto_sfn).versions) == [1, 2]


def test_a_version_found_once_is_not_looked_up_again(moto_sfn: Any) -> None:
    client = Counting(moto_sfn)
    workflows = _adapter(client)  # type: ignore[arg-type]

    workflows.create_state_machine(NAME, definition())
    made = list(client.calls)
    client.calls.clear()
    workflows.create_state_machine(NAME, definition())

    # The machine did not exist: its versions listed, then created with publish (no update).
    assert made == ["list_state_machine_versions", "create_state_machine"]
    assert client.calls == []


def test_a_new_process_finds_the_newest_version_with_one_list_and_one_describe(moto_sfn: Any) -> None:
    _adapter(moto_sfn).create_state_machine(NAME, definition("approved"))
    _adapter(moto_sfn).create_state_machine(NAME, definition("revise"))
    client = Counting(moto_sfn)

    version = _adapter(client).create_state_machine(NAME, definition("revise"))  # type: ignore[arg-type]

    assert version == f"{MACHINE_ARN}:2"
    assert client.calls == ["list_state_machine_versions", "describe_state_machine"]


def test_another_role_runs_a_version_of_its_own(moto_sfn: Any) -> None:
    first = _adapter(moto_sfn).create_state_machine(NAME, definition())
    other_role = f"arn:aws:iam::{ACCOUNT}:role/parley-dev-workflows-2"

    second = _adapter(moto_sfn, role=other_role).create_state_machine(NAME, definition())

    assert (first, second) == (f"{MACHINE_ARN}:1", f"{MACHINE_ARN}:2")
    assert moto_sfn.describe_state_machine(stateMachineArn=second)["roleArn"] == other_role


def test_beyond_the_versions_searched_a_definition_is_published_again(
    moto_sfn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "MAX_VERSIONS_SEARCHED", 2)
    for result in ("a", "b", "c"):
        _adapter(moto_sfn).create_state_machine(NAME, definition(result))

    assert _adapter(moto_sfn).create_state_machine(NAME, definition("b")) == f"{MACHINE_ARN}:2"
    # "a" is the third newest: not searched, so published again (it runs the same).
    assert _adapter(moto_sfn).create_state_machine(NAME, definition("a")) == f"{MACHINE_ARN}:4"


def test_a_name_longer_than_step_functions_takes_keeps_the_prefix_and_ends_with_a_digest() -> None:
    workflows = _adapter(_client())
    long_name = "wf-0123456789ab-" + "a-very-long-workflow-name-" * 4
    other = long_name[:-1] + "x"

    machine = workflows.machine_name(long_name)

    assert len(machine) == MAX_NAME and machine.startswith(PREFIX + "wf-0123456789ab-a-very-long")
    assert workflows.machine_name(other) != machine and len(workflows.machine_name(other)) == MAX_NAME
    assert workflows.machine_name(NAME) == MACHINE
    assert workflows.state_machine_arn(NAME) == MACHINE_ARN


def test_the_machines_arns_share_the_workflow_functions_partition_region_and_account() -> None:
    china = StepFunctionsWorkflows(
        _client(),
        prefix=PREFIX,
        role_arn="arn:aws-cn:iam::111122223333:role/r",
        workflow_function_arn="arn:aws-cn:lambda:cn-north-1:111122223333:function:parley-dev-workflow",
    )

    assert (
        china.state_machine_arn("wf-x")
        == "arn:aws-cn:states:cn-north-1:111122223333:stateMachine:parley-dev-wf-x"
    )
    assert china.workflow_function_arn.endswith(":function:parley-dev-workflow")
    with pytest.raises(ValueError, match="Lambda function"):
        StepFunctionsWorkflows(
            _client(), prefix=PREFIX, role_arn=ROLE, workflow_function_arn="parley-dev-workflow"
        )


# -- executions ------------------------------------------------------------------------------------------


def test_an_execution_starts_on_the_version_under_the_runs_name(moto_sfn: Any) -> None:
    from moto.stepfunctions.models import stepfunctions_backends

    from parley.workflow.running import execution_arn

    workflows = _adapter(moto_sfn)
    version = workflows.create_state_machine(NAME, definition())
    run = {
        "run": {"org": "acme", "playbook": "campaigns", "run_id": "r-1"},
        "input": {"owner": "é"},
        "depth": 0,
    }

    arn = workflows.start_execution(version, "acme-campaigns-r-1", run)

    assert (
        arn
        == execution_arn(version, "acme-campaigns-r-1")
        == workflows.execution_arn(version, "acme-campaigns-r-1")
    )
    assert arn == f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{MACHINE}:acme-campaigns-r-1"
    described = moto_sfn.describe_execution(executionArn=arn)
    assert json.loads(described["input"]) == run
    (execution,) = stepfunctions_backends[ACCOUNT][REGION].describe_state_machine(MACHINE_ARN).executions
    assert execution.version_arn == version


def test_starting_twice_and_after_the_end_answers_the_one_execution(moto_sfn: Any) -> None:
    workflows = _adapter(moto_sfn)
    version = workflows.create_state_machine(NAME, definition())
    first = workflows.start_execution(version, "run-1", {"input": 1})

    again = workflows.start_execution(version, "run-1", {"input": 1})  # running, same input
    workflows.stop_execution(first, "Parley.Cancelled", "cancelled")
    after_the_end = workflows.start_execution(version, "run-1", {"input": 1})  # ExecutionAlreadyExists

    assert again == after_the_end == first
    assert len(moto_sfn.list_executions(stateMachineArn=MACHINE_ARN)["executions"]) == 1


def test_stop_ends_a_running_execution_and_leaves_an_ended_or_missing_one(moto_sfn: Any) -> None:
    workflows = _adapter(moto_sfn)
    version = workflows.create_state_machine(NAME, definition())
    arn = workflows.start_execution(version, "run-1", {})

    assert workflows.describe_execution(arn) == {
        "status": "RUNNING",
        "output": None,
        "error": None,
        "cause": None,
    }
    workflows.stop_execution(arn, "Parley.Cancelled", "x" * 40_000)
    workflows.stop_execution(arn, "Parley.Cancelled", "again")
    workflows.stop_execution(workflows.execution_arn(version, "never-started"), "Parley.Cancelled", "none")

    assert workflows.describe_execution(arn)["status"] == "ABORTED"
    missing = workflows.execution_arn(version, "never-started")
    assert workflows.describe_execution(missing) == {
        "status": "UNKNOWN",
        "output": None,
        "error": None,
        "cause": None,
    }
    assert workflows.execution_history(missing) == []


def test_the_history_of_a_moto_execution_is_mapped(moto_sfn: Any) -> None:
    workflows = _adapter(moto_sfn)
    version = workflows.create_state_machine(NAME, definition())
    arn = workflows.start_execution(version, "run-1", {})

    events = workflows.execution_history(arn)

    # moto's fixed history of a succeeded execution: started, a Pass state, succeeded.
    assert [(e["id"], e["type"], e["name"]) for e in events] == [
        (1, "ExecutionStarted", None),
        (2, "PassStateEntered", "A State"),
        (3, "PassStateExited", "A State"),
        (4, "ExecutionSucceeded", "A State"),
    ]
    assert events[0]["timestamp"] == "2020-01-01T00:00:00.000Z"


def test_settle_returns_at_once() -> None:
    assert _adapter(_client()).settle() is None
    assert _adapter(_client()).settle(timeout=5.0) is None


# -- through the stubber: what the calls send, and what moto cannot make ---------------------------------


def _stubbed() -> tuple[StepFunctionsWorkflows, Stubber]:
    client = _client()
    return _adapter(client), Stubber(client)


def test_a_new_machine_is_created_with_publish_and_its_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    workflows, stub = _stubbed()
    description = workflows.description(definition())
    stub.add_client_error(
        "list_state_machine_versions", service_error_code="StateMachineDoesNotExist", http_status_code=400
    )
    stub.add_response(
        "create_state_machine",
        {
            "stateMachineArn": MACHINE_ARN,
            "creationDate": datetime(2026, 1, 1, tzinfo=UTC),
            "stateMachineVersionArn": f"{MACHINE_ARN}:1",
        },
        {
            "name": MACHINE,
            "definition": json.dumps(definition(), separators=(",", ":")),
            "roleArn": ROLE,
            "type": "STANDARD",
            "publish": True,
            "versionDescription": description,
        },
    )
    with stub:
        assert workflows.create_state_machine(NAME, definition()) == f"{MACHINE_ARN}:1"
    stub.assert_no_pending_responses()


def test_a_machine_another_caller_just_made_is_updated_with_publish() -> None:
    workflows, stub = _stubbed()
    description = workflows.description(definition())
    stub.add_client_error(
        "list_state_machine_versions", service_error_code="StateMachineDoesNotExist", http_status_code=400
    )
    stub.add_client_error(
        "create_state_machine", service_error_code="StateMachineAlreadyExists", http_status_code=400
    )
    stub.add_response(
        "update_state_machine",
        {"updateDate": datetime(2026, 1, 1, tzinfo=UTC), "stateMachineVersionArn": f"{MACHINE_ARN}:2"},
        {
            "stateMachineArn": MACHINE_ARN,
            "definition": ANY,
            "roleArn": ROLE,
            "publish": True,
            "versionDescription": description,
        },
    )
    with stub:
        assert workflows.create_state_machine(NAME, definition()) == f"{MACHINE_ARN}:2"
    stub.assert_no_pending_responses()


def test_versions_are_read_page_by_page_newest_first_until_the_digest() -> None:
    workflows, stub = _stubbed()
    description = workflows.description(definition())
    created = datetime(2026, 1, 1, tzinfo=UTC)

    def described(n: int, text: str) -> dict[str, Any]:
        return {
            "stateMachineArn": f"{MACHINE_ARN}:{n}",
            "name": MACHINE,
            "definition": "{}",
            "roleArn": ROLE,
            "type": "STANDARD",
            "creationDate": created,
            "description": text,
        }

    stub.add_response(
        "list_state_machine_versions",
        {
            "stateMachineVersions": [{"stateMachineVersionArn": f"{MACHINE_ARN}:3", "creationDate": created}],
            "nextToken": "t",
        },
        {"stateMachineArn": MACHINE_ARN, "maxResults": 100},
    )
    stub.add_response(
        "describe_state_machine", described(3, "parley sha256:other"), {"stateMachineArn": f"{MACHINE_ARN}:3"}
    )
    stub.add_response(
        "list_state_machine_versions",
        {"stateMachineVersions": [{"stateMachineVersionArn": f"{MACHINE_ARN}:2", "creationDate": created}]},
        {"stateMachineArn": MACHINE_ARN, "maxResults": 100, "nextToken": "t"},
    )
    stub.add_response(
        "describe_state_machine", described(2, description), {"stateMachineArn": f"{MACHINE_ARN}:2"}
    )
    with stub:
        assert workflows.create_state_machine(NAME, definition()) == f"{MACHINE_ARN}:2"
    stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("operation", "code", "status"),
    [
        ("list_state_machine_versions", "ThrottlingException", 400),
        ("list_state_machine_versions", "InternalFailure", 500),
        ("create_state_machine", "ConflictException", 400),
        ("create_state_machine", "ThrottlingException", 400),
    ],
)
def test_throttling_outages_and_concurrent_publications_are_unavailable(
    operation: str, code: str, status: int
) -> None:
    workflows, stub = _stubbed()
    if operation == "create_state_machine":
        stub.add_client_error(
            "list_state_machine_versions", service_error_code="StateMachineDoesNotExist", http_status_code=400
        )
    stub.add_client_error(operation, service_error_code=code, http_status_code=status)
    with stub, pytest.raises(Problem) as raised:
        workflows.create_state_machine(NAME, definition())

    assert (raised.value.reason, raised.value.status) == ("unavailable", 503)
    assert raised.value.__cause__ is not None


def test_a_machine_with_every_version_step_functions_keeps_is_a_clear_problem() -> None:
    workflows, stub = _stubbed()
    stub.add_response("list_state_machine_versions", {"stateMachineVersions": []})
    stub.add_client_error(
        "update_state_machine", service_error_code="ServiceQuotaExceededException", http_status_code=400
    )
    with stub, pytest.raises(Problem) as raised:
        workflows.create_state_machine(NAME, definition())

    assert raised.value.reason == "unavailable"
    assert "1,000" in raised.value.detail and MACHINE in raised.value.detail


def test_other_errors_are_bugs_and_propagate() -> None:
    workflows, stub = _stubbed()
    stub.add_client_error(
        "list_state_machine_versions", service_error_code="AccessDeniedException", http_status_code=400
    )
    with stub, pytest.raises(ClientError):
        workflows.create_state_machine(NAME, definition())


def test_a_throttled_start_is_unavailable_and_a_refused_input_propagates() -> None:
    workflows, stub = _stubbed()
    stub.add_client_error("start_execution", service_error_code="ThrottlingException", http_status_code=400)
    stub.add_client_error(
        "start_execution", service_error_code="ExecutionLimitExceeded", http_status_code=400
    )
    stub.add_client_error("start_execution", service_error_code="InvalidExecutionInput", http_status_code=400)
    with stub:
        for _ in range(2):
            with pytest.raises(Problem) as raised:
                workflows.start_execution(f"{MACHINE_ARN}:1", "run-1", {})
            assert raised.value.status == 503
        with pytest.raises(ClientError):
            workflows.start_execution(f"{MACHINE_ARN}:1", "run-1", {})


def test_a_stop_step_functions_refuses_is_no_error_once_the_execution_has_ended() -> None:
    workflows, stub = _stubbed()
    arn = workflows.execution_arn(f"{MACHINE_ARN}:1", "run-1")
    started = datetime(2026, 1, 1, tzinfo=UTC)
    execution = {"executionArn": arn, "stateMachineArn": MACHINE_ARN, "startDate": started}
    stub.add_client_error("stop_execution", service_error_code="ValidationException", http_status_code=400)
    stub.add_response(
        "describe_execution", {**execution, "status": "SUCCEEDED", "output": "{}"}, {"executionArn": arn}
    )
    stub.add_client_error("stop_execution", service_error_code="ValidationException", http_status_code=400)
    stub.add_response("describe_execution", {**execution, "status": "RUNNING"}, {"executionArn": arn})
    with stub:
        workflows.stop_execution(arn, "Parley.Cancelled", "cancelled")
        with pytest.raises(ClientError):
            workflows.stop_execution(arn, "Parley.Cancelled", "cancelled")
    stub.assert_no_pending_responses()


def test_a_stop_sends_the_error_and_a_cause_cut_to_what_step_functions_takes() -> None:
    workflows, stub = _stubbed()
    arn = workflows.execution_arn(f"{MACHINE_ARN}:1", "run-1")
    stub.add_response(
        "stop_execution",
        {"stopDate": datetime(2026, 1, 1, tzinfo=UTC)},
        {"executionArn": arn, "error": "E" * 256, "cause": "c" * 32_768},
    )
    with stub:
        workflows.stop_execution(arn, "E" * 300, "c" * 40_000)
    stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            {"status": "SUCCEEDED", "output": '{"approved":true,"owner":"é"}'},
            {"status": "SUCCEEDED", "output": {"approved": True, "owner": "é"}, "error": None, "cause": None},
        ),
        (
            {"status": "FAILED", "error": ERROR_NAME, "cause": '{"status":500}'},
            {"status": "FAILED", "output": None, "error": ERROR_NAME, "cause": '{"status":500}'},
        ),
        (
            {"status": "TIMED_OUT"},
            {"status": "TIMED_OUT", "output": None, "error": "States.Timeout", "cause": None},
        ),
        (
            {"status": "ABORTED", "error": "Parley.Cancelled"},
            {"status": "ABORTED", "output": None, "error": "Parley.Cancelled", "cause": None},
        ),
        ({"status": "PENDING_REDRIVE"}, {"status": "FAILED", "output": None, "error": None, "cause": None}),
    ],
)
def test_describe_reads_the_status_output_and_error(
    response: dict[str, Any], expected: dict[str, Any]
) -> None:
    workflows, stub = _stubbed()
    arn = workflows.execution_arn(f"{MACHINE_ARN}:1", "run-1")
    stub.add_response(
        "describe_execution",
        {
            "executionArn": arn,
            "stateMachineArn": MACHINE_ARN,
            "startDate": datetime(2026, 1, 1, tzinfo=UTC),
            **response,
        },
        {"executionArn": arn},
    )
    with stub:
        assert workflows.describe_execution(arn) == expected


# -- the history -----------------------------------------------------------------------------------------

T = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
#: An execution of a compiled machine: a call that fails, caught inside a one-branch Parallel, then the
#: end; the events as GetExecutionHistory gives them (``previousEventId`` chains each branch's events).
EVENTS: list[dict[str, Any]] = [
    {
        "id": 1,
        "previousEventId": 0,
        "timestamp": T,
        "type": "ExecutionStarted",
        "executionStartedEventDetails": {"roleArn": ROLE},
    },
    {
        "id": 2,
        "previousEventId": 1,
        "timestamp": T,
        "type": "ParallelStateEntered",
        "stateEnteredEventDetails": {"name": "/do/0/approval"},
    },
    {"id": 3, "previousEventId": 2, "timestamp": T, "type": "ParallelStateStarted"},
    {
        "id": 4,
        "previousEventId": 3,
        "timestamp": T,
        "type": "TaskStateEntered",
        "stateEnteredEventDetails": {"name": "/do/0/approval/try/0/ask"},
    },
    {
        "id": 5,
        "previousEventId": 4,
        "timestamp": T,
        "type": "TaskScheduled",
        "taskScheduledEventDetails": {
            "resourceType": "lambda",
            "resource": "invoke.waitForTaskToken",
            "region": REGION,
            "parameters": "{}",
        },
    },
    {
        "id": 6,
        "previousEventId": 5,
        "timestamp": T,
        "type": "TaskStarted",
        "taskStartedEventDetails": {"resourceType": "lambda", "resource": "invoke.waitForTaskToken"},
    },
    {
        "id": 7,
        "previousEventId": 6,
        "timestamp": T,
        "type": "TaskFailed",
        "taskFailedEventDetails": {
            "resourceType": "lambda",
            "resource": "invoke.waitForTaskToken",
            "error": ERROR_NAME,
            "cause": '{"status":410}',
        },
    },
    {"id": 8, "previousEventId": 7, "timestamp": T, "type": "ParallelStateFailed"},
    {
        "id": 9,
        "previousEventId": 8,
        "timestamp": T,
        "type": "ParallelStateExited",
        "stateExitedEventDetails": {"name": "/do/0/approval"},
    },
    {
        "id": 10,
        "previousEventId": 9,
        "timestamp": T,
        "type": "PassStateEntered",
        "stateEnteredEventDetails": {"name": "/do/0/approval/catch"},
    },
    {
        "id": 11,
        "previousEventId": 10,
        "timestamp": T,
        "type": "PassStateExited",
        "stateExitedEventDetails": {"name": "/do/0/approval/catch"},
    },
    {
        "id": 12,
        "previousEventId": 11,
        "timestamp": T,
        "type": "ExecutionFailed",
        "executionFailedEventDetails": {"error": ERROR_NAME, "cause": "{}"},
    },
]


def test_the_history_maps_each_event_to_its_state_and_error() -> None:
    events = history_events(EVENTS)

    assert [(e["id"], e["type"], e["name"]) for e in events] == [
        (1, "ExecutionStarted", None),
        (2, "ParallelStateEntered", "/do/0/approval"),
        (3, "ParallelStateStarted", "/do/0/approval"),
        (4, "TaskStateEntered", "/do/0/approval/try/0/ask"),
        (5, "TaskScheduled", "/do/0/approval/try/0/ask"),
        (6, "TaskStarted", "/do/0/approval/try/0/ask"),
        (7, "TaskFailed", "/do/0/approval/try/0/ask"),
        # The Parallel's own failure follows its branch's last event: the branch's state, as written.
        (8, "ParallelStateFailed", "/do/0/approval/try/0/ask"),
        (9, "ParallelStateExited", "/do/0/approval"),
        (10, "PassStateEntered", "/do/0/approval/catch"),
        (11, "PassStateExited", "/do/0/approval/catch"),
        (12, "ExecutionFailed", "/do/0/approval/catch"),
    ]
    assert (events[6]["error"], events[6]["cause"]) == (ERROR_NAME, '{"status":410}')
    assert (events[11]["error"], events[11]["cause"]) == (ERROR_NAME, "{}")
    assert all(e["error"] is None and e["cause"] is None for e in events[:6])
    assert {e["timestamp"] for e in events} == {"2026-03-01T12:00:00.000Z"}


def test_branches_interleaved_keep_each_events_own_state() -> None:
    events = history_events(
        [
            {
                "id": 1,
                "previousEventId": 0,
                "timestamp": T,
                "type": "TaskStateEntered",
                "stateEnteredEventDetails": {"name": "a"},
            },
            {
                "id": 2,
                "previousEventId": 0,
                "timestamp": T,
                "type": "TaskStateEntered",
                "stateEnteredEventDetails": {"name": "b"},
            },
            {
                "id": 3,
                "previousEventId": 1,
                "timestamp": T,
                "type": "TaskScheduled",
                "taskScheduledEventDetails": {},
            },
            {
                "id": 4,
                "previousEventId": 2,
                "timestamp": T,
                "type": "TaskScheduled",
                "taskScheduledEventDetails": {},
            },
            # No previousEventId (or an unknown one): the state entered last.
            {"id": 5, "timestamp": T, "type": "TaskSucceeded"},
        ]
    )

    assert [e["name"] for e in events] == ["a", "b", "a", "b", "b"]


def test_every_page_of_the_history_is_read_oldest_first_with_its_data() -> None:
    workflows, stub = _stubbed()
    arn = workflows.execution_arn(f"{MACHINE_ARN}:1", "run-1")
    request = {"executionArn": arn, "reverseOrder": False, "includeExecutionData": True, "maxResults": 1000}
    stub.add_response("get_execution_history", {"events": EVENTS[:5], "nextToken": "page-2"}, request)
    stub.add_response("get_execution_history", {"events": EVENTS[5:]}, {**request, "nextToken": "page-2"})
    with stub:
        events = workflows.execution_history(arn)
    stub.assert_no_pending_responses()

    assert [e["id"] for e in events] == list(range(1, 13))
    assert events == history_events(EVENTS)


def test_a_throttled_history_is_unavailable() -> None:
    workflows, stub = _stubbed()
    stub.add_client_error(
        "get_execution_history", service_error_code="ThrottlingException", http_status_code=400
    )
    with stub, pytest.raises(Problem) as raised:
        workflows.execution_history(workflows.execution_arn(f"{MACHINE_ARN}:1", "run-1"))
    assert raised.value.status == 503


# -- task tokens -----------------------------------------------------------------------------------------


def test_succeed_sends_the_output_as_compact_json() -> None:
    workflows, stub = _stubbed()
    stub.add_response(
        "send_task_success", {}, {"taskToken": "token-1", "output": '{"output":{"verdict":"approuvé"}}'}
    )
    with stub:
        workflows.succeed("token-1", {"output": {"verdict": "approuvé"}})
    stub.assert_no_pending_responses()


def test_fail_sends_the_error_and_a_cause_cut_to_what_step_functions_takes() -> None:
    workflows, stub = _stubbed()
    stub.add_response(
        "send_task_failure", {}, {"taskToken": "token-1", "error": ERROR_NAME, "cause": "x" * 32_768}
    )
    with stub:
        workflows.fail("token-1", ERROR_NAME, "x" * 40_000)
    stub.assert_no_pending_responses()


@pytest.mark.parametrize("code", ["TaskTimedOut", "InvalidToken", "TaskDoesNotExist"])
@pytest.mark.parametrize("call", ["succeed", "fail"])
def test_a_spent_token_is_no_error(code: str, call: str) -> None:
    workflows, stub = _stubbed()
    stub.add_client_error(
        "send_task_success" if call == "succeed" else "send_task_failure",
        service_error_code=code,
        http_status_code=400,
    )
    with stub:
        if call == "succeed":
            workflows.succeed("spent", {"output": None})
        else:
            workflows.fail("spent", ERROR_NAME, "{}")
    stub.assert_no_pending_responses()


@pytest.mark.parametrize("call", ["succeed", "fail"])
def test_a_throttled_answer_is_unavailable(call: str) -> None:
    workflows, stub = _stubbed()
    stub.add_client_error(
        "send_task_success" if call == "succeed" else "send_task_failure",
        service_error_code="ThrottlingException",
        http_status_code=400,
    )
    with stub, pytest.raises(Problem) as raised:
        if call == "succeed":
            workflows.succeed("token-1", {"output": 1})
        else:
            workflows.fail("token-1", ERROR_NAME, "{}")
    assert raised.value.status == 503


class _Unreachable:
    def __getattr__(self, name: str) -> Any:
        def unreachable(**kwargs: Any) -> Any:
            raise EndpointConnectionError(endpoint_url="https://states")

        return unreachable


def test_an_unreachable_service_is_unavailable() -> None:
    workflows = _adapter(_Unreachable())

    for call in (
        lambda: workflows.create_state_machine(NAME, definition()),
        lambda: workflows.start_execution(f"{MACHINE_ARN}:1", "run-1", {}),
        lambda: workflows.describe_execution(workflows.execution_arn(MACHINE_ARN, "run-1")),
        lambda: workflows.succeed("token-1", {}),
    ):
        with pytest.raises(Problem) as raised:
            call()
        assert raised.value.reason == "unavailable"


def test_a_states_input_and_output_are_read_as_their_sizes_and_a_waits_input_whole() -> None:
    events = [
        {
            "id": 1,
            "type": "WaitStateEntered",
            "timestamp": datetime(2026, 12, 1, tzinfo=UTC),
            "stateEnteredEventDetails": {"name": "/do/0/x#retry", "input": '{"attempt":1,"delay":5}'},
        },
        {
            "id": 2,
            "type": "PassStateExited",
            "timestamp": datetime(2026, 12, 1, tzinfo=UTC),
            "stateExitedEventDetails": {"name": "/do/1/y", "output": '{"a":"é"}'},
        },
    ]
    entered, exited = history_events(events)
    assert (entered["input"], entered["input_size"]) == ({"attempt": 1, "delay": 5}, 23)
    assert exited["output_size"] == 10 and "input" not in exited
