"""Operator configuration (``http-api.md``, "Operator configuration") and the environment settings.

What the operator sets, not a playbook: principals and their grants, tool servers, limits, and the
models reasoning functions may run (``models``, :class:`ModelsConfig`: allowed references, aliases,
gateways, a catalog, the providers' settings). Locally it is one YAML file (``parley serve --config
FILE``) whose principals hold the bearer tokens. On AWS it is the YAML (or JSON) text of an SSM parameter
(``PARLEY_OPERATOR_CONFIG_PARAMETER`` names it) that the operator changes without redeploying: the
functions read it again once a minute (:class:`OperatorConfigParameter`, :class:`LiveOperatorConfig`).
There the API's JWT authorizer names the principal, so principals carry no ``token``, and tool server
headers, gateway keys and headers and provider keys take their secrets from Secrets Manager
(``{{resolve:secretsmanager:…}}``): the parameter holds no secret (``parse_operator_config(…,
aws=True)`` refuses one). ``PARLEY_OPERATOR_CONFIG``, the text itself in a variable, still works (tests,
a quick experiment).

Secrets (principal tokens, tool server headers, gateway keys and headers, provider settings) are
:class:`parley.secret.Secret`: they never appear in ``repr``, logs or error messages; read them with
``get_secret_value()`` where they are used.
Unknown keys are refused, and every loading error names the file (or variable) and the field.

The package, one module per part (issue 30): the sections (:mod:`~parley.config.principals`,
:mod:`~parley.config.tool_servers`, :mod:`~parley.config.limits`, :mod:`~parley.config.models`, and
:mod:`~parley.config.operator` for the whole), what they check alike (:mod:`~parley.config.rules`), the
strict YAML reader (:mod:`~parley.config.yaml_reader`), the environment's overrides
(:mod:`~parley.config.environment`), loading (:mod:`~parley.config.loading`), the SSM parameter and its
live refresh (:mod:`~parley.config.parameter`), a function's environment settings
(:mod:`~parley.config.settings`).

Offers: the configuration (:class:`OperatorConfig` and its sections :class:`Principal`,
:class:`Grant`, :class:`ToolServer`, :class:`ToolApproval`, :class:`Limits`, :class:`ModelsConfig`,
:class:`Gateway`, :class:`CatalogEntry`), loading it (:func:`parse_operator_config`,
:func:`load_operator_config`, :func:`operator_config_from_environment`, and on AWS
:class:`OperatorConfigParameter` followed by :class:`LiveOperatorConfig`), its error
(:class:`OperatorConfigError`), a function's :class:`EnvironmentSettings`, and the names of the
variables and providers it reads. Every part is light (PyYAML and botocore are imported when used), so
this face imports them all.
"""

from __future__ import annotations

from parley.config.connections import ConnectionRules
from parley.config.environment import (
    OPEN_REQUESTS_VARIABLE,
    REASONING_MAX_INPUT_TOKENS_VARIABLE,
    WORKFLOW_MAX_DURATION_VARIABLE,
)
from parley.config.limits import (
    DEFAULT_INTERACTION_OPEN_REQUESTS,
    DEFAULT_WORKFLOW_MAX_DURATION,
    WORKFLOW_MAX_DURATION_MAX,
    WORKFLOW_MAX_DURATION_MIN,
    Limits,
)
from parley.config.loading import (
    OPERATOR_CONFIG_VARIABLE,
    load_operator_config,
    operator_config_from_environment,
    parse_operator_config,
)
from parley.config.models import (
    BUILT_IN_PROVIDERS,
    PROVIDER_SETTINGS,
    RUNTIME_SET_FIELDS,
    SECRET_PROVIDER_SETTINGS,
    CatalogEntry,
    Gateway,
    ModelsConfig,
)
from parley.config.operator import OperatorConfig
from parley.config.parameter import (
    OPERATOR_CONFIG_MAX_AGE_SECONDS,
    OPERATOR_CONFIG_PARAMETER_VARIABLE,
    LiveOperatorConfig,
    OperatorConfigParameter,
)
from parley.config.principals import Grant, Principal, Role, identifier
from parley.config.rules import SECRET_REFERENCE_PREFIX
from parley.config.settings import EnvironmentSettings
from parley.config.tool_servers import TOOL_NAME, ToolApproval, ToolServer, server_name, tool_name
from parley.errors import OperatorConfigError

__all__ = [
    "BUILT_IN_PROVIDERS",
    "DEFAULT_INTERACTION_OPEN_REQUESTS",
    "DEFAULT_WORKFLOW_MAX_DURATION",
    "OPEN_REQUESTS_VARIABLE",
    "OPERATOR_CONFIG_MAX_AGE_SECONDS",
    "OPERATOR_CONFIG_PARAMETER_VARIABLE",
    "OPERATOR_CONFIG_VARIABLE",
    "PROVIDER_SETTINGS",
    "REASONING_MAX_INPUT_TOKENS_VARIABLE",
    "RUNTIME_SET_FIELDS",
    "SECRET_PROVIDER_SETTINGS",
    "SECRET_REFERENCE_PREFIX",
    "TOOL_NAME",
    "WORKFLOW_MAX_DURATION_MAX",
    "WORKFLOW_MAX_DURATION_MIN",
    "WORKFLOW_MAX_DURATION_VARIABLE",
    "CatalogEntry",
    "ConnectionRules",
    "EnvironmentSettings",
    "Gateway",
    "Grant",
    "Limits",
    "LiveOperatorConfig",
    "ModelsConfig",
    "OperatorConfig",
    "OperatorConfigError",
    "OperatorConfigParameter",
    "Principal",
    "Role",
    "ToolApproval",
    "ToolServer",
    "identifier",
    "load_operator_config",
    "operator_config_from_environment",
    "parse_operator_config",
    "server_name",
    "tool_name",
]
