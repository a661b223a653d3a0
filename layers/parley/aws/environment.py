"""``runtime_from_environment``: a deployed function's runtime, built from the variables the CDK stack
sets (``parley.infrastructure.functions``); the AWS clients are made on first use."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from parley.clock import SystemClock
from parley.definitions.store import DynamoDefinitionStore
from parley.ports.runtime import LazyClient, Runtime

if TYPE_CHECKING:
    from parley.config import OperatorConfig
    from parley.connections.secrets import ConnectionSecrets
    from parley.ports.content import ContentStore
    from parley.ports.reasoner import Reasoner
    from parley.ports.waiting import Scheduler, Waits
    from parley.ports.workflows import WorkflowEngine


def runtime_from_environment(environ: Mapping[str, str] | None = None) -> Runtime:
    """The runtime of a deployed function: the table named by ``PARLEY_TABLE``, the system clock, the
    operator configuration (:func:`operator_from_environment`), and the waits, workflows and scheduler
    adapters of ``PARLEY_STATE_MACHINE_ARN``, ``PARLEY_WORKFLOW_PREFIX``/``…_ROLE_ARN``/``…_FUNCTION_ARN``
    and ``PARLEY_SCHEDULE_GROUP``/``…_ROLE_ARN``/``PARLEY_TIMER_FUNCTION_ARN`` (each left out when its
    variables are not set). Every AWS client is made on its first call: the mcp function's first
    requests need no DynamoDB, and most events neither Step Functions nor the scheduler (a client costs
    its service's model, tens of milliseconds of a cold start); the waits and the workflows share one."""
    from parley.config import EnvironmentSettings

    env = os.environ if environ is None else environ
    settings = EnvironmentSettings.from_environment(env)
    stepfunctions = lazy_client("stepfunctions")
    return Runtime(
        definitions=DynamoDefinitionStore(lazy_client("dynamodb"), settings.table_name),
        clock=SystemClock(),
        operator=operator_from_environment(env),
        waits=waits_from_environment(env, client=stepfunctions),
        workflows=workflows_from_environment(env, client=stepfunctions),
        scheduler=scheduler_from_environment(env),
        content=content_from_environment(env),
        reasoner=reasoner_from_environment(env),
        run_wait_seconds=run_wait_from_environment(env),
        connection_secrets=connection_secrets_from_environment(env),
    )


def connection_secrets_from_environment(environ: Mapping[str, str]) -> ConnectionSecrets:
    """Secrets Manager under ``PARLEY_CONNECTION_SECRETS_PREFIX`` (``parley/<stage>/connections/``); a
    function without it keeps and reads no connection secret (``parley.connections.secrets``)."""
    from parley.connections.secrets import NoConnectionSecrets, secrets_from_environment

    found = secrets_from_environment(environ, lazy_client("secretsmanager"))
    return found if found is not None else NoConnectionSecrets()


def reasoner_from_environment(environ: Mapping[str, str]) -> Reasoner | None:
    """The ``reason`` function of ``PARLEY_REASON_FUNCTION_ARN``; ``None`` without it (the runs then
    work within the call that starts them)."""
    from parley.aws.reasoner import LambdaReasoner
    from parley.infrastructure.functions import REASON_FUNCTION_ARN_VARIABLE

    arn = environ.get(REASON_FUNCTION_ARN_VARIABLE)
    return LambdaReasoner(lazy_client("lambda"), arn) if arn else None


def run_wait_from_environment(environ: Mapping[str, str]) -> float:
    """``PARLEY_RUN_WAIT_SECONDS`` (25 s by default); a value that is not a number of 0 or more is a
    deployment mistake, reported at start."""
    from parley.infrastructure.functions import DEFAULT_RUN_WAIT_SECONDS, RUN_WAIT_SECONDS_VARIABLE

    text = environ.get(RUN_WAIT_SECONDS_VARIABLE)
    if text is None or not text.strip():
        return DEFAULT_RUN_WAIT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 900:
        raise ValueError(f"{RUN_WAIT_SECONDS_VARIABLE} is a number of seconds from 0 to 900, not {text!r}")
    return seconds


def content_from_environment(environ: Mapping[str, str]) -> ContentStore | None:
    """The content bucket of ``PARLEY_CONTENT_BUCKET``; ``None`` without it."""
    from parley.aws.content import S3ContentStore
    from parley.infrastructure.functions import CONTENT_BUCKET_VARIABLE

    bucket = environ.get(CONTENT_BUCKET_VARIABLE)
    return S3ContentStore(lazy_client("s3"), bucket) if bucket else None


def waits_from_environment(environ: Mapping[str, str], *, client: Any = None) -> Waits | None:
    """Step Functions ``Waits`` on ``PARLEY_STATE_MACHINE_ARN`` (through ``client``, else a lazy client of
    its own); ``None`` without it."""
    from parley.aws.stepfunctions import StepFunctionsWaits
    from parley.infrastructure.functions import STATE_MACHINE_ARN_VARIABLE

    arn = environ.get(STATE_MACHINE_ARN_VARIABLE)
    if not arn:
        return None
    return StepFunctionsWaits(client if client is not None else lazy_client("stepfunctions"), arn)


def workflows_from_environment(environ: Mapping[str, str], *, client: Any = None) -> WorkflowEngine | None:
    """Workflows on Step Functions (``parley.aws.workflows``): state machines named from
    ``PARLEY_WORKFLOW_PREFIX``, running as ``PARLEY_WORKFLOW_ROLE_ARN``, invoking
    ``PARLEY_WORKFLOW_FUNCTION_ARN`` (through ``client``, else a lazy client of its own); ``None`` unless
    all three are set."""
    from parley.aws.workflows import StepFunctionsWorkflows
    from parley.infrastructure.functions import (
        WORKFLOW_FUNCTION_ARN_VARIABLE,
        WORKFLOW_PREFIX_VARIABLE,
        WORKFLOW_ROLE_ARN_VARIABLE,
    )

    prefix = environ.get(WORKFLOW_PREFIX_VARIABLE)
    role = environ.get(WORKFLOW_ROLE_ARN_VARIABLE)
    function = environ.get(WORKFLOW_FUNCTION_ARN_VARIABLE)
    if not (prefix and role and function):
        return None
    return StepFunctionsWorkflows(
        client if client is not None else lazy_client("stepfunctions"),
        prefix=prefix,
        role_arn=role,
        workflow_function_arn=function,
    )


def scheduler_from_environment(environ: Mapping[str, str]) -> Scheduler | None:
    """EventBridge Scheduler on ``PARLEY_SCHEDULE_GROUP``, calling ``PARLEY_TIMER_FUNCTION_ARN`` as
    ``PARLEY_SCHEDULER_ROLE_ARN`` (work due now: that function invoked directly), dead letters to
    ``PARLEY_SCHEDULE_DEAD_LETTER_ARN``; ``None`` unless the first three are set."""
    from parley.aws.eventbridge import EventBridgeScheduler
    from parley.infrastructure.functions import (
        SCHEDULE_DEAD_LETTER_ARN_VARIABLE,
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
        TIMER_QUEUE_URL_VARIABLE,
    )

    group = environ.get(SCHEDULE_GROUP_VARIABLE)
    role = environ.get(SCHEDULER_ROLE_ARN_VARIABLE)
    target = environ.get(TIMER_FUNCTION_ARN_VARIABLE)
    if not (group and role and target):
        return None
    return EventBridgeScheduler(
        lazy_client("scheduler"),
        group,
        target,
        role,
        functions=lazy_client("lambda"),
        dead_letter_arn=environ.get(SCHEDULE_DEAD_LETTER_ARN_VARIABLE) or None,
        queue=lazy_client("sqs"),
        queue_url=environ.get(TIMER_QUEUE_URL_VARIABLE) or None,
    )


def operator_from_environment(environ: Mapping[str, str]) -> OperatorConfig:
    """The operator configuration of a deployed function: the SSM parameter named by
    ``PARLEY_OPERATOR_CONFIG_PARAMETER``, followed as the operator changes it (read again at most once a
    minute, ``parley.config.LiveOperatorConfig``); without that variable, ``PARLEY_OPERATOR_CONFIG``.

    The parameter is first read when the configuration is first used, not when the runtime is built: the
    events of the wait, settle and timer functions mostly need none, and reading it cost their first
    event an SSM call (issue 20). An event that needs it fails as before when it cannot be read."""
    from parley.config import (
        OPERATOR_CONFIG_PARAMETER_VARIABLE,
        LiveOperatorConfig,
        OperatorConfigParameter,
        operator_config_from_environment,
    )

    name = environ.get(OPERATOR_CONFIG_PARAMETER_VARIABLE)
    if not name:
        return operator_config_from_environment(environ)
    return LiveOperatorConfig(OperatorConfigParameter(lazy_client("ssm"), name, environ=environ))


def lazy_client(service: str) -> Any:
    """A boto3 client of ``service`` made on its first call (:class:`~parley.ports.runtime.LazyClient`)."""
    return LazyClient(service)
