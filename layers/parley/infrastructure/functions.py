"""The Lambda functions, written once: the CDK app deploys each, the local runtime runs the same handlers.

Pure data (no CDK, no AWS): a function is a handler file under ``functions/<name>/`` whose module-level
``handler`` is the Lambda entry, plus the sizes it runs with. Later issues append the scheduler-driven
functions (``deliver``, ``read-replies``, …) here, and nowhere else.

Every function gets the same environment (the table, the state machine, the scheduler's group, role and
target), named by the ``*_VARIABLE`` constants below:
``parley.aws.environment.runtime_from_environment`` builds the ports from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

#: The module-level name every ``functions/<name>/handler.py`` binds its Lambda entry to.
ENTRY_ATTRIBUTE: Final = "handler"

#: The run's state machine (``parley.infrastructure.state_machine``): ``Waits`` starts executions on it.
STATE_MACHINE_ARN_VARIABLE: Final = "PARLEY_STATE_MACHINE_ARN"
#: The EventBridge Scheduler group every schedule of the stage is created in.
SCHEDULE_GROUP_VARIABLE: Final = "PARLEY_SCHEDULE_GROUP"
#: The role EventBridge Scheduler assumes to invoke the timer function (passed on each schedule).
SCHEDULER_ROLE_ARN_VARIABLE: Final = "PARLEY_SCHEDULER_ROLE_ARN"
#: The target of every schedule: the timer function.
TIMER_FUNCTION_ARN_VARIABLE: Final = "PARLEY_TIMER_FUNCTION_ARN"
#: The timer queue: work due within 15 minutes, as SQS messages with per-message timers, which the timer
#: function consumes (an event source mapping).
TIMER_QUEUE_URL_VARIABLE: Final = "PARLEY_TIMER_QUEUE_URL"
#: The queue a schedule's event goes to once EventBridge Scheduler gives up on its target.
SCHEDULE_DEAD_LETTER_ARN_VARIABLE: Final = "PARLEY_SCHEDULE_DEAD_LETTER_ARN"
#: The bucket that keeps content too large for a table item (outputs, tool results; up to 1 MiB each).
CONTENT_BUCKET_VARIABLE: Final = "PARLEY_CONTENT_BUCKET"
#: The function reasoning runs work in (``http-api.md``, "Reasoning runs"): the api function invokes it
#: (asynchronously) for each reasoning run it starts.
REASON_FUNCTION_ARN_VARIABLE: Final = "PARLEY_REASON_FUNCTION_ARN"
#: How long ``run_definition`` waits for a reasoning run to end before answering ``started`` (25 s by
#: default; on AWS at most the API's integration timeout less 5 s).
RUN_WAIT_SECONDS_VARIABLE: Final = "PARLEY_RUN_WAIT_SECONDS"
DEFAULT_RUN_WAIT_SECONDS: Final = 25.0
#: Workflows (workflow-format.md, "On AWS"): the start of every workflow state machine's name, the stage's
#: own (``parley-<stage>-``), so that the grants on the stage's workflow machines reach no other stage's.
WORKFLOW_PREFIX_VARIABLE: Final = "PARLEY_WORKFLOW_PREFIX"
#: The one role every workflow state machine runs as (passed on each CreateStateMachine): it may invoke the
#: workflow function and nothing else.
WORKFLOW_ROLE_ARN_VARIABLE: Final = "PARLEY_WORKFLOW_ROLE_ARN"
#: The workflow function, which every workflow state machine's tasks invoke (put in place of the compiled
#: machine's placeholder, ``parley.workflow.engine.ENTRY_FUNCTION``).
WORKFLOW_FUNCTION_ARN_VARIABLE: Final = "PARLEY_WORKFLOW_FUNCTION_ARN"
#: The prefix of the connections' secrets in Secrets Manager, ``parley/<stage>/connections/`` (issue 32;
#: ``parley.connections.secrets``): given to the functions that keep or read them.
CONNECTION_SECRETS_PREFIX_VARIABLE: Final = "PARLEY_CONNECTION_SECRETS_PREFIX"

# Who may do what with the run's state machine and the scheduler: the CDK stack grants exactly these,
# and the local runtime refuses the rest, so that a missing grant fails a local test, not a deploy.
# The mcp function (the MCP front door) makes the api function's operations through the same services,
# so it holds each grant the api function holds.
#: StartExecution: a run that starts waiting (run_definition, api), an agent run that asks a person
#: (reason: each request its own execution). A run a workflow calls has none (its ending answers the
#: workflow's token), so the workflow function starts none.
MAY_START_RUNS: Final = frozenset({"api", "mcp", "reason"})
#: SendTaskSuccess, once the ending is written: answer and cancel (api), an ending that raced ahead of the
#: token (wait), expiry (timer), a notification's last attempt (timer). Never settle: it runs after the
#: wait is over.
MAY_END_WAITS: Final = frozenset({"api", "mcp", "wait", "timer"})
#: CreateSchedule/DeleteSchedule (and passing the scheduler's role), and the timer queue: expiries and
#: first attempts (api), the next attempt, the check for a lost one, the next read (timer), a reasoning
#: run's request's expiry and its own backstop (reason).
MAY_SCHEDULE: Final = frozenset({"api", "mcp", "timer", "reason", "workflow"})
#: lambda:InvokeFunction (asynchronous) of the timer function: work due at once, such as a delivery's
#: first attempt, goes to the timer directly instead of through a schedule (60-second precision).
MAY_RUN_NOW: Final = frozenset({"api", "mcp", "timer", "workflow"})
#: secretsmanager:GetSecretValue on the tool servers' header secrets: execute and call (api),
#: deliveries, reads and tellings (timer), a reasoning run's tool calls (reason).
MAY_READ_TOOL_SECRETS: Final = frozenset({"api", "mcp", "timer", "reason", "workflow"})
#: Read and write the content bucket.
MAY_KEEP_CONTENT: Final = frozenset({"api", "mcp", "timer", "settle", "reason", "workflow"})
#: lambda:InvokeFunction (asynchronous) of the reason function: a reasoning run started (api, workflow),
#: an agent run's next step once its request was answered (api) or expired (timer), or by the backstop
#: (settle).
MAY_REASON: Final = frozenset({"api", "mcp", "workflow", "timer", "settle"})
#: bedrock:InvokeModel (and …WithResponseStream) on the models the stage names: the model calls.
MAY_CALL_MODELS: Final = frozenset({"reason"})
#: bedrock:ListFoundationModels, when the stage names Bedrock models: list_models reads Bedrock's list.
MAY_LIST_MODELS: Final = frozenset({"api", "mcp"})
#: secretsmanager:GetSecretValue on the model providers' key secrets: the model calls (reason) and the
#: providers' model lists of list_models (api).
MAY_READ_MODEL_SECRETS: Final = frozenset({"api", "mcp", "reason", "workflow"})
#: secretsmanager:CreateSecret, PutSecretValue, GetSecretValue and DeleteSecret on the connections'
#: secrets (issue 32): a connection's headers kept when it is added and forgotten when it is removed, its
#: OAuth tokens kept and refreshed, and read by search, introspect, execute and dry_run (api).
MAY_KEEP_CONNECTION_SECRETS: Final = frozenset({"api", "mcp"})
#: secretsmanager:GetSecretValue and PutSecretValue on the connections' secrets: a reasoning run's tool
#: calls (reason) read them, and put back an OAuth token they refreshed (``parley.connections.oauth``).
MAY_READ_CONNECTION_SECRETS: Final = frozenset({"reason"})

#: Workflows (workflow-format.md, "On AWS"): create a workflow's state machine and publish its versions
#: (passing the workflows' role), start, stop and read their executions: a workflow run started or
#: cancelled (api), a workflow a workflow calls (workflow), a workflow's schedule falling due (timer).
MAY_RUN_WORKFLOWS: Final = frozenset({"api", "mcp", "timer", "workflow"})
#: SendTaskSuccess/SendTaskFailure on a workflow's call: a called run's ending answers the workflow that
#: waits for it, wherever that ending is written (an answer or a cancel: api; an expiry: timer; an
#: answered request settled: settle; a reasoning run's end: reason; a call that ended at once, or a called
#: workflow's end: workflow).
MAY_ANSWER_CALLS: Final = frozenset({"api", "mcp", "timer", "settle", "reason", "workflow"})

#: The API's JWT authorizer (``parley.authorizer``): it checks tokens and nothing else.
AUTHORIZER: Final = "authorizer"
#: Functions that build no runtime (``parley.aws.environment.runtime_from_environment``): every other function
#: reads and writes the table and reads the operator configuration's parameter; these do neither.
WITHOUT_RUNTIME: Final = frozenset({AUTHORIZER})


@dataclass(frozen=True)
class FunctionDefinition:
    """One Lambda function.

    ``handler`` is the entry file relative to the repository root, such as ``functions/api/handler.py``;
    its folder is the function's whole code asset (the core package comes from the layer).
    """

    name: str
    handler: str
    memory_mb: int
    timeout_s: int
    description: str

    @property
    def asset_dir(self) -> str:
        """The folder shipped as the function's code, relative to the repository root."""
        return str(PurePosixPath(self.handler).parent)

    @property
    def lambda_handler(self) -> str:
        """The Lambda ``Handler`` setting: ``<module>.<attribute>`` inside :attr:`asset_dir`."""
        return f"{PurePosixPath(self.handler).stem}.{ENTRY_ATTRIBUTE}"


