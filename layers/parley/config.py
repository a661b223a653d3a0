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

The sections are frozen dataclasses read by ``parley.reading`` rather than pydantic models: every
function reads this configuration on its first event, and pydantic's import and model building were most
of that event's own time (issue 20). Each field says how its value is read and checked (``reads``).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from parley.connections.rules import ConnectionRules
from parley.reading import (
    Mistake,
    Reading,
    Refused,
    bounded_text,
    choice,
    flag,
    items,
    mapping,
    optional,
    read_record,
    reads,
    record,
    secret,
    text,
    then,
    whole,
)
from parley.secret import Secret

OPERATOR_CONFIG_VARIABLE: Final = "PARLEY_OPERATOR_CONFIG"
#: The name of the SSM parameter holding the operator configuration on AWS.
OPERATOR_CONFIG_PARAMETER_VARIABLE: Final = "PARLEY_OPERATOR_CONFIG_PARAMETER"
#: How long a function keeps the parameter's value before reading it again: a changed grant takes
#: effect within this time, without a deploy.
OPERATOR_CONFIG_MAX_AGE_SECONDS: Final = 60.0
#: The prefix of a header value that takes its secret from Secrets Manager (``parley.tools.servers``).
SECRET_REFERENCE_PREFIX: Final = "{{resolve:secretsmanager:"
OPEN_REQUESTS_VARIABLE: Final = "INTERACTION_OPEN_REQUESTS"
DEFAULT_INTERACTION_OPEN_REQUESTS: Final = 10_000
WORKFLOW_MAX_DURATION_VARIABLE: Final = "WORKFLOW_MAX_DURATION"
DEFAULT_WORKFLOW_MAX_DURATION: Final = "P30D"
WORKFLOW_MAX_DURATION_MIN: Final = timedelta(hours=2)
WORKFLOW_MAX_DURATION_MAX: Final = timedelta(days=365)

_IDENTIFIER: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_SERVER_NAME: Final = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


