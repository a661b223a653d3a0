"""The runtime: the ports a handler works with, bundled so they can be injected (tests, the local
server) or built once from the environment (a Lambda function on its first call:
``parley.aws.environment``).

Its defaults name their adapters by module path (:func:`_named`), so that the ports depend on no
adapter and no function type: the MCP tool client, and the type registry's document check.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # types only: a function loads the ports its events use, not every one with its runtime
    from parley.clock import Clock
    from parley.config import OperatorConfig
    from parley.connections.secrets import ConnectionSecrets
    from parley.connections.store import ConnectionStore
    from parley.definitions.model import PlaybookRef
    from parley.definitions.service import Checker, DefinitionService
    from parley.definitions.store import DefinitionStore
    from parley.ports.content import ContentStore
    from parley.ports.reasoner import Reasoner
    from parley.ports.tools import ToolClient
    from parley.ports.waiting import Scheduler, Waits
    from parley.ports.workflows import WorkflowEngine


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
    check_document: Checker = field(default_factory=lambda: _named("parley.runs.kinds", "check_source"))
    #: Executions that hold waiting runs (Step Functions; locally ``parley.local.executor``).
    waits: Waits | None = None
    #: Where compiled workflows run (Step Functions; locally ``parley.local.executor``).
    workflows: WorkflowEngine | None = None
    #: The one scheduler port (EventBridge Scheduler; locally the local scheduler and its clock).
    scheduler: Scheduler | None = None
    #: The MCP client tool servers are reached through (``parley.tools.client``); tests inject one with
    #: short bounds. The default is made, and its module and the mcp package loaded, on its first call.
    tool_client: ToolClient = field(
        default_factory=lambda: LazyInstance("parley.tools.client", "McpToolClient")
    )
    #: The Secrets Manager client that tool server header references are read through
    #: (``parley.tools.servers``); a boto3 client made on first use unless one is injected.
    secretsmanager: Any = field(default_factory=lambda: LazyClient("secretsmanager"))
    #: Where content too large for a table item is kept (``parley.ports.content``): the bucket of
    #: ``PARLEY_CONTENT_BUCKET`` on AWS, moto's locally; ``None`` keeps only what fits in items.
    content: ContentStore | None = None
    #: Where reasoning runs work (``parley.ports.reasoner``): the ``reason`` function on AWS, a thread of
    #: ``parley serve`` locally; ``None`` runs a reasoning run within the call that starts it.
    reasoner: Reasoner | None = None
    #: How long ``run_definition`` waits for a reasoning run to end (``PARLEY_RUN_WAIT_SECONDS``).
    run_wait_seconds: float = 25.0
    #: The environment the model providers' settings are read from (``http-api.md``, "Model
    #: providers"); ``None`` reads the process's.
    environ: Mapping[str, str] | None = None
    #: How a call that waits for work done elsewhere (a reasoning run) waits: ``time.sleep``; the local
    #: server's waits release its lock meanwhile.
    pause: Callable[[float], Any] = time.sleep
    #: The org's connections (``parley.connections.store``, issue 32); made on the definitions' table when
    #: left out.
    connections: ConnectionStore = None  # type: ignore[assignment]
    #: Where connections' headers and tokens are kept (``parley.connections.secrets``): Secrets Manager on
    #: AWS, the data folder (encrypted) locally; in memory when left out.
    connection_secrets: ConnectionSecrets = field(
        default_factory=lambda: _named("parley.connections.secrets", "MemoryConnectionSecrets")()
    )
    #: Whether a connection may be ``http`` to 127.0.0.1 (the local server, where test servers listen).
    loopback_connections: bool = False

    def __post_init__(self) -> None:
        # Connections live in the definitions' table, as runs do (a runtime whose definitions are not kept
        # in DynamoDB, in some tests, has none unless one is given).
        client = getattr(self.definitions, "client", None)
        if self.connections is None and client is not None:
            store = _named("parley.connections.store", "ConnectionStore")
            self.connections = store(client, self.definitions.table_name)

    def definition_service(self) -> DefinitionService:
        from parley.definitions.service import DefinitionService

        return DefinitionService(
            self.definitions,
            self.clock,
            self.check_document,
            servers=self.servers_serving,
            here=lambda definition_type, source: _named("parley.runs.kinds", "warnings_here")(
                self, definition_type, source
            ),
        )

    def servers_serving(self, playbook: PlaybookRef) -> list[str]:
        """The names of the tool servers the operator configuration has serve ``playbook``, read at each
        call (a save warns of a server a document names that is not among them), then the names of the
        org's connections that serve it, whatever their status (``parley.tools.connected``)."""
        operators = [
            server.name
            for server in self.operator.tool_servers
            if server.serves(playbook.org, playbook.playbook)
        ]
        connections = _named("parley.tools.connected", "connection_names")(self, playbook)
        return [*operators, *(name for name in connections if name not in operators)]


class LazyClient:
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


class LazyInstance:
    """An instance of ``module.name`` (made without arguments) made on first use: most events call no
    tool server, and the tool client's module brings asyncio with it."""

    def __init__(self, module: str, name: str) -> None:
        self._named = (module, name)
        self._lock = threading.Lock()
        self._instance: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._instance is None:
            with self._lock:
                if self._instance is None:
                    self._instance = _named(*self._named)()
        return getattr(self._instance, name)


def _named(module: str, name: str) -> Any:
    """A default by its module path: the runtime's adapters and the type registry load with the first
    runtime that needs them, and this module imports neither."""
    import importlib

    return getattr(importlib.import_module(module), name)
