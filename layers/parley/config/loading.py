"""Loading the operator configuration (``http-api.md``, "Operator configuration"): from YAML (or JSON)
text, a file (``parley serve --config FILE``) or the ``PARLEY_OPERATOR_CONFIG`` variable. Unknown keys are
refused, and every loading error names the source and the field (:class:`OperatorConfigError`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from parley.config.environment import apply_environment
from parley.config.operator import OperatorConfig
from parley.config.yaml_reader import NotYaml, read_yaml
from parley.errors import OperatorConfigError
from parley.reading import Mistake, Reading, Refused, read_record

OPERATOR_CONFIG_VARIABLE: Final = "PARLEY_OPERATOR_CONFIG"


def parse_operator_config(
    text: str, source: str, environ: Mapping[str, str] | None = None, *, aws: bool = False
) -> OperatorConfig:
    """Parse YAML (or JSON, which is YAML) text; ``source`` names it in errors.

    ``INTERACTION_OPEN_REQUESTS`` in ``environ`` (default: ``os.environ``) wins over ``limits``, and
    ``REASONING_MAX_INPUT_TOKENS`` over ``models.reasoning_max_input_tokens``.
    ``aws``: the deployed configuration, where principals have no token (the JWT names them) and
    every header value is a Secrets Manager reference; otherwise (local) each principal has a token.
    """
    try:
        data = read_yaml(text) if text.strip() else None
    except NotYaml as exc:
        raise OperatorConfigError(f"{source}: not valid YAML: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise OperatorConfigError(
            f"{source}: the configuration is a mapping of principals, tool_servers, limits, models, "
            "connections"
        )
    data = apply_environment(data, source, os.environ if environ is None else environ)
    reading = Reading(aws=aws)
    try:
        return read_record(OperatorConfig, data, reading)
    except Refused:
        raise OperatorConfigError(_describe(reading.mistakes, source)) from None


def load_operator_config(path: Path | str, environ: Mapping[str, str] | None = None) -> OperatorConfig:
    """Read the operator configuration file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OperatorConfigError(f"{path}: cannot read the operator configuration: {exc.strerror}") from exc
    return parse_operator_config(text, str(path), environ)


def operator_config_from_environment(environ: Mapping[str, str] | None = None) -> OperatorConfig:
    """The configuration in ``PARLEY_OPERATOR_CONFIG`` (as on AWS); empty when the variable is unset."""
    env = os.environ if environ is None else environ
    return parse_operator_config(env.get(OPERATOR_CONFIG_VARIABLE, ""), f"${OPERATOR_CONFIG_VARIABLE}", env)


def _describe(mistakes: list[Mistake], source: str) -> str:
    return "\n".join(f"{source}: {_field_path(m.at) or 'top level'}: {m.message}" for m in mistakes)


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


__all__ = [
    "OPERATOR_CONFIG_VARIABLE",
    "load_operator_config",
    "operator_config_from_environment",
    "parse_operator_config",
]