def _identifier(value: str) -> str:
    # Org and playbook ids become parts of table keys (``PB#{org}#{playbook}``), so ``#`` and ``/`` are out.
    if not _IDENTIFIER.match(value):
        raise ValueError(
            "an org or playbook id is 1 to 128 of A-Z, a-z, 0-9, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return value


def _server_name(value: str) -> str:
    if not _SERVER_NAME.match(value):
        raise ValueError("a tool server name is 1 to 32 of a-z, 0-9 and '-', starting with a letter")
    return value


def _tool_name(value: str) -> str:
    from parley.documents.asking import TOOL_NAME  # imported when used: it brings the template engine

    if "/" in value:
        raise ValueError(
            f"{value!r}: write the tool's name alone, without a server: it is a tool of this server"
        )
    if not TOOL_NAME.fullmatch(value):
        raise ValueError("a tool name is 1 to 128 of A-Z, a-z, 0-9, '_', '.' and '-'")
    return value


identifier = then(text, _identifier)
server_name = then(text, _server_name)
tool_name = then(text, _tool_name)
Role = Literal["read", "write"]
#: A grant's role: per playbook ``read`` or ``write``; per org (no playbook) ``admin``, which approves and
#: removes the org's connections (``http-api.md``, "Connections") and gives no role on any playbook.
GrantRole = Literal["read", "write", "admin"]


class OperatorConfigError(ValueError):
    """The operator configuration cannot be used; the message names the source and the field."""


def _on_aws(reading: Reading) -> bool:
    return reading.context.get("aws") is True


@dataclass(frozen=True)
class Grant:
    """A principal's role on one playbook: ``read`` (every GET) or ``write`` (everything); or, with no
    playbook, ``admin`` of the org (its connections: approve and remove them)."""

    org: str = field(metadata=reads(identifier))
    role: GrantRole = field(metadata=reads(choice("read", "write", "admin")))
    playbook: str | None = field(default=None, metadata=reads(optional(identifier)))

    def checked(self) -> None:
        """``read`` and ``write`` name a playbook; ``admin`` is the org's and names none."""
        if self.role == "admin" and self.playbook is not None:
            raise ValueError("the admin role is the org's: leave playbook out of an admin grant")
        if self.role != "admin" and self.playbook is None:
            raise ValueError(f"a {self.role} grant names its playbook (only the org's admin grant has none)")


def _token_where_tokens_are_used(token: Secret | None, reading: Reading) -> Secret | None:
    aws = reading.context.get("aws")
    if aws is True and token is not None:
        raise ValueError(
            "a token is for the local server only; on AWS the JWT names the principal (leave token out)"
        )
    if aws is False and token is None:
        raise ValueError("Field required")
    if token is not None and not token.get_secret_value().strip():
        raise ValueError("a token cannot be empty")
    return token


def _one_grant_per_playbook(grants: tuple[Grant, ...]) -> tuple[Grant, ...]:
    _refuse_duplicates(((g.org, g.playbook or "(admin)") for g in grants), "grant for org/playbook")
    return grants


@dataclass(frozen=True)
class Principal:
    """Who calls the API; ``id`` is what ``answered_by``/``started_by`` record.

    ``token`` is the local server's bearer token: required in a local configuration, refused in the
    deployed one (``aws=True``), where the JWT's claim is the ``id``.
    """

    id: str = field(metadata=reads(bounded_text(1, 128)))
    #: Local only; on AWS principals come from the JWT.
    token: Secret | None = field(
        default=None, metadata=reads(optional(secret), _token_where_tokens_are_used, check_default=True)
    )
    grants: tuple[Grant, ...] = field(
        default=(), metadata=reads(then(items(record(Grant)), _one_grant_per_playbook))
    )

    def role_on(self, org: str, playbook: str) -> Role | None:
        """The role this principal holds on the playbook, or ``None``."""
        for grant in self.grants:
            if grant.org == org and grant.playbook == playbook and grant.role != "admin":
                return grant.role
        return None

    def playbook_grants(self) -> tuple[Grant, ...]:
        """The grants on playbooks (``read``/``write``), without the orgs' ``admin`` grants."""
        return tuple(grant for grant in self.grants if grant.playbook is not None)

    def is_admin_of(self, org: str) -> bool:
        """Whether this principal holds the org's ``admin`` grant (``http-api.md``, "Connections")."""
        return any(grant.org == org and grant.role == "admin" for grant in self.grants)


def _a_template_over_arguments(confirmation: str) -> str:
    from parley.documents.asking import CONFIRMATION_PLACE  # imported when used, as in _tool_name
    from parley.templates.checks import check_template

    if not confirmation.strip():
        raise ValueError("a confirmation is the text the person approves; it cannot be empty")
    found = check_template(confirmation, place=CONFIRMATION_PLACE, input_schema=None, first_line=1)
    if found:
        raise ValueError("; ".join(f"line {line} of the template: {message}" for line, message in found))
    return confirmation


@dataclass(frozen=True)
class ToolApproval:
    """One entry of a tool server's ``approve`` (``agent-runs.md``, "Turning it on: ``ask``"): a tool of
    this server that waits for a person's approval before each call, whatever the function says.

    Exactly one of ``confirmation`` (a Liquid template over ``arguments``, the call's validated arguments,
    checked as a function's confirmation is) and ``preview`` (another tool of this server, called with the
    same arguments, whose text is the confirmation).
    """

    tool: str = field(metadata=reads(tool_name))
    confirmation: str | None = field(
        default=None, metadata=reads(optional(then(text, _a_template_over_arguments)))
    )
    preview: str | None = field(default=None, metadata=reads(optional(tool_name)))

    def checked(self) -> None:
        """Exactly one of confirmation and preview, and a preview that is another tool."""
        if (self.confirmation is None) == (self.preview is None):
            raise ValueError(
                f"approval of {self.tool!r}: write exactly one of confirmation (a template over arguments) "
                "and preview (a tool of this server)"
            )
        if self.preview == self.tool:
            raise ValueError(
                f"approval of {self.tool!r}: preview names the tool itself; name another, read-only tool "
                "of this server"
            )


def _one_approval_per_tool(approve: tuple[ToolApproval, ...]) -> tuple[ToolApproval, ...]:
    _refuse_duplicates((entry.tool for entry in approve), "approval of tool")
    return approve


def _secrets_from_the_store_on_aws(headers: dict[str, Secret], reading: Reading) -> dict[str, Secret]:
    if _on_aws(reading):
        for name, value in headers.items():
            if SECRET_REFERENCE_PREFIX not in value.get_secret_value():
                raise ValueError(
                    f"header {name!r}: on AWS a header takes its secret from Secrets Manager, "
                    "as {{resolve:secretsmanager:<name or ARN>}} (the configuration holds no secret)"
                )
    return headers


def _some_orgs(orgs: tuple[str, ...]) -> tuple[str, ...]:
    if not orgs:
        raise ValueError("a tool server serves at least one org")
    return orgs


def _tool_server_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("a tool server url is an http:// or https:// URL with a host")
    return url


@dataclass(frozen=True)
class ToolServer:
    """A streamable-HTTP MCP server the runtime may call for the orgs (and playbooks) it serves.

    ``approve`` lists the tools of this server that wait for a person's approval before each call; a
    function cannot waive them.
    """

    name: str = field(metadata=reads(server_name))
    url: str = field(metadata=reads(then(text, _tool_server_url)))
    orgs: tuple[str, ...] = field(metadata=reads(then(items(identifier), _some_orgs)))
    playbooks: tuple[str, ...] | None = field(default=None, metadata=reads(optional(items(identifier))))
    allowed: tuple[str, ...] | None = field(default=None, metadata=reads(optional(items(bounded_text(1)))))
    record_content: bool = field(default=True, metadata=reads(flag))
    headers: dict[str, Secret] = field(
        default_factory=dict, metadata=reads(mapping(secret), _secrets_from_the_store_on_aws)
    )
    approve: tuple[ToolApproval, ...] = field(
        default=(), metadata=reads(then(items(record(ToolApproval)), _one_approval_per_tool))
    )

    def serves(self, org: str, playbook: str) -> bool:
        """Whether a playbook may use this server."""
        return org in self.orgs and (self.playbooks is None or playbook in self.playbooks)


def _workflow_max_duration(text: str) -> str:
    """A workflow run's longest duration (``workflow-format.md``, "Bounds"): 2 hours to 365 days."""
    from parley.documents.durations import duration_in_words, parse_duration

    duration = parse_duration(text)
    if not WORKFLOW_MAX_DURATION_MIN <= duration <= WORKFLOW_MAX_DURATION_MAX:
        words = duration_in_words(duration)
        raise ValueError(f"{text} ({words}) is outside 2 hours (PT2H) to 365 days (P365D)")
    return text


@dataclass(frozen=True)
class Limits:
    interaction_open_requests: int = field(
        default=DEFAULT_INTERACTION_OPEN_REQUESTS, metadata=reads(whole(minimum=1))
    )
    #: A workflow run's longest duration, ISO 8601 (``WORKFLOW_MAX_DURATION`` wins): past it the run ends
    #: ``cancelled`` as ``overrun``.
    workflow_max_duration: str = field(
        default=DEFAULT_WORKFLOW_MAX_DURATION, metadata=reads(then(text, _workflow_max_duration))
    )

    @property
    def workflow_max_seconds(self) -> int:
        from parley.documents.durations import parse_duration

        return int(parse_duration(self.workflow_max_duration).total_seconds())


# --- models (reasoning functions) ---------------------------------------------------------------

#: The providers the runtime knows by name (``http-api.md``, "Model providers"); a gateway takes any
#: other name of the same shape.
BUILT_IN_PROVIDERS: Final = (
    "anthropic",
    "openai",
    "azure",
    "google",
    "vertex",
    "vertex-anthropic",
    "bedrock",
    "bedrock-anthropic",
)
#: Each built-in provider's settings, named as its own SDK reads them from the environment; the file
#: may hold the same names under ``models.providers.<provider>``.
PROVIDER_SETTINGS: Final[Mapping[str, tuple[str, ...]]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API"),
    "azure": ("AZURE_OPENAI_ENDPOINT", "AZURE_RESOURCE_NAME", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "vertex": ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
    "vertex-anthropic": ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
    "bedrock": ("AWS_REGION",),
    "bedrock-anthropic": ("AWS_REGION",),
}
#: The settings that are keys: on AWS each is a Secrets Manager reference, never the key itself.
SECRET_PROVIDER_SETTINGS: Final = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
    }
)
#: The Chat Completions body fields the runtime sets or reads itself: a gateway's
#: ``allowed_provider_options`` cannot hand them to a function (``reasoning-format.md``, "Options for a
#: gateway").
RUNTIME_SET_FIELDS: Final = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "stop",
        "response_format",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "functions",
        "function_call",
        "stream",
        "stream_options",
        "reasoning_effort",
        "n",
    }
)
REASONING_MAX_INPUT_TOKENS_VARIABLE: Final = "REASONING_MAX_INPUT_TOKENS"

