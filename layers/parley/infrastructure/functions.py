"""The Lambda functions, written once: the CDK app deploys each, the local runtime runs the same handlers.

Pure data (no CDK, no AWS): a function is a handler file under ``functions/<name>/`` whose module-level
``handler`` is the Lambda entry, plus the sizes it runs with. Later issues append the scheduler-driven
functions (``deliver``, ``read-replies``, …) here, and nowhere else.

Every function gets the same environment (the table, the state machine, the scheduler's group, role and
target), named by the ``*_VARIABLE`` constants below: ``parley.runtime.runtime_from_environment`` builds
the ports from them.
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

# Who may do what with the run's state machine and the scheduler: the CDK stack grants exactly these,
# and the local runtime refuses the rest, so that a missing grant fails a local test, not a deploy.
#: StartExecution (run_definition).
MAY_START_RUNS: Final = frozenset({"api"})
#: SendTaskSuccess/SendTaskFailure: answer and cancel (api), an ending that raced ahead of the token
#: (wait), expiry (timer). Never settle: it runs after the wait is over.
MAY_END_WAITS: Final = frozenset({"api", "wait", "timer"})
#: CreateSchedule/DeleteSchedule (and passing the scheduler's role).
MAY_SCHEDULE: Final = frozenset({"api"})


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
        # API Gateway's REST integration gives up after 29 seconds; running longer only bills.
        timeout_s=29,
        description="Parley HTTP API: every /v1 route (spec http-api.md)",
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
        memory_mb=1024,
        # Timed work: expiries now; deliveries and reads (tool calls of up to 30 seconds) later.
        timeout_s=120,
        description="Parley timer: runs timed work when its schedule fires (expiries)",
    ),
)


def function_named(name: str) -> FunctionDefinition:
    """The definition called ``name``; ``KeyError`` when there is none."""
    for definition in FUNCTIONS:
        if definition.name == name:
            return definition
    raise KeyError(name)
