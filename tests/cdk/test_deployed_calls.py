"""Every AWS call allowed, nothing more granted (issue 28, item 1).

The stack deployed with every option (``conftest``: ``options``) is played offline (``deployed.py``):
each function runs in a process of its own with the environment the template gives it, against moto's
server, through the scenarios of ``deployed_scenarios.py`` (every API operation, an inbox run answered,
expired, cancelled and settled by the wait's timeout, a delivery and its replies read through a tool, a
call kept in the content bucket, a reasoning run and an agent run on a fake provider, workflows started
by the API and by their schedule, the MCP front door, the authorizer). Every botocore call is recorded
with the function that made it, and:

- each call, as the IAM requests it makes (``iam_check.iam_requests``), is allowed by that function's
  role in the template;
- each invocation AWS makes for the stack (the run's state machine invoking wait and settle, a workflow's
  machine the workflow function, a schedule the timer, the timer queue's event source) is allowed by the
  role it makes it as;
- each action a role grants was used by some call, or is in :data:`NOT_CALLED` with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Final

import pytest
from deployed import Deployment, managed_policies, moto_server, role_statements
from deployed_scenarios import GATEWAY_KEY, MODEL_SECRET, TOOL_SECRETS, operator_config, play
from iam_check import IamRequest, allowed

from parley.infrastructure.functions import FUNCTIONS

pytestmark = pytest.mark.cdk

#: The reasons of NOT_CALLED below.
_LAMBDA_LOGS = "Lambda's runtime writes the function's own log group as its role"
_TRACING = "active tracing: Lambda's runtime sends the segments as the function's role"
_DESTINATION = "the function's on-failure destination: Lambda sends the failed event (CDK adds the reads)"
_STATE_MACHINE_LOGS = "Step Functions' log delivery and X-Ray tracing of the run's state machine"
_TABLE = (
    "every function with a runtime gets CDK's grantReadWriteData on the one table and its indexes "
    "(stack.py, _grant_runtime); the code calls GetItem, PutItem, UpdateItem, DeleteItem, Query and "
    "transactions, each function some of them"
)
_CONFIGURATION = (
    "every function with a runtime may read the operator configuration; it is read on first use, and "
    "the wait and settle events played need none"
)
_CONTENT = (
    "MAY_KEEP_CONTENT: content past 64 KiB wherever it is written or read; the scenarios keep a call's and "
    "a reasoning run's output, not a delivery's or a read's result, nor one the backstop reads"
)
_WORKFLOW_MACHINES = (
    "MAY_RUN_WORKFLOWS is one statement for api, mcp, timer and workflow (workflows.py, allow_running): "
    "a saved workflow's new version (UpdateStateMachine with publish), a version's description read back, "
    "a workflow run's status, history and stop are not all played by every one of them"
)
_CALL_FAILED = (
    "MAY_ANSWER_CALLS: a called run that fails answers its workflow with SendTaskFailure; not every "
    "writer of such an ending is played"
)
_CALL_SUCCEEDED = (
    "MAY_ANSWER_CALLS: a called run's success written here (a notification's last attempt by the timer, "
    "an answered request the backstop settles, data an older version wrote) is not played"
)
_RUN_NOW = (
    "MAY_RUN_NOW: work due at once (a delivery's first attempt or a retry due now) made by this function; "
    "the scenarios make it from the api function only"
)

_TABLE_ACTIONS = (
    "BatchGetItem",
    "Scan",
    "BatchWriteItem",
    "DescribeTable",
    "GetRecords",
    "GetShardIterator",
    "ConditionCheckItem",
    "DeleteItem",
    "Query",
    "PutItem",
)
_MACHINE_ACTIONS = {
    "api": ("DescribeExecution", "DescribeStateMachine", "UpdateStateMachine", "PublishStateMachineVersion"),
    **{
        name: (
            "DescribeExecution",
            "DescribeStateMachine",
            "GetExecutionHistory",
            "StopExecution",
            "UpdateStateMachine",
            "PublishStateMachineVersion",
        )
        for name in ("timer", "workflow")
    },
}

#: Actions a role grants that no recorded call makes, each with its reason. Keys: a function's name, or
#: ``*`` for every function, or the start of a service role's logical id (``Runs``, ``Scheduling``);
#: the action may hold wildcards.
NOT_CALLED: Final[dict[tuple[str, str], str]] = {
    # -- what AWS does as a function's role, never the function's code ---------------------------------
    ("*", "logs:CreateLogStream"): _LAMBDA_LOGS,
    ("*", "logs:PutLogEvents"): _LAMBDA_LOGS,
    ("*", "xray:PutTraceSegments"): _TRACING,
    ("*", "xray:PutTelemetryRecords"): _TRACING,
    ("timer", "sqs:ChangeMessageVisibility"): "the timer queue's event source mapping (Lambda's poller)",
    ("timer", "sqs:GetQueueUrl"): _DESTINATION,
    ("timer", "sqs:GetQueueAttributes"): _DESTINATION,
    ("timer", "sqs:SendMessage"): _DESTINATION,
    ("reason", "sqs:SendMessage"): _DESTINATION,
    ("reason", "sqs:GetQueueAttributes"): _DESTINATION,
    ("reason", "sqs:GetQueueUrl"): _DESTINATION,
    ("Runs", "logs:*"): _STATE_MACHINE_LOGS,
    ("Runs", "xray:*"): _STATE_MACHINE_LOGS,
    ("Scheduling", "sqs:SendMessage"): "a schedule whose target kept failing goes to its dead-letter queue",
    # -- one grant for several functions, wider than what each one calls ---------------------------------
    **{("*", f"dynamodb:{action}"): _TABLE for action in _TABLE_ACTIONS},
    ("*", "ssm:GetParameter"): _CONFIGURATION,
    ("*", "s3:*Object"): _CONTENT,
    **{
        (name, f"states:{action}"): _WORKFLOW_MACHINES
        for name, actions in _MACHINE_ACTIONS.items()
        for action in actions
    },
    ("*", "states:SendTaskFailure"): _CALL_FAILED,
    ("settle", "states:SendTaskSuccess"): _CALL_SUCCEEDED,
    ("timer", "states:SendTaskSuccess"): _CALL_SUCCEEDED,
    ("*", "scheduler:DeleteSchedule"): "MAY_SCHEDULE is one statement (create and delete): the reason and "
    "workflow functions make schedules in the scenarios and forget none",
    ("timer", "lambda:InvokeFunction"): _RUN_NOW,
    ("workflow", "lambda:InvokeFunction"): _RUN_NOW,
    ("settle", "lambda:InvokeFunction"): "MAY_REASON: the backstop has an agent run whose wait timed out "
    "take its next step; the settled run played is an inbox run",
    ("workflow", "secretsmanager:GetSecretValue"): "a workflow's called run using a tool server with a "
    "secret header; the scenarios' workflows call the tools server, which has none",
    **{
        (
            name,
            "secretsmanager:PutSecretValue",
        ): "MAY_KEEP_CONNECTION_SECRETS: a connection's secret replaced "
        "(its OAuth tokens kept or refreshed); the scenarios add connections with headers, which create it"
        for name in ("api", "mcp")
    },
    **{
        (name, "secretsmanager:GetSecretValue"): "MAY_KEEP_CONNECTION_SECRETS: a connection's headers read "
        "for a tool call on it (search, introspect, execute, dry_run): no scenario calls a connection's tool"
        for name in ("api", "mcp")
    },
    ("reason", "secretsmanager:GetSecretValue"): "MAY_READ_CONNECTION_SECRETS: a reasoning run's tool call "
    "to a connection with headers; the scenarios' reasoning runs call the tools server, which has none",
    ("reason", "secretsmanager:PutSecretValue"): "MAY_READ_CONNECTION_SECRETS: an OAuth token a reasoning "
    "run's tool call refreshed, put back; the scenarios connect no OAuth server",
    ("reason", "bedrock:InvokeModel*"): "Bedrock models are not served offline (the scenarios' model is a "
    "gateway on 127.0.0.1); iam_check maps Converse and InvokeModel to these actions",
}


#: Calls the code makes that its role refuses, known and reported (each a bug to fix, then removed from
#: here: the test fails once the call is no longer made, or once it is allowed). Keys: the stack played,
#: the function, the action. (The first finding, the backstop's SendTaskSuccess to the wait it settles,
#: which the settle role refuses, was fixed in runs/endings.py: the backstop tells no token.)
KNOWN_REFUSALS: Final[dict[tuple[str, str, str], str]] = {}


@dataclass
class Played:
    stack: str
    deployment: Deployment
    scenarios: list[str]

    def statements(self, role_id: str) -> list[dict[str, Any]]:
        return role_statements(self.deployment.names, role_id)


@pytest.fixture(scope="module", params=["options", "dev"])
def played(
    request: pytest.FixtureRequest, synthesized: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Played]:
    """The scenarios played on the stack with every option (Bedrock models named, an OIDC issuer, named
    secrets) and on the default one (``dev``: no Bedrock, its own Cognito pool)."""
    from fake_providers import FakeProviders
    from mcp_servers import running_tool_server

    from parley.demo.chat import Chat
    from parley.demo.server import DemoChatOptions, running

    folder = tmp_path_factory.mktemp(f"deployed-{request.param}")
    stack_key: str = request.param
    template = synthesized.templates[stack_key].to_json()
    tool_secret = TOOL_SECRETS[stack_key]
    with ExitStack() as stack:
        endpoint = stack.enter_context(moto_server(folder / "moto.log"))
        fake = stack.enter_context(FakeProviders())
        tools = stack.enter_context(running_tool_server())
        chat = Chat()
        demo = stack.enter_context(running(DemoChatOptions(port=0), chat))
        deployment = Deployment(
            template,
            stack_name=synthesized.stacks[stack_key].stack_name,
            endpoint=endpoint,
            folder=folder,
            operator_config=operator_config(demo.mcp_url, tools.url, fake.openai_base_url, tool_secret),
            secrets={tool_secret: "chat-token", MODEL_SECRET: GATEWAY_KEY},
        )
        stack.callback(deployment.stop)
        scenarios = play(deployment, chat, fake)
        yield Played(stack_key, deployment, scenarios)


def _shown(statements: list[dict[str, Any]]) -> str:
    return "\n".join("    " + json.dumps(s, sort_keys=True) for s in statements)


def test_every_function_of_the_stack_ran(played: Played) -> None:
    ran = {call.function for call in played.deployment.calls}
    ran |= set(played.deployment.invoked)
    assert {d.name for d in FUNCTIONS} <= ran, played.scenarios


def test_every_call_a_function_makes_is_allowed_by_its_role(played: Played) -> None:
    deployment = played.deployment
    refused = []
    known: set[tuple[str, str, str]] = set()
    for call in deployment.calls:
        function = deployment.functions[call.function]
        statements = played.statements(function.role_id)
        for request in deployment.iam_requests(call):
            if allowed(statements, request):
                continue
            if (played.stack, call.function, request.action) in KNOWN_REFUSALS:
                known.add((played.stack, call.function, request.action))
                continue
            refused.append(
                f"{call.function} ({function.role_id}): {call.service}.{call.operation} needs {request}; "
                f"its statements:\n{_shown(statements)}"
            )
    assert not refused, "\n".join(dict.fromkeys(refused))
    fixed = {key for key in KNOWN_REFUSALS if key[0] == played.stack} - known
    assert not fixed, f"no longer refused, remove from KNOWN_REFUSALS: {sorted(fixed)}"


def test_what_aws_does_for_the_stack_is_allowed_by_the_role_it_acts_as(played: Played) -> None:
    refused = []
    for made in played.deployment.service_calls:
        statements = played.statements(made.principal)
        if not allowed(statements, made.request):
            refused.append(
                f"{made.why}: {made.principal} needs {made.request}; its statements:\n{_shown(statements)}"
            )
    assert not refused, "\n".join(dict.fromkeys(refused))
    principals = {made.principal.rstrip("0123456789ABCDEF") for made in played.deployment.service_calls}
    assert {"RunsRole", "SchedulingRole", "WorkflowsRole"} <= principals


def _role_key(deployment: Deployment, role_id: str) -> str:
    for function in deployment.functions.values():
        if function.role_id == role_id:
            return function.name
    return role_id


def _excused(key: str, action: str, api_called: set[str]) -> tuple[str, str] | None:
    """The entry of :data:`NOT_CALLED` that excuses ``action`` granted to ``key`` (``None``: none)."""
    from fnmatch import fnmatchcase

    if key == "mcp":  # the MCP front door makes the api function's operations, with its grants
        if action in api_called:
            return ("mcp", action)
        key = "api"
    for who, pattern in NOT_CALLED:
        function = not key[:1].isupper()
        applies = who == key or (who == "*" and function) or (who[:1].isupper() and key.startswith(who))
        if applies and fnmatchcase(action, pattern):
            return (who, pattern)
    return None


def test_every_granted_action_is_called_or_said_why(played: Played) -> None:
    """Each action of each statement, on the statement's resources: some recorded request used it, or
    :data:`NOT_CALLED` says why none does (and an entry there whose grants are all used is stale)."""
    from fnmatch import fnmatchcase

    deployment = played.deployment
    used: dict[str, list[IamRequest]] = {}
    for call in deployment.calls:
        role_id = deployment.functions[call.function].role_id
        used.setdefault(role_id, []).extend(deployment.iam_requests(call))
    for made in deployment.service_calls:
        used.setdefault(made.principal, []).append(made.request)
    api_called = {r.action for r in used.get(deployment.functions["api"].role_id, [])}
    roles = [
        lid
        for lid in deployment.names.of_type("AWS::IAM::Role")
        if not managed_policies(deployment.names, lid)  # API Gateway's logging role: AWS's own policy
    ]
    unexplained = []
    excused: dict[tuple[str, str], bool] = {}
    for role_id in roles:
        key = _role_key(deployment, role_id)
        for statement in played.statements(role_id):
            if statement.get("Effect") != "Allow":
                continue
            resources = [str(r) for r in _as_list(statement["Resource"])]
            for action in _as_list(statement["Action"]):
                called = any(
                    fnmatchcase(request.action.lower(), str(action).lower())
                    and any(fnmatchcase(request.resource, r) for r in resources)
                    for request in used.get(role_id, [])
                )
                entry = _excused(key, str(action), api_called)
                if entry is not None:
                    excused[entry] = excused.get(entry, False) or not called
                elif not called:
                    unexplained.append(
                        f"{key} ({role_id}) is granted {action} on {resources}, which no call used"
                    )
    assert not unexplained, "\n".join(unexplained)
    stale = [
        f"NOT_CALLED[{entry}] excuses grants that calls all use: {NOT_CALLED[entry]}"
        for entry, needed in excused.items()
        if not needed and entry[0] != "mcp"
    ]
    assert not stale, "\n".join(stale)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _task_functions(states: dict[str, Any]) -> set[str]:
    """The ``FunctionName`` of every task of a machine's states (branches of a Parallel included)."""
    found: set[str] = set()
    for state in states.values():
        if state.get("Type") == "Task":
            found.add(str(state.get("Arguments", state.get("Parameters", {})).get("FunctionName")))
        for branch in state.get("Branches", []):
            found |= _task_functions(branch["States"])
    return found


def test_the_workflow_machines_the_code_makes_run_as_the_workflows_role_and_invoke_its_function(
    played: Played,
) -> None:
    """Each state machine the code creates or updates (a workflow's) is given the workflows' role, and its
    tasks invoke the workflow function and no other: what that role may invoke."""
    deployment = played.deployment
    environment = deployment.functions["api"].environment
    made = [
        call
        for call in deployment.calls
        if call.service == "stepfunctions" and call.operation in ("CreateStateMachine", "UpdateStateMachine")
    ]
    assert made
    for call in made:
        assert call.params["roleArn"] == environment["PARLEY_WORKFLOW_ROLE_ARN"], call
        functions = _task_functions(json.loads(call.params["definition"])["States"])
        assert functions == {environment["PARLEY_WORKFLOW_FUNCTION_ARN"]}, (call.function, functions)