_PROVIDER_NAME: Final = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_MODEL_REFERENCE_TEXT: Final = re.compile(r"^[^\s*]+\*?$")
_BODY_FIELD: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_HEADER_NAME: Final = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
#: Headers the HTTP client sets itself; a gateway's ``headers`` cannot replace them.
_CLIENT_HEADERS: Final = frozenset({"host", "content-type", "content-length", "transfer-encoding"})


def _gateway_name(value: str) -> str:
    if not _PROVIDER_NAME.match(value):
        raise ValueError("a gateway name is 1 to 32 of a-z, 0-9 and '-', starting with a letter")
    if value in BUILT_IN_PROVIDERS:
        raise ValueError(
            f"{value!r} is a built-in provider; a gateway takes a name of its own "
            f"(built-in: {', '.join(BUILT_IN_PROVIDERS)})"
        )
    return value


def _pattern_or_reference(value: str) -> str:
    """An ``allowed`` entry or an alias key: a name or ``provider/model``, or a prefix ending in ``*``."""
    if not _MODEL_REFERENCE_TEXT.match(value) or value == "*":
        raise ValueError(
            f"{value!r}: a model reference (such as anthropic/claude-sonnet-4-5), an alias name, or a "
            "prefix ending in * (such as anthropic/*); no spaces, and * only at the end"
        )
    return value


