"""The operator configuration on AWS: the YAML (or JSON) text of an SSM parameter
(``PARLEY_OPERATOR_CONFIG_PARAMETER`` names it) that the operator changes without redeploying; the
functions read it again once a minute (:class:`OperatorConfigParameter`) and follow it
(:class:`LiveOperatorConfig`). The deployed configuration holds no secret (``aws=True``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from parley.config.loading import parse_operator_config
from parley.config.operator import OperatorConfig
from parley.errors import OperatorConfigError

#: The name of the SSM parameter holding the operator configuration on AWS.
OPERATOR_CONFIG_PARAMETER_VARIABLE: Final = "PARLEY_OPERATOR_CONFIG_PARAMETER"
#: How long a function keeps the parameter's value before reading it again: a changed grant takes
#: effect within this time, without a deploy.
OPERATOR_CONFIG_MAX_AGE_SECONDS: Final = 60.0


class OperatorConfigParameter:
    """The operator configuration in an SSM parameter (on AWS), read again once ``max_age`` has passed.

    The operator changes the parameter (``aws ssm put-parameter --overwrite``, docs/deploy.md) and every
    function sees the change within ``max_age`` seconds, without a deploy. Calling the object gives the
    current configuration. The first read must succeed (a function without its configuration cannot
    serve); after that, a value that cannot be read or used keeps the last good configuration, says why
    in the log, and is tried again after ``max_age``, so a typo in the parameter never takes the API down.
    """

    def __init__(
        self,
        ssm: Any,
        name: str,
        *,
        environ: Mapping[str, str] | None = None,
        max_age: float = OPERATOR_CONFIG_MAX_AGE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ssm = ssm
        self.name = name
        self._environ = environ
        self._max_age = max_age
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._config: OperatorConfig | None = None
        self._version: int | None = None
        self._read_at = 0.0

    def __call__(self) -> OperatorConfig:
        with self._lock:
            now = self._monotonic()
            if self._config is not None and now - self._read_at < self._max_age:
                return self._config
            try:
                self._refresh()
            except Exception as exc:
                if self._config is None or not _is_refresh_failure(exc):
                    raise
                _log().warning(
                    "Kept the last good operator configuration: the parameter %s cannot be used: %s",
                    self.name,
                    exc,
                )
            self._read_at = now
            assert self._config is not None
            return self._config

    def _refresh(self) -> None:
        parameter = self._ssm.get_parameter(Name=self.name)["Parameter"]
        version = int(parameter.get("Version", 0))
        if self._config is not None and version == self._version:
            return
        self._config = parse_operator_config(
            parameter["Value"], f"SSM parameter {self.name}", self._environ, aws=True
        )
        self._version = version


def _is_refresh_failure(exc: Exception) -> bool:
    """A parameter that cannot be read (throttled, unreachable, denied) or used (a broken edit)."""
    from botocore.exceptions import BotoCoreError, ClientError

    return isinstance(exc, (OperatorConfigError, BotoCoreError, ClientError, KeyError))


class LiveOperatorConfig(OperatorConfig):
    """An operator configuration that follows its source: each read of ``principals``, ``tool_servers``,
    ``limits`` or ``models`` takes them from the source's current configuration (which the source keeps for a
    minute), so the runtime built once per Lambda environment sees the operator's changes.

    It is an :class:`OperatorConfig` for everything that takes one. ``LiveOperatorConfig(source)`` reads
    the source on the first read of a section (a function whose event needs no configuration never reads
    it); :meth:`following` reads it once at once, so a broken source fails there.
    """

    def __init__(self, source: Callable[[], OperatorConfig]) -> None:
        super().__init__()
        object.__setattr__(self, "_source", source)

    @classmethod
    def following(cls, source: Callable[[], OperatorConfig]) -> LiveOperatorConfig:
        """A live configuration of ``source``, read once now (so a broken source fails here)."""
        source()
        return cls(source)

    def __getattribute__(self, name: str) -> Any:
        if name in _LIVE_FIELDS:
            return getattr(object.__getattribute__(self, "_source")(), name)
        return super().__getattribute__(name)


_LIVE_FIELDS: Final = frozenset({"principals", "tool_servers", "limits", "models", "connections"})


def _log() -> logging.Logger:
    return logging.getLogger("parley.config")


__all__ = [
    "OPERATOR_CONFIG_MAX_AGE_SECONDS",
    "OPERATOR_CONFIG_PARAMETER_VARIABLE",
    "LiveOperatorConfig",
    "OperatorConfigParameter",
]
