"""One stage of Parley: the table and the content bucket, the operator configuration, the token issuer,
the layer and functions, the run's state machine and the scheduler, reasoning runs and their model calls,
the workflows' role and grants, the dead-letter queues, the API and the alarms, wired with
least-privilege grants (``parley.infrastructure.functions``: ``MAY_*``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

from aws_cdk import ArnFormat, CfnElement, CfnOutput, Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from constructs import Construct

from parley.config import OPERATOR_CONFIG_PARAMETER_VARIABLE
from parley.infrastructure.functions import (
    AUTHORIZER,
    CONNECTION_SECRETS_PREFIX_VARIABLE,
    CONTENT_BUCKET_VARIABLE,
    MAY_ANSWER_CALLS,
    MAY_CALL_MODELS,
    MAY_END_WAITS,
    MAY_KEEP_CONNECTION_SECRETS,
    MAY_KEEP_CONTENT,
    MAY_LIST_MODELS,
    MAY_READ_CONNECTION_SECRETS,
    MAY_READ_MODEL_SECRETS,
    MAY_READ_TOOL_SECRETS,
    MAY_REASON,
    MAY_RUN_NOW,
    MAY_RUN_WORKFLOWS,
    MAY_SCHEDULE,
    MAY_START_RUNS,
    REASON_FUNCTION_ARN_VARIABLE,
    RUN_WAIT_SECONDS_VARIABLE,
    SCHEDULE_DEAD_LETTER_ARN_VARIABLE,
    SCHEDULE_GROUP_VARIABLE,
    SCHEDULER_ROLE_ARN_VARIABLE,
    STATE_MACHINE_ARN_VARIABLE,
    TIMER_FUNCTION_ARN_VARIABLE,
    TIMER_QUEUE_URL_VARIABLE,
    WITHOUT_RUNTIME,
)
from parley.infrastructure.table import TABLE_NAME_VARIABLE
from parley_cdk.api import BASE_PATH, HttpApi, run_wait_variable
from parley_cdk.auth import Authentication
from parley_cdk.compute import Compute
from parley_cdk.configuration import OperatorConfiguration
from parley_cdk.data import Data
from parley_cdk.dead_letters import DeadLetters
from parley_cdk.models import MODEL_ACTIONS, model_arns, routed_model, routed_model_finding
from parley_cdk.monitoring import Alarms
from parley_cdk.nag import accept
from parley_cdk.options import (
    DeploymentOptions,
    connection_secrets_prefix,
    default_model_secrets,
    default_tool_server_secrets,
)
from parley_cdk.settings import StageSettings
from parley_cdk.timer_queue import TimerQueue
from parley_cdk.waiting import RunStateMachine, Scheduling, function_arn, state_machine_arn
from parley_cdk.workflows import WorkflowMachines

#: Asynchronous invocations of the timer: Lambda tries an event this many more times, for at most
#: this long, before it goes to the timer's failure queue.
TIMER_RETRY_ATTEMPTS: Final = 2
TIMER_MAX_EVENT_AGE: Final = Duration.hours(6)
#: Asynchronous invocations of the reason function: a run is never run again by Lambda (a failed run
#: has written its own ending, or is for a person to look at), and a run that could not start within
#: 15 minutes (throttled) is past its own bound of 10 (reasoning-format.md): both go to the reason
#: function's failure queue instead. A second invocation would change nothing anyway: the run's
#: ending is a conditional write.
REASON_RETRY_ATTEMPTS: Final = 0
REASON_MAX_EVENT_AGE: Final = Duration.minutes(15)


class ParleyStack(Stack):
    """Everything of one stage.

    ``repository`` is where ``functions/``, ``layers/`` and ``pyproject.toml`` are; ``options`` what the
    deployment chose through context (``parley_cdk.options``); ``environment`` is added to every
    function's own (the table, the bucket, the state machine, the scheduler, the configuration's
    parameter, the token issuer: see ``parley.infrastructure.functions``; the Powertools service name).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StageSettings,
        repository: Path,
        options: DeploymentOptions | None = None,
        environment: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description=f"Parley ({settings.name})",
            termination_protection=settings.retain_data,
            **kwargs,
        )
        options = options or DeploymentOptions()
        self.settings = settings
        self.options = options
        self.data = Data(self, "Data", settings=settings)
        self.configuration = OperatorConfiguration(
            self, "OperatorConfig", settings=settings, text=options.operator_config
        )
        self.authentication = Authentication(self, "Auth", settings=settings, options=options)
        self.scheduling = Scheduling(self, "Scheduling", settings=settings)
        self.dead_letters = DeadLetters(self, "DeadLetters", settings=settings)
        self.timer_queue = TimerQueue(self, "TimerQueue", settings=settings)
        self.timer_arn = function_arn(self, settings.resource_name("timer"))
        self.reason_arn = function_arn(self, settings.resource_name("reason"))
        self.workflows = WorkflowMachines(
            self,
            "Workflows",
            settings=settings,
            function_arn=function_arn(self, settings.resource_name("workflow")),
        )
        self.compute = Compute(
            self,
            "Compute",
            settings=settings,
            repository=repository,
            environment={
                **(environment or {}),
                TABLE_NAME_VARIABLE: self.data.table.table_name,
                CONTENT_BUCKET_VARIABLE: self.data.content.bucket_name,
                OPERATOR_CONFIG_PARAMETER_VARIABLE: self.configuration.name,
                STATE_MACHINE_ARN_VARIABLE: state_machine_arn(self, settings),
                SCHEDULE_GROUP_VARIABLE: self.scheduling.group_name,
                SCHEDULER_ROLE_ARN_VARIABLE: self.scheduling.role.role_arn,
                TIMER_FUNCTION_ARN_VARIABLE: self.timer_arn,
                TIMER_QUEUE_URL_VARIABLE: self.timer_queue.queue.queue_url,
                SCHEDULE_DEAD_LETTER_ARN_VARIABLE: self.dead_letters.schedule_failures.queue_arn,
                **self.authentication.environment,
            },
        )
        functions = self.compute.functions
        self.runs = RunStateMachine(
            self,
            "Runs",
            settings=settings,
            wait=functions["wait"],
            settle=functions["settle"],
        )
        self._grant_runtime()
        self._grant_waiting()
        self._grant_running_now()
        self._grant_tool_secrets()
        self._grant_content()
        self._grant_reasoning()
        self._grant_models()
        self._grant_model_secrets()
        self._grant_connection_secrets()
        self._grant_workflows()
        self._catch_timer_failures()
        self._catch_reason_failures()
        self.api = HttpApi(
            self,
            "Api",
            settings=settings,
            handler=functions["api"],
            authorizer=functions[AUTHORIZER],
            mcp=functions["mcp"],
        )
        self.authentication.serve_inbox(functions["api"], self.api.rest_api)
        self.alarms = Alarms(
            self,
            "Alarms",
            settings=settings,
            functions=functions,
            dead_letter_queues={
                "timer-failures": self.dead_letters.timer_failures,
                "schedule-dead-letters": self.dead_letters.schedule_failures,
                "timer-queue-failures": self.timer_queue.failures,
                "reason-failures": self.dead_letters.reason_failures,
            },
            state_machine=self.runs.state_machine,
            email=options.alarm_email,
        )
        self._outputs()

    # -- grants -----------------------------------------------------------------------------------------

    def _runtime_functions(self) -> dict[str, lambda_.Function]:
        return {n: f for n, f in self.compute.functions.items() if n not in WITHOUT_RUNTIME}

    def _grant_runtime(self) -> None:
        """Every function that builds a runtime reads and writes the one table and its indexes, and reads
        the operator configuration's parameter; the authorizer does neither."""
        table = self.data.table
        for function in self._runtime_functions().values():
            table.grant_read_write_data(function)
            self.configuration.allow_reading(function)
        logical_id = self.get_logical_id(cast(CfnElement, table.node.default_child))
        accept(
            self.compute,
            f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/index/*]",
            "The grant covers this table's own indexes (a Query on gsi1 serves every newest-first list): "
            "the wildcard stands for an index name under this one table's ARN, nothing wider.",
        )

    def _grant_waiting(self) -> None:
        """Only the functions that must (``parley.infrastructure.functions``: ``MAY_*``, which the local
        runtime enforces too):

        - ``api`` starts a run's execution (run_definition), and ``reason`` a reasoning run's that asks a
          person (the state machine's role invokes ``reason`` again when the run resumes);
        - ``api`` (answer, cancel), ``wait`` (a request that ended before its token was kept) and
          ``timer`` (expiry) end waits through their tokens; ``settle`` runs after the wait and may not;
        - ``api``, ``timer`` and ``reason`` (a request's expiry, the run's backstop) make and forget
          schedules, passing the schedules' role and no other, and put work due within 15 minutes in the
          timer queue (the scheduler port's two paths), which the timer function consumes;
        - the schedules may invoke the timer function only, and put what they cannot deliver in their
          dead-letter queue.
        """
        functions = self.compute.functions
        for name in sorted(MAY_START_RUNS):
            self.runs.allow_starting(functions[name])
        for name in sorted(MAY_END_WAITS):
            self.runs.allow_ending_waits(functions[name])
        for name in sorted(MAY_SCHEDULE):
            self.scheduling.allow_scheduling(functions[name])
            self.timer_queue.allow_sending(functions[name])
            accept(
                self._role(name),
                "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:"
                f"schedule/{self.scheduling.group_name}/*]",
                "Each expiry, attempt and read is a one-time schedule named at run time: the wildcard "
                "stands for a schedule name inside this stage's own group, nothing wider.",
            )
        self.scheduling.allow_invoking(functions["timer"])
        self.timer_queue.consume_with(functions["timer"])
        self.dead_letters.allow_sending_schedule_failures(self.scheduling.role)

    def _grant_running_now(self) -> None:
        """``MAY_RUN_NOW``: invoke the timer (unqualified, by its name's ARN: the timer may invoke itself
        without a reference to its own resource)."""
        for name in sorted(MAY_RUN_NOW):
            self._role(name).add_to_principal_policy(
                iam.PolicyStatement(actions=["lambda:InvokeFunction"], resources=[self.timer_arn])
            )

    def _grant_tool_secrets(self) -> None:
        """``MAY_READ_TOOL_SECRETS``: ``GetSecretValue`` on the secrets the context names, by default
        those named under ``parley/<stage>/tool-servers/``."""
        patterns = self.options.tool_server_secrets or default_tool_server_secrets(self.settings.name)
        resources = [self.secret_arn(pattern) for pattern in patterns]
        for name in sorted(MAY_READ_TOOL_SECRETS):
            role = self._role(name)
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=resources)
            )
            for pattern in patterns:
                if "*" in pattern:
                    accept(
                        role,
                        f"AwsSolutions-IAM5[Resource::{self.secret_arn(pattern, shown=True)}]",
                        "Tool server header secrets: the secrets the deployment named by a pattern, by "
                        "default every secret under the stage's own prefix parley/<stage>/tool-servers/ "
                        "(and GetSecretValue only).",
                    )

    def secret_arn(self, pattern: str, *, shown: bool = False) -> str:
        """An ARN (kept) or a secret name (``*`` allowed) as a Secrets Manager ARN pattern; a plain name
        gets ``-??????`` for the random suffix Secrets Manager adds. ``shown``: as cdk-nag prints it."""
        if pattern.startswith("arn:"):
            return pattern
        name = pattern if "*" in pattern else f"{pattern}-??????"
        if shown:
            return f"arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:{name}"
        return self.format_arn(
            service="secretsmanager",
            resource="secret",
            resource_name=name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )

    def _grant_content(self) -> None:
        for name in sorted(MAY_KEEP_CONTENT):
            self.data.allow_keeping_content(self._role(name))
        logical_id = self.get_logical_id(cast(CfnElement, self.data.content.node.default_child))
        accept(
            self.compute,
            f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/*]",
            "Content is one object per key written at run time (parley.content): the wildcard stands for "
            "an object key inside this stage's own content bucket, and only GetObject/PutObject are given.",
        )

    def _grant_reasoning(self) -> None:
        """``MAY_REASON``: invoke the reason function (by its name's ARN, as the timer), and know it
        (``PARLEY_REASON_FUNCTION_ARN``) and how long to wait for a run's end (``PARLEY_RUN_WAIT_SECONDS``,
        checked against the API's integration timeout)."""
        run_wait = run_wait_variable()
        for name in sorted(MAY_REASON):
            function = self.compute.functions[name]
            function.add_environment(REASON_FUNCTION_ARN_VARIABLE, self.reason_arn)
            function.add_environment(RUN_WAIT_SECONDS_VARIABLE, run_wait)
            self._role(name).add_to_principal_policy(
                iam.PolicyStatement(actions=["lambda:InvokeFunction"], resources=[self.reason_arn])
            )

    def _grant_models(self) -> None:
        """``MAY_LIST_MODELS``: read Bedrock's list of foundation models, on every stage: the Lambda runtime
        always sets ``AWS_REGION``, so Bedrock is a configured provider wherever Parley runs on AWS
        (``parley.models.providers.settings``) and ``list_models`` reads its list.
        ``MAY_CALL_MODELS``: call the Bedrock models and inference profiles the stage names
        (``-c bedrock_models``; ``parley_cdk.models``), and none when it names none."""
        for name in sorted(MAY_LIST_MODELS):
            role = self._role(name)
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["bedrock:ListFoundationModels"], resources=["*"])
            )
            accept(
                role,
                "AwsSolutions-IAM5[Resource::*]",
                'list_models reads Bedrock\'s list of foundation models (http-api.md, "Models"): '
                "ListFoundationModels is an account-level action, which IAM scopes to no resource but *; "
                "it reads names and limits, nothing else.",
            )
        models = self.options.bedrock_models
        if not models:
            return
        resources = model_arns(self, models)
        for name in sorted(MAY_CALL_MODELS):
            role = self._role(name)
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=list(MODEL_ACTIONS), resources=resources)
            )
            for model in models:
                if routed_model(model) is not None:
                    accept(
                        role,
                        routed_model_finding(model),
                        f"The cross-region inference profile {model}, which the deployment named, sends "
                        "each call on to its foundation model in whichever of the profile's regions has "
                        "capacity, and IAM checks that call too: the wildcard is the region alone, for this "
                        "one model and the two invoke actions.",
                    )

    def _grant_model_secrets(self) -> None:
        """``MAY_READ_MODEL_SECRETS``: ``GetSecretValue`` on the secrets named under
        ``parley/<stage>/models/`` (providers' keys and gateways' headers)."""
        patterns = default_model_secrets(self.settings.name)
        resources = [self.secret_arn(pattern) for pattern in patterns]
        for name in sorted(MAY_READ_MODEL_SECRETS):
            role = self._role(name)
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=resources)
            )
            for pattern in patterns:
                accept(
                    role,
                    f"AwsSolutions-IAM5[Resource::{self.secret_arn(pattern, shown=True)}]",
                    "Model provider keys and gateway headers: every secret under the stage's own prefix "
                    "parley/<stage>/models/, which the operator configuration names by reference (and "
                    "GetSecretValue only).",
                )

    def _grant_connection_secrets(self) -> None:
        """The connections' secrets (issue 32), all under ``parley/<stage>/connections/``:
        ``MAY_KEEP_CONNECTION_SECRETS`` create, put, read and delete them (add, authorize, remove, and the
        tool routes); ``MAY_READ_CONNECTION_SECRETS`` read them and put back a refreshed OAuth token (a
        reasoning run's tool calls), never create or delete one. Each of
        those functions knows the prefix (``PARLEY_CONNECTION_SECRETS_PREFIX``); the others neither know
        it nor may touch a secret under it."""
        prefix = connection_secrets_prefix(self.settings.name)
        pattern = prefix + "*"
        resources = [self.secret_arn(pattern)]
        for names, actions in (
            (
                MAY_KEEP_CONNECTION_SECRETS,
                [
                    "secretsmanager:CreateSecret",
                    "secretsmanager:PutSecretValue",
                    "secretsmanager:GetSecretValue",
                    "secretsmanager:DeleteSecret",
                ],
            ),
            (
                MAY_READ_CONNECTION_SECRETS,
                ["secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue"],
            ),
        ):
            for name in sorted(names):
                self.compute.functions[name].add_environment(CONNECTION_SECRETS_PREFIX_VARIABLE, prefix)
                role = self._role(name)
                role.add_to_principal_policy(iam.PolicyStatement(actions=actions, resources=resources))
                accept(
                    role,
                    f"AwsSolutions-IAM5[Resource::{self.secret_arn(pattern, shown=True)}]",
                    "Connections' secrets: one per connection people add, named at run time under the "
                    "stage's own prefix parley/<stage>/connections/ (the org and the connection's name): "
                    "the wildcard stands for those names, nothing wider.",
                )

    def _grant_workflows(self) -> None:
        """Workflows (``parley_cdk.workflows``): the machines' role invokes the workflow function;
        ``MAY_RUN_WORKFLOWS`` make the machines and run them (passing that role); ``MAY_ANSWER_CALLS``
        answer their tasks' tokens; every function that builds a runtime knows the machines' prefix, the
        role and the workflow function (``PARLEY_WORKFLOW_*``)."""
        workflows = self.workflows
        workflows.allow_invoking(self.compute.functions["workflow"])
        workflows.tell_endings(self.compute.functions["workflow"])
        for function in self._runtime_functions().values():
            for name, value in workflows.environment.items():
                function.add_environment(name, value)
        for name in sorted(MAY_RUN_WORKFLOWS):
            workflows.allow_running(self._role(name))
        for name in sorted(MAY_ANSWER_CALLS):
            workflows.allow_answering(self._role(name))

    def _catch_timer_failures(self) -> None:
        self.compute.functions["timer"].configure_async_invoke(
            on_failure=destinations.SqsDestination(self.dead_letters.timer_failures),
            retry_attempts=TIMER_RETRY_ATTEMPTS,
            max_event_age=TIMER_MAX_EVENT_AGE,
        )

    def _catch_reason_failures(self) -> None:
        self.compute.functions["reason"].configure_async_invoke(
            on_failure=destinations.SqsDestination(self.dead_letters.reason_failures),
            retry_attempts=REASON_RETRY_ATTEMPTS,
            max_event_age=REASON_MAX_EVENT_AGE,
        )

    def _role(self, name: str) -> iam.IRole:
        role = self.compute.functions[name].role
        assert role is not None  # the factory gives every function its own role
        return role

    # -- outputs ----------------------------------------------------------------------------------------

    def _outputs(self) -> None:
        auth = self.authentication
        outputs: dict[str, tuple[str, str]] = {
            "ApiUrl": (self.api.rest_api.url_for_path(f"/{BASE_PATH}"), "The API's base URL"),
            "McpUrl": (self.api.rest_api.url_for_path("/mcp"), "The MCP front door (POST, bearer token)"),
            "InboxUrl": (self.api.rest_api.url_for_path("/inbox"), "The web inbox, where people answer"),
            "DocsUrl": (self.api.rest_api.url_for_path("/docs"), "The API's description, rendered"),
            "TokenIssuer": (auth.issuer, "The issuer whose JWTs the API accepts"),
            "OperatorConfigParameter": (self.configuration.name, "SSM parameter: principals, grants, tools"),
            "ToolServerSecrets": (
                ",".join(self.options.tool_server_secrets or default_tool_server_secrets(self.settings.name)),
                "The Secrets Manager secrets tool server headers may name",
            ),
            "ModelSecrets": (
                ",".join(default_model_secrets(self.settings.name)),
                "The Secrets Manager secrets model provider keys and gateway headers may name",
            ),
            "AlarmTopicArn": (self.alarms.topic.topic_arn, "Every alarm notifies this SNS topic"),
            "TimerFailuresQueueUrl": (self.dead_letters.timer_failures.queue_url, "Timer events that failed"),
            "ScheduleDeadLettersQueueUrl": (
                self.dead_letters.schedule_failures.queue_url,
                "Schedule events that could not reach the timer",
            ),
            "TimerQueueFailuresQueueUrl": (
                self.timer_queue.failures.queue_url,
                "Timer queue messages whose work failed five times",
            ),
            "ReasonFailuresQueueUrl": (
                self.dead_letters.reason_failures.queue_url,
                "Reasoning runs whose invocation failed or could not start in time",
            ),
            "TableName": (self.data.table.table_name, "The DynamoDB table"),
            "ContentBucketName": (self.data.content.bucket_name, "The S3 bucket of large content"),
            "StateMachineArn": (self.runs.state_machine.state_machine_arn, "Waiting runs' executions"),
            "WorkflowStateMachines": (
                self.workflows.names,
                "Every workflow's state machine (made at run time, one per workflow, not by the stack)",
            ),
        }
        if auth.user_pool is not None and auth.client is not None:
            outputs["UserPoolId"] = (auth.user_pool.user_pool_id, "The Cognito user pool of the API's users")
            outputs["UserPoolClientId"] = (
                auth.client.user_pool_client_id,
                "Its app client (the token audience)",
            )
        for output_id, (value, description) in outputs.items():
            CfnOutput(self, output_id, value=value, description=description)