def _is_secret_reference(value: Secret) -> bool:
    return SECRET_REFERENCE_PREFIX in value.get_secret_value()


def _store_only(what: str) -> str:
    return (
        f"on AWS {what} takes its secret from Secrets Manager, as "
        "{{resolve:secretsmanager:<name or ARN>}} (the configuration holds no secret)"
    )


def _gateway_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("a gateway base_url is an http:// or https:// URL with a host")
    return url


def _api_key(key: Secret | None, reading: Reading) -> Secret | None:
    if key is None:
        return None
    if not key.get_secret_value().strip():
        raise ValueError("an api_key cannot be empty (leave it out when the gateway needs none)")
    if _on_aws(reading) and not _is_secret_reference(key):
        raise ValueError(_store_only("the api_key"))
    return key


def _gateway_headers(headers: dict[str, Secret], reading: Reading) -> dict[str, Secret]:
    for name, value in headers.items():
        if not _HEADER_NAME.match(name):
            raise ValueError(f"{name!r} is not an HTTP header name")
        if name.lower() in _CLIENT_HEADERS:
            raise ValueError(f"header {name!r} is set by the HTTP client; leave it out")
        if _on_aws(reading) and not _is_secret_reference(value):
            raise ValueError(_store_only(f"the header {name!r}"))
    return headers


