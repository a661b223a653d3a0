"""What a deployed function reads from its environment beside the operator configuration, read when
first needed (never at import)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from parley.errors import OperatorConfigError


@dataclass(frozen=True)
class EnvironmentSettings:
    """What a function reads from its environment, read when first needed (never at import)."""

    table_name: str

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> EnvironmentSettings:
        from parley.infrastructure.table import TABLE_NAME_VARIABLE

        env = os.environ if environ is None else environ
        table_name = env.get(TABLE_NAME_VARIABLE, "")
        if len(table_name) < 3:
            raise OperatorConfigError(f"${TABLE_NAME_VARIABLE} must name the table")
        return cls(table_name=table_name)


__all__ = ["EnvironmentSettings"]
