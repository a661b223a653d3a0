"""The Lambda functions, written once: the CDK app deploys each, the local runtime runs the same handlers.

Pure data (no CDK, no AWS): a function is a handler file under ``functions/<name>/`` whose module-level
``handler`` is the Lambda entry, plus the sizes it runs with. Later issues append the Step Functions and
scheduler-driven functions (``deliver``, ``read-replies``, …) here, and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

#: The module-level name every ``functions/<name>/handler.py`` binds its Lambda entry to.
ENTRY_ATTRIBUTE: Final = "handler"


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
)


def function_named(name: str) -> FunctionDefinition:
    """The definition called ``name``; ``KeyError`` when there is none."""
    for definition in FUNCTIONS:
        if definition.name == name:
            return definition
    raise KeyError(name)