def _options_the_runtime_leaves(options: tuple[str, ...]) -> tuple[str, ...]:
    for option in options:
        if not _BODY_FIELD.match(option):
            raise ValueError(f"{option!r} is not a request body field name")
        if option in RUNTIME_SET_FIELDS:
            raise ValueError(
                f"{option!r} cannot be allowed: the runtime sets it itself "
                "(the front matter's settings, the messages, the tools and the output format)"
            )
    _refuse_duplicates(options, "allowed provider option")
    return options


@dataclass(frozen=True)
class Gateway:
    """An OpenAI-compatible Chat Completions endpoint, named by the operator: its name is the provider
    part of the references that reach it (``internal/llama-3.3-70b``)."""

    name: str = field(metadata=reads(then(text, _gateway_name)))
    base_url: str = field(metadata=reads(then(text, _gateway_url)))
    api_key: Secret | None = field(default=None, metadata=reads(optional(secret), _api_key))
    headers: dict[str, Secret] = field(
        default_factory=dict, metadata=reads(mapping(secret), _gateway_headers)
    )
    #: Whether the endpoint takes ``response_format: {type: json_schema}``.
    structured_outputs: bool = field(default=False, metadata=reads(flag))
    #: The top-level body fields a function's provider options may set for this gateway.
    allowed_provider_options: tuple[str, ...] = field(
        default=(), metadata=reads(then(items(text), _options_the_runtime_leaves))
    )

    def checked(self) -> None:
        """One way to authorize: the api_key or an Authorization header."""
        if self.api_key is not None and any(name.lower() == "authorization" for name in self.headers):
            raise ValueError(
                "the api_key is sent as Authorization: Bearer; give either api_key or an Authorization header"
            )


def _provider_and_model(value: str) -> str:
    provider, _, model = value.partition("/")
    if not _PROVIDER_NAME.match(provider) or not model or any(c.isspace() or c == "*" for c in model):
        raise ValueError(
            f"{value!r}: a catalog id is provider/model, such as internal/llama-3.3-70b (no * or spaces)"
        )
    return value


@dataclass(frozen=True)
class CatalogEntry:
    """A model the providers do not list (or list without its limits), with its limits."""

    id: str = field(metadata=reads(then(text, _provider_and_model)))
    context_window: int = field(metadata=reads(whole(minimum=1)))
    max_tokens: int = field(metadata=reads(whole(minimum=1)))
    name: str | None = field(default=None, metadata=reads(optional(bounded_text(1, 200))))

    def checked(self) -> None:
        """The output fits the window."""
        if self.max_tokens > self.context_window:
            raise ValueError(
                f"max_tokens ({self.max_tokens}) is more than the context_window ({self.context_window})"
            )


def _aliases(aliases: dict[str, str]) -> dict[str, str]:
    for key, target in aliases.items():
        try:
            _pattern_or_reference(key)
        except ValueError as exc:
            raise ValueError(f"alias {exc}") from None
        provider, _, model = target.partition("/")
        wildcard = key.endswith("*")
        if not _PROVIDER_NAME.match(provider) or not model or any(c.isspace() for c in model):
            raise ValueError(
                f"alias {key!r}: its target {target!r} is provider/model, such as anthropic/claude-haiku-4-5"
            )
        if wildcard != target.endswith("*") or "*" in target[:-1]:
            raise ValueError(
                f"alias {key!r}: a wildcard alias (ending in *) maps to a target ending in *, such as "
                "anthropic/*: bedrock-anthropic/us.anthropic.*; an exact alias maps to one model"
            )
    return aliases


def _distinct_gateways(gateways: tuple[Gateway, ...]) -> tuple[Gateway, ...]:
    _refuse_duplicates((g.name for g in gateways), "gateway name")
    return gateways


def _distinct_catalog(catalog: tuple[CatalogEntry, ...]) -> tuple[CatalogEntry, ...]:
    _refuse_duplicates((entry.id for entry in catalog), "catalog id")
    return catalog


