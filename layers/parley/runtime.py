"""The ports a handler works with, bundled so they can be injected (tests, the local server) or built
once from the environment (the Lambda function, on its first call).

Later issues add the Step Functions, scheduler and tool-client ports here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from parley.clock import Clock, SystemClock
from parley.definitions.service import Checker, DefinitionService
from parley.definitions.store import DefinitionStore, DynamoDefinitionStore
from parley.documents.definition import check_source

if TYPE_CHECKING:  # pydantic models: loaded when a runtime is built, not with the handler module
    from parley.config import OperatorConfig
    from parley.runs.ports import Scheduler, Waits


class DueWork(Protocol):
    """Timed work the runtime runs when it falls due (deliveries, reads, expiries: later issues).

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
    #: Hooks for "run the work that fell due"; empty until the scheduler exists.
    due_work: list[DueWork] = field(default_factory=list)
    #: The save-time document check; tests of the definition rules may put a simpler one here.
    check_document: Checker = check_source
    #: Executions that hold waiting runs (Step Functions; locally moto's executor).
    waits: Waits | None = None
    #: The one scheduler port (EventBridge Scheduler; locally the local scheduler and its clock).
    scheduler: Scheduler | None = None

    def definition_service(self) -> DefinitionService:
        return DefinitionService(self.definitions, self.clock, self.check_document)


def runtime_from_environment(environ: Mapping[str, str] | None = None) -> Runtime:
    """The runtime of a deployed function: the table named by ``PARLEY_TABLE``, the system clock and the
    operator configuration of ``PARLEY_OPERATOR_CONFIG``. Creates the boto3 client, so call it lazily."""
    import boto3

    from parley.config import EnvironmentSettings, operator_config_from_environment

    settings = EnvironmentSettings.from_environment(environ)
    client = boto3.client("dynamodb")
    return Runtime(
        definitions=DynamoDefinitionStore(client, settings.table_name),
        clock=SystemClock(),
        operator=operator_config_from_environment(environ),
    )