FUNCTIONS: Final[tuple[FunctionDefinition, ...]] = (
    FunctionDefinition(
        name="api",
        handler="functions/api/handler.py",
        memory_mb=1024,
        # A run of a function with `call` may take up to 70 seconds (interaction-format.md, "Bounds"): the
        # API's integration waits 80 (cdk/parley_cdk/api.py, INTEGRATION_TIMEOUT_SECONDS; above API
        # Gateway's default 29, a quota raised per account, docs/deploy.md), and the function may run 5
        # more so that what it started is written even when the client was told 504.
        timeout_s=85,
        description="Parley HTTP API: every /v1 route (spec http-api.md)",
    ),
    FunctionDefinition(
        name="mcp",
        handler="functions/mcp/handler.py",
        # The MCP front door: every operation of the api function as a tool, so the same sizes (a tool
        # call of run_definition waits as the HTTP route does).
        memory_mb=1024,
        timeout_s=85,
        description="Parley MCP front door: POST /mcp and /v1/orgs/{org}/playbooks/{playbook}/mcp",
    ),
    FunctionDefinition(
        name="wait",
        handler="functions/wait/handler.py",
        memory_mb=512,
        # Keeps a task token on its request item (one conditional write, maybe one SendTask call).
        timeout_s=30,
        description="Parley wait: keeps a waiting run's task token on its request",
    ),
    FunctionDefinition(
        name="settle",
        handler="functions/settle/handler.py",
        memory_mb=512,
        timeout_s=30,
        description="Parley settle: writes a run's ending once its wait is over",
    ),
    FunctionDefinition(
        name="timer",
        handler="functions/timer/handler.py",
        # Timed work: deliveries, reads of conversations and tellings (tool calls of up to 30 seconds),
        # expiries. Most of its time is spent waiting for the tool server, billed by the GB-second, so
        # it has the memory it needs with margin and no more: a process that delivers, reads 40 times,
        # refuses a reply and tells the party, then takes an answer peaks at 99 MB resident
        # (`make bench`, benchmarks/timer_read.py; Lambda's runtime adds a little). Its CPU share is
        # 256/1769 of a vCPU: a read's 47 ms of CPU take about 0.33 s, and a cold environment's first work
        # (1 s of CPU, the tool client's imports) about 7 s.
        memory_mb=256,
        timeout_s=120,
        description="Parley timer: runs timed work when its schedule fires (expiries)",
    ),
    FunctionDefinition(
        name="reason",
        handler="functions/reason/handler.py",
        # A run renders its prompt, calls its model (60 s plus 25 ms a token of max_output_tokens, up to
        # 1,660 s at 64,000; the longest timeout) and checks a JSON answer of up to 1 MiB. Most of its
        # time is spent waiting for the model, billed by the GB-second, so it has the memory it needs with
        # a clear margin and no more (`make bench`, benchmarks/reason_memory.py): a process that imports
        # this handler peaks at 66 MB resident for a text run, 86 MB checking a JSON answer of
        # 1,040,000 bytes, 69 MB for an agent run's two steps, 104 MB with two MCP tool calls, 114 MB
        # reading an 800 KB tool result, and 130 MB doing all of these in turn; with Lambda's runtime
        # (30-60 MB) about 190 MB. Memory alone would allow 512 MB; it has 1,024 MB for the CPU that comes
        # with it, since a person often waits on a run's first step: at 1024/1769 of a vCPU a step's CPU
        # (7 ms for a text answer, 14 ms for an agent step, 50-130 ms with MCP tool calls, 0.3 s for the
        # 1 MiB JSON check) takes 1.7 times as long, 0.01-0.55 s, and a cold environment's first run
        # (0.5-1.1 s of CPU: the handler's import is 5 ms, the first run loads boto3's clients, httpx and
        # the MCP client) about 0.8-2 s, where 512 MB would make them 0.03-1.1 s and 1.6-4 s for about
        # $0.03 less per 1,000 agent runs (`make bench`: $0.139 per 1,000 agent runs asking once at
        # 1,024 MB, $0.111 at 512, $0.167 at the 1,536 MB it had).
        memory_mb=1024,
        timeout_s=900,
        description="Parley reason: a reasoning run's model call, its checked answer and its record",
    ),
    FunctionDefinition(
        name="workflow",
        handler="functions/workflow/handler.py",
        # A workflow's entry (workflow-format.md, "Calling a function"): starts a called run as
        # run_definition does (an interaction run that asks a system waits up to 70 s for its call) and
        # writes a workflow run's ending.
        memory_mb=1024,
        timeout_s=85,
        description="Parley workflow: starts the runs a workflow calls and writes its ending",
    ),
    FunctionDefinition(
        name=AUTHORIZER,
        handler="functions/authorizer/handler.py",
        # CPU comes with memory: the first token of an environment imports PyJWT and cryptography and
        # fetches the issuer's keys.
        memory_mb=512,
        # API Gateway waits 10 seconds for an authorizer at most.
        timeout_s=10,
        description="Parley authorizer: checks the bearer JWT of every API request",
    ),
)


def function_named(name: str) -> FunctionDefinition:
    """The definition called ``name``; ``KeyError`` when there is none."""
    for definition in FUNCTIONS:
        if definition.name == name:
            return definition
    raise KeyError(name)