def _provider_settings(
    providers: dict[str, dict[str, Secret]], reading: Reading
) -> dict[str, dict[str, Secret]]:
    for provider, settings in providers.items():
        if provider not in PROVIDER_SETTINGS:
            raise ValueError(
                f"{provider!r} is not a built-in provider ({', '.join(BUILT_IN_PROVIDERS)}); "
                "a gateway's settings belong to its entry in gateways"
            )
        names = PROVIDER_SETTINGS[provider]
        for name, value in settings.items():
            if name not in names:
                raise ValueError(f"{provider}: unknown setting {name!r} (allowed: {', '.join(names)})")
            if not value.get_secret_value().strip():
                raise ValueError(f"{provider}.{name} cannot be empty (leave it out)")
            if _on_aws(reading) and name in SECRET_PROVIDER_SETTINGS and not _is_secret_reference(value):
                raise ValueError(_store_only(f"{provider}.{name}"))
    return providers


@dataclass(frozen=True)
class ModelsConfig:
    """Which models reasoning functions may run and how references reach them (``http-api.md``,
    "Operator configuration" and "Model providers")."""

    #: Only these references or prefixes (``anthropic/*``) may run, as written or as an alias made them;
    #: left out, every model of a configured provider may.
    allowed: tuple[str, ...] | None = field(
        default=None, metadata=reads(optional(items(then(text, _pattern_or_reference))))
    )
    #: Exact names (``fast``) and wildcard prefixes (``anthropic/*`` to ``bedrock-anthropic/us.anthropic.*``),
    #: followed one hop.
    aliases: dict[str, str] = field(default_factory=dict, metadata=reads(then(mapping(text), _aliases)))
    gateways: tuple[Gateway, ...] = field(
        default=(), metadata=reads(then(items(record(Gateway)), _distinct_gateways))
    )
    catalog: tuple[CatalogEntry, ...] = field(
        default=(), metadata=reads(then(items(record(CatalogEntry)), _distinct_catalog))
    )
    #: ``provider -> {SETTING: value}``, the same names the environment gives (the environment wins).
    providers: dict[str, dict[str, Secret]] = field(
        default_factory=dict, metadata=reads(mapping(mapping(secret)), _provider_settings)
    )
    reasoning_max_input_tokens: int | None = field(default=None, metadata=reads(optional(whole(minimum=1))))

    def gateway_named(self, name: str) -> Gateway | None:
        """The gateway ``name``, or ``None``."""
        return next((gateway for gateway in self.gateways if gateway.name == name), None)

    def provider_settings(self, provider: str, environ: Mapping[str, str] | None = None) -> dict[str, Secret]:
        """A built-in provider's settings: the file's, each replaced by the environment's value when the
        environment (default ``os.environ``) sets it; empty for a gateway or an unknown provider."""
        env = os.environ if environ is None else environ
        settings = dict(self.providers.get(provider, {}))
        for name in PROVIDER_SETTINGS.get(provider, ()):
            value = env.get(name, "")
            if value.strip():
                settings[name] = Secret(value)
        return settings


def _distinct_principals(principals: tuple[Principal, ...]) -> tuple[Principal, ...]:
    _refuse_duplicates((p.id for p in principals), "principal id")
    tokens = [p.token.get_secret_value() for p in principals if p.token is not None]
    if len(set(tokens)) != len(tokens):
        raise ValueError("two principals share a token; each token names one principal")
    return principals


def _distinct_servers(servers: tuple[ToolServer, ...]) -> tuple[ToolServer, ...]:
    _refuse_duplicates((s.name for s in servers), "tool server name")
    return servers


