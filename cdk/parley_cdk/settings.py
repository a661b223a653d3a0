"""What differs between the ``dev`` and ``prod`` stages; everything else is the same stack."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from aws_cdk import RemovalPolicy
from aws_cdk.aws_logs import RetentionDays

STAGES: Final = ("dev", "prod")
DEFAULT_STAGE: Final = "dev"


@dataclass(frozen=True)
class StageSettings:
    name: str
    #: Keep the table and logs when the stack (or the resource) goes away, and refuse table deletion.
    retain_data: bool
    log_retention: RetentionDays

    @property
    def removal_policy(self) -> RemovalPolicy:
        return RemovalPolicy.RETAIN if self.retain_data else RemovalPolicy.DESTROY

    def resource_name(self, name: str) -> str:
        """The physical name of a named resource of this stage: ``parley-<stage>-<name>``."""
        return f"parley-{self.name}-{name}"


def stage_settings(name: str) -> StageSettings:
    """The settings of stage ``name`` (``dev`` or ``prod``); ``ValueError`` for any other name."""
    if name == "prod":
        return StageSettings(name=name, retain_data=True, log_retention=RetentionDays.THREE_MONTHS)
    if name == "dev":
        return StageSettings(name=name, retain_data=False, log_retention=RetentionDays.TWO_WEEKS)
    raise ValueError(f"Unknown stage {name!r}: use one of {', '.join(STAGES)} (context key 'stage')")
