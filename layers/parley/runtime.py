"""The ports a handler works with, bundled so they can be injected (tests, the local server) or built
once from the environment (the Lambda function, on its first call).

Later issues add the model port here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from parley.clock import Clock, SystemClock
from parley.definitions.service import Checker, DefinitionService
from parley.definitions.store import DefinitionStore, DynamoDefinitionStore
from parley.documents.definition import check_source

if TYPE_CHECKING:  # pydantic models: loaded when a runtime is built, not with the handler module
    from parley.config import OperatorConfig
    from parley.content import ContentStore
    from parley.runs.ports import Scheduler, Waits
    from parley.tools.client import ToolClient


class DueWork(Protocol):
    """Timed work the runtime runs when it falls due: locally, the scheduler port's work
    (``parley.local.scheduler.LocalScheduler``: expiries now; deliveries and reads later).

    With a manual clock, ``POST /_local/clock/advance`` steps the clock from one due time to the next
    and calls :meth:`run_due` at each, so that work scheduled by work also runs in time order.
    """

    def next_due(self) -> datetime | None:
        """When the earliest pending work falls due, or ``None`` when nothing is pending."""
        ...

    def run_due(self, now: datetime) -> None:
        """Run everything due at or before ``now``."""
        ...


@dataclass
class Runtime:
    definitions: DefinitionStore
    clock: Clock
    operator: OperatorConfig
    #: Hooks for "run the work that fell due" under the manual clock (the local scheduler); empty on AWS,
    #: where EventBridge Scheduler fires the work.
    due_work: list[DueWork] = field(default_factory=list)
    #: The save-time document check; tests of the definition rules may put a simpler one here.
    check_document: Checker = check_source
    #: Executions that hold waiting runs (Step Functions; locally moto's executor).
    waits: Waits | None = None
    #: The one scheduler port (EventBridge Scheduler; locally the local scheduler and its clock).
    scheduler: Scheduler | None = None
    #: The MCP client tool servers are reached through (``parley.tools.client``); tests inject one with
    #: short bounds. The default loads the mcp package only on its first call.
    tool_client: ToolClient = field(default_factory=lambda: _default_tool_client())
    #: The Secrets Manager client that tool server header references are read through
    #: (``parley.tools.servers``); a boto3 client made on first use unless one is injected.
    secretsmanager: Any = field(default_factory=lambda: _lazy_client("secretsmanager"))
    #: Where content too large for a table item is kept (``parley.content``): the bucket of
    #: ``PARLEY_CONTENT_BUCKET`` on AWS, moto's locally; ``None`` keeps only what fits in items.
    content: ContentStore | None = None

    def definition_service(self) -> DefinitionService:
        return DefinitionService(self.definitions, self.clock, self.check_document)


def _default_tool_client() -> ToolClient:
    from parley.tools.client import McpToolClient

    return McpToolClient()


def runtime_from_environment(environ: Mapping[str, str] | None = None) -> Runtime:
    """The runtime of a deployed function: the table named by ``PARLEY_TABLE``, the system clock, the
    operator configuration (:func:`operator_from_environment`), and the waits and scheduler adapters of
    ``PARLEY_STATE_MACHINE_ARN`` and ``PARLEY_SCHEDULE_GROUP``/``…_ROLE_ARN``/``PARLEY_TIMER_FUNCTION_ARN``
    (each left out when its variables are not set). Creates the DynamoDB client, so call it lazily; the
    Step Functions and Scheduler clients are made on their first call (most events need neither)."""
    import boto3

    from parley.config import EnvironmentSettings

    env = os.environ if environ is None else environ
    settings = EnvironmentSettings.from_environment(env)
    client = boto3.client("dynamodb")
    return Runtime(
        definitions=DynamoDefinitionStore(client, settings.table_name),
        clock=SystemClock(),
        operator=operator_from_environment(env),
        waits=waits_from_environment(env),
        scheduler=scheduler_from_environment(env),
        content=content_from_environment(env),
    )


def content_from_environment(environ: Mapping[str, str]) -> ContentStore | None:
    """The content bucket of ``PARLEY_CONTENT_BUCKET``; ``None`` without it."""
    from parley.content import S3ContentStore
    from parley.infrastructure.functions import CONTENT_BUCKET_VARIABLE

    bucket = environ.get(CONTENT_BUCKET_VARIABLE)
    return S3ContentStore(_lazy_client("s3"), bucket) if bucket else None


def waits_from_environment(environ: Mapping[str, str]) -> Waits | None:
    """Step Functions ``Waits`` on ``PARLEY_STATE_MACHINE_ARN``; ``None`` without it."""
    from parley.infrastructure.functions import STATE_MACHINE_ARN_VARIABLE
    from parley.waits.stepfunctions import StepFunctionsWaits

    arn = environ.get(STATE_MACHINE_ARN_VARIABLE)
    if not arn:
        return None
    return StepFunctionsWaits(_lazy_client("stepfunctions"), arn)


def scheduler_from_environment(environ: Mapping[str, str]) -> Scheduler | None:
    """EventBridge Scheduler on ``PARLEY_SCHEDULE_GROUP``, calling ``PARLEY_TIMER_FUNCTION_ARN`` as
    ``PARLEY_SCHEDULER_ROLE_ARN`` (work due now: that function invoked directly), dead letters to
    ``PARLEY_SCHEDULE_DEAD_LETTER_ARN``; ``None`` unless the first three are set."""
    from parley.infrastructure.functions import (
        SCHEDULE_DEAD_LETTER_ARN_VARIABLE,
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
        TIMER_QUEUE_URL_VARIABLE,
    )
    from parley.scheduling.eventbridge import EventBridgeScheduler

    group = environ.get(SCHEDULE_GROUP_VARIABLE)
    role = environ.get(SCHEDULER_ROLE_ARN_VARIABLE)
    target = environ.get(TIMER_FUNCTION_ARN_VARIABLE)
    if not (group and role and target):
        return None
    return EventBridgeScheduler(
        _lazy_client("scheduler"),
        group,
        target,
        role,
        functions=_lazy_client("lambda"),
        dead_letter_arn=environ.get(SCHEDULE_DEAD_LETTER_ARN_VARIABLE) or None,
        queue=_lazy_client("sqs"),
        queue_url=environ.get(TIMER_QUEUE_URL_VARIABLE) or None,
    )


class _LazyClient:
    """A boto3 client made on first use (creating one costs tens of milliseconds of a cold start)."""

    def __init__(self, service: str) -> None:
        self._service = service
        self._lock = threading.Lock()
        self._client: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3

                    self._client = boto3.client(self._service)  # type: ignore[call-overload]
        return getattr(self._client, name)


def _lazy_client(service: str) -> Any:
    return _LazyClient(service)


def operator_from_environment(environ: Mapping[str, str]) -> OperatorConfig:
    """The operator configuration of a deployed function: the SSM parameter named by
    ``PARLEY_OPERATOR_CONFIG_PARAMETER``, followed as the operator changes it (read again at most once a
    minute, ``parley.config.LiveOperatorConfig``); without that variable, ``PARLEY_OPERATOR_CONFIG``."""
    from parley.config import (
        OPERATOR_CONFIG_PARAMETER_VARIABLE,
        LiveOperatorConfig,
        OperatorConfigParameter,
        operator_config_from_environment,
    )

    name = environ.get(OPERATOR_CONFIG_PARAMETER_VARIABLE)
    if not name:
        return operator_config_from_environment(environ)
    return LiveOperatorConfig.following(OperatorConfigParameter(_lazy_client("ssm"), name, environ=environ))