@dataclass(frozen=True)
class OperatorConfig:
    """The whole operator configuration; an empty one has no principals, so every call is 401."""

    principals: tuple[Principal, ...] = field(
        default=(), metadata=reads(then(items(record(Principal)), _distinct_principals))
    )
    tool_servers: tuple[ToolServer, ...] = field(
        default=(), metadata=reads(then(items(record(ToolServer)), _distinct_servers))
    )
    limits: Limits = field(default_factory=Limits, metadata=reads(record(Limits)))
    models: ModelsConfig = field(default_factory=ModelsConfig, metadata=reads(record(ModelsConfig)))
    connections: ConnectionRules = field(
        default_factory=ConnectionRules, metadata=reads(record(ConnectionRules))
    )

    def principal_named(self, principal_id: str) -> Principal:
        """The principal ``principal_id`` with its grants; one with none when the configuration does not
        name it (a JWT of the issuer for someone no grant mentions: every playbook is then not found)."""
        for principal in self.principals:
            if principal.id == principal_id:
                return principal
        return Principal(id=principal_id)


def _refuse_duplicates(values: Iterable[object], what: str) -> None:
    seen: set[object] = set()
    for value in values:
        if value in seen:
            shown = "/".join(value) if isinstance(value, tuple) else value
            raise ValueError(f"duplicate {what} {shown!r}")
        seen.add(value)


# --- loading -----------------------------------------------------------------------------------


class _NotYaml(ValueError):
    """The text is not YAML; the message is PyYAML's."""


def _yaml(text: str) -> Any:
    import yaml  # imported when there is text to read

    try:
        return yaml.load(text, Loader=_strict_loader())
    except yaml.YAMLError as exc:
        raise _NotYaml(str(exc)) from exc


@functools.cache
def _strict_loader() -> Any:
    """PyYAML's safe loader, refusing duplicate keys (a second value would silently win)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        keys: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in keys:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            keys.add(key)
        return dict(loader.construct_mapping(node, deep=deep))

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader


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
        data = _yaml(text) if text.strip() else None
    except _NotYaml as exc:
        raise OperatorConfigError(f"{source}: not valid YAML: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise OperatorConfigError(
            f"{source}: the configuration is a mapping of principals, tool_servers, limits, models, "
            "connections"
        )
    data = _apply_environment(data, source, os.environ if environ is None else environ)
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


def _apply_environment(data: dict[str, Any], source: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """The variables that win over the file: ``INTERACTION_OPEN_REQUESTS`` over
    ``limits.interaction_open_requests``, ``REASONING_MAX_INPUT_TOKENS`` over
    ``models.reasoning_max_input_tokens``, ``WORKFLOW_MAX_DURATION`` over
    ``limits.workflow_max_duration``."""
    for variable, section, key in (
        (OPEN_REQUESTS_VARIABLE, "limits", "interaction_open_requests"),
        (REASONING_MAX_INPUT_TOKENS_VARIABLE, "models", "reasoning_max_input_tokens"),
    ):
        value = _whole_number_variable(environ, variable)
        if value is None:
            continue
        data = _set_in(data, section, key, value)
    duration = environ.get(WORKFLOW_MAX_DURATION_VARIABLE, "").strip()
    if duration:
        data = _set_in(data, "limits", "workflow_max_duration", duration)
    return data


def _set_in(data: dict[str, Any], section: str, key: str, value: Any) -> dict[str, Any]:
    """``data`` with ``section.key`` set (a section that is not a mapping is left to validation)."""
    current = data.get(section)
    if current is None:
        current = {}
    if not isinstance(current, dict):
        return data  # left to validation, which names the section
    return {**data, section: {**current, key: value}}


def _whole_number_variable(environ: Mapping[str, str], variable: str) -> int | None:
    raw = environ.get(variable)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise OperatorConfigError(f"${variable}: expected a whole number, got {raw!r}") from None
    if value < 1:
        raise OperatorConfigError(f"${variable}: must be at least 1, got {value}")
    return value


def _describe(mistakes: list[Mistake], source: str) -> str:
    return "\n".join(f"{source}: {_field_path(m.at) or 'top level'}: {m.message}" for m in mistakes)


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


# --- environment settings ----------------------------------------------------------------------


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
