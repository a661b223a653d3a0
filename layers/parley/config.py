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
:class:`pydantic.SecretStr`: they never appear in ``repr``, logs or ``model_dump_json``; read them with
``get_secret_value()`` where they are used.
Unknown keys are refused, and every loading error names the file (or variable) and the field.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Union
from urllib.parse import urlsplit

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

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


Identifier = Annotated[str, AfterValidator(_identifier)]
ServerName = Annotated[str, AfterValidator(_server_name)]
ToolName = Annotated[str, AfterValidator(_tool_name)]
Role = Literal["read", "write"]


class OperatorConfigError(ValueError):
    """The operator configuration cannot be used; the message names the source and the field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


class Grant(_Model):
    """A principal's role on one playbook: ``read`` (every GET) or ``write`` (everything)."""

    org: Identifier
    playbook: Identifier
    role: Role


class Principal(_Model):
    """Who calls the API; ``id`` is what ``answered_by``/``started_by`` record.

    ``token`` is the local server's bearer token: required in a local configuration, refused in the
    deployed one (``aws=True``), where the JWT's claim is the ``id``.
    """

    id: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    token: SecretStr | None = Field(
        default=None, validate_default=True, description="local only; on AWS principals come from the JWT"
    )
    grants: tuple[Grant, ...] = ()

    @field_validator("token")
    @classmethod
    def _token_where_tokens_are_used(cls, token: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        context = info.context if isinstance(info.context, dict) else {}
        aws = context.get("aws")
        if aws is True and token is not None:
            raise ValueError(
                "a token is for the local server only; on AWS the JWT names the principal (leave token out)"
            )
        if aws is False and token is None:
            raise PydanticCustomError("missing", "Field required")
        if token is not None and not token.get_secret_value().strip():
            raise ValueError("a token cannot be empty")
        return token

    @field_validator("grants")
    @classmethod
    def _one_grant_per_playbook(cls, grants: tuple[Grant, ...]) -> tuple[Grant, ...]:
        _refuse_duplicates(((g.org, g.playbook) for g in grants), "grant for org/playbook")
        return grants

    def role_on(self, org: str, playbook: str) -> Role | None:
        """The role this principal holds on the playbook, or ``None``."""
        for grant in self.grants:
            if grant.org == org and grant.playbook == playbook:
                return grant.role
        return None


class ToolApproval(_Model):
    """One entry of a tool server's ``approve`` (``agent-runs.md``, "Turning it on: ``ask``"): a tool of
    this server that waits for a person's approval before each call, whatever the function says.

    Exactly one of ``confirmation`` (a Liquid template over ``arguments``, the call's validated arguments,
    checked as a function's confirmation is) and ``preview`` (another tool of this server, called with the
    same arguments, whose text is the confirmation).
    """

    tool: ToolName
    confirmation: str | None = None
    preview: ToolName | None = None

    @field_validator("confirmation")
    @classmethod
    def _a_template_over_arguments(cls, confirmation: str | None) -> str | None:
        from parley.documents.asking import CONFIRMATION_PLACE  # imported when used, as in _tool_name
        from parley.templates.checks import check_template

        if confirmation is None:
            return None
        if not confirmation.strip():
            raise ValueError("a confirmation is the text the person approves; it cannot be empty")
        found = check_template(confirmation, place=CONFIRMATION_PLACE, input_schema=None, first_line=1)
        if found:
            raise ValueError("; ".join(f"line {line} of the template: {message}" for line, message in found))
        return confirmation

    @model_validator(mode="after")
    def _confirmation_or_preview(self) -> ToolApproval:
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
        return self


class ToolServer(_Model):
    """A streamable-HTTP MCP server the runtime may call for the orgs (and playbooks) it serves.

    ``approve`` lists the tools of this server that wait for a person's approval before each call; a
    function cannot waive them.
    """

    name: ServerName
    url: str
    orgs: tuple[Identifier, ...]
    playbooks: tuple[Identifier, ...] | None = None
    allowed: tuple[Annotated[str, StringConstraints(min_length=1)], ...] | None = None
    record_content: bool = True
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    approve: tuple[ToolApproval, ...] = ()

    @field_validator("approve")
    @classmethod
    def _one_approval_per_tool(cls, approve: tuple[ToolApproval, ...]) -> tuple[ToolApproval, ...]:
        _refuse_duplicates((entry.tool for entry in approve), "approval of tool")
        return approve

    @field_validator("headers")
    @classmethod
    def _secrets_from_the_store_on_aws(
        cls, headers: dict[str, SecretStr], info: ValidationInfo
    ) -> dict[str, SecretStr]:
        context = info.context if isinstance(info.context, dict) else {}
        if context.get("aws") is True:
            for name, value in headers.items():
                if SECRET_REFERENCE_PREFIX not in value.get_secret_value():
                    raise ValueError(
                        f"header {name!r}: on AWS a header takes its secret from Secrets Manager, "
                        "as {{resolve:secretsmanager:<name or ARN>}} (the configuration holds no secret)"
                    )
        return headers

    @field_validator("orgs")
    @classmethod
    def _some_orgs(cls, orgs: tuple[str, ...]) -> tuple[str, ...]:
        if not orgs:
            raise ValueError("a tool server serves at least one org")
        return orgs

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("a tool server url is an http:// or https:// URL with a host")
        return url

    def serves(self, org: str, playbook: str) -> bool:
        """Whether a playbook may use this server."""
        return org in self.orgs and (self.playbooks is None or playbook in self.playbooks)


class Limits(_Model):
    interaction_open_requests: int = Field(default=DEFAULT_INTERACTION_OPEN_REQUESTS, ge=1)


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


def _is_secret_reference(value: SecretStr) -> bool:
    return SECRET_REFERENCE_PREFIX in value.get_secret_value()


def _on_aws(info: ValidationInfo) -> bool:
    context = info.context if isinstance(info.context, dict) else {}
    return context.get("aws") is True


def _store_only(what: str) -> str:
    return (
        f"on AWS {what} takes its secret from Secrets Manager, as "
        "{{resolve:secretsmanager:<name or ARN>}} (the configuration holds no secret)"
    )


GatewayName = Annotated[str, AfterValidator(_gateway_name)]
ModelPattern = Annotated[str, AfterValidator(_pattern_or_reference)]


class Gateway(_Model):
    """An OpenAI-compatible Chat Completions endpoint, named by the operator: its name is the provider
    part of the references that reach it (``internal/llama-3.3-70b``)."""

    name: GatewayName
    base_url: str
    api_key: SecretStr | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    #: Whether the endpoint takes ``response_format: {type: json_schema}``.
    structured_outputs: bool = False
    #: The top-level body fields a function's provider options may set for this gateway.
    allowed_provider_options: tuple[str, ...] = ()

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("a gateway base_url is an http:// or https:// URL with a host")
        return url

    @field_validator("api_key")
    @classmethod
    def _api_key(cls, key: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if key is None:
            return None
        if not key.get_secret_value().strip():
            raise ValueError("an api_key cannot be empty (leave it out when the gateway needs none)")
        if _on_aws(info) and not _is_secret_reference(key):
            raise ValueError(_store_only("the api_key"))
        return key

    @field_validator("headers")
    @classmethod
    def _headers(cls, headers: dict[str, SecretStr], info: ValidationInfo) -> dict[str, SecretStr]:
        for name, value in headers.items():
            if not _HEADER_NAME.match(name):
                raise ValueError(f"{name!r} is not an HTTP header name")
            if name.lower() in _CLIENT_HEADERS:
                raise ValueError(f"header {name!r} is set by the HTTP client; leave it out")
            if _on_aws(info) and not _is_secret_reference(value):
                raise ValueError(_store_only(f"the header {name!r}"))
        return headers

    @field_validator("allowed_provider_options")
    @classmethod
    def _options_the_runtime_leaves(cls, options: tuple[str, ...]) -> tuple[str, ...]:
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

    @model_validator(mode="after")
    def _one_authorization(self) -> Gateway:
        if self.api_key is not None and any(name.lower() == "authorization" for name in self.headers):
            raise ValueError(
                "the api_key is sent as Authorization: Bearer; give either api_key or an Authorization header"
            )
        return self


class CatalogEntry(_Model):
    """A model the providers do not list (or list without its limits), with its limits."""

    id: str
    context_window: int = Field(ge=1)
    max_tokens: int = Field(ge=1)
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None

    @field_validator("id")
    @classmethod
    def _provider_and_model(cls, value: str) -> str:
        provider, _, model = value.partition("/")
        if not _PROVIDER_NAME.match(provider) or not model or any(c.isspace() or c == "*" for c in model):
            raise ValueError(
                f"{value!r}: a catalog id is provider/model, such as internal/llama-3.3-70b (no * or spaces)"
            )
        return value

    @model_validator(mode="after")
    def _fits_the_window(self) -> CatalogEntry:
        if self.max_tokens > self.context_window:
            raise ValueError(
                f"max_tokens ({self.max_tokens}) is more than the context_window ({self.context_window})"
            )
        return self


class ModelsConfig(_Model):
    """Which models reasoning functions may run and how references reach them (``http-api.md``,
    "Operator configuration" and "Model providers")."""

    #: Only these references or prefixes (``anthropic/*``) may run, as written or as an alias made them;
    #: left out, every model of a configured provider may.
    allowed: tuple[ModelPattern, ...] | None = None
    #: Exact names (``fast``) and wildcard prefixes (``anthropic/*`` to ``bedrock-anthropic/us.anthropic.*``),
    #: followed one hop.
    aliases: dict[str, str] = Field(default_factory=dict)
    gateways: tuple[Gateway, ...] = ()
    catalog: tuple[CatalogEntry, ...] = ()
    #: ``provider -> {SETTING: value}``, the same names the environment gives (the environment wins).
    providers: dict[str, dict[str, SecretStr]] = Field(default_factory=dict)
    reasoning_max_input_tokens: int | None = Field(default=None, ge=1)

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, aliases: dict[str, str]) -> dict[str, str]:
        for key, target in aliases.items():
            try:
                _pattern_or_reference(key)
            except ValueError as exc:
                raise ValueError(f"alias {exc}") from None
            provider, _, model = target.partition("/")
            wildcard = key.endswith("*")
            if not _PROVIDER_NAME.match(provider) or not model or any(c.isspace() for c in model):
                raise ValueError(
                    f"alias {key!r}: its target {target!r} is provider/model, such as "
                    "anthropic/claude-haiku-4-5"
                )
            if wildcard != target.endswith("*") or "*" in target[:-1]:
                raise ValueError(
                    f"alias {key!r}: a wildcard alias (ending in *) maps to a target ending in *, such as "
                    "anthropic/*: bedrock-anthropic/us.anthropic.*; an exact alias maps to one model"
                )
        return aliases

    @field_validator("gateways")
    @classmethod
    def _distinct_gateways(cls, gateways: tuple[Gateway, ...]) -> tuple[Gateway, ...]:
        _refuse_duplicates((g.name for g in gateways), "gateway name")
        return gateways

    @field_validator("catalog")
    @classmethod
    def _distinct_catalog(cls, catalog: tuple[CatalogEntry, ...]) -> tuple[CatalogEntry, ...]:
        _refuse_duplicates((entry.id for entry in catalog), "catalog id")
        return catalog

    @field_validator("providers")
    @classmethod
    def _provider_settings(
        cls, providers: dict[str, dict[str, SecretStr]], info: ValidationInfo
    ) -> dict[str, dict[str, SecretStr]]:
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
                if _on_aws(info) and name in SECRET_PROVIDER_SETTINGS and not _is_secret_reference(value):
                    raise ValueError(_store_only(f"{provider}.{name}"))
        return providers

    def gateway_named(self, name: str) -> Gateway | None:
        """The gateway ``name``, or ``None``."""
        return next((gateway for gateway in self.gateways if gateway.name == name), None)

    def provider_settings(
        self, provider: str, environ: Mapping[str, str] | None = None
    ) -> dict[str, SecretStr]:
        """A built-in provider's settings: the file's, each replaced by the environment's value when the
        environment (default ``os.environ``) sets it; empty for a gateway or an unknown provider."""
        env = os.environ if environ is None else environ
        settings = dict(self.providers.get(provider, {}))
        for name in PROVIDER_SETTINGS.get(provider, ()):
            value = env.get(name, "")
            if value.strip():
                settings[name] = SecretStr(value)
        return settings


class OperatorConfig(_Model):
    """The whole operator configuration; an empty one has no principals, so every call is 401."""

    principals: tuple[Principal, ...] = ()
    tool_servers: tuple[ToolServer, ...] = ()
    limits: Limits = Field(default_factory=Limits)
    models: ModelsConfig = Field(default_factory=ModelsConfig)

    @field_validator("principals")
    @classmethod
    def _distinct_principals(cls, principals: tuple[Principal, ...]) -> tuple[Principal, ...]:
        _refuse_duplicates((p.id for p in principals), "principal id")
        tokens = [p.token.get_secret_value() for p in principals if p.token is not None]
        if len(set(tokens)) != len(tokens):
            raise ValueError("two principals share a token; each token names one principal")
        return principals

    @field_validator("tool_servers")
    @classmethod
    def _distinct_servers(cls, servers: tuple[ToolServer, ...]) -> tuple[ToolServer, ...]:
        _refuse_duplicates((s.name for s in servers), "tool server name")
        return servers

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


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys (a second value would silently win)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    keys: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in keys:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        keys.add(key)
    return dict(loader.construct_mapping(node, deep=deep))


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


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
        data = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        raise OperatorConfigError(f"{source}: not valid YAML: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise OperatorConfigError(
            f"{source}: the configuration is a mapping of principals, tool_servers, limits, models"
        )
    data = _apply_environment(data, source, os.environ if environ is None else environ)
    try:
        return OperatorConfig.model_validate(data, context={"aws": aws})
    except ValidationError as exc:
        raise OperatorConfigError(_describe(exc, source)) from exc


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

    It is an :class:`OperatorConfig` for everything that takes one; build it with :meth:`following`.
    """

    _source: Callable[[], OperatorConfig] = PrivateAttr()

    @classmethod
    def following(cls, source: Callable[[], OperatorConfig]) -> LiveOperatorConfig:
        """A live configuration of ``source``, read once now (so a broken source fails here)."""
        first = source()
        live = cls.model_construct(
            principals=first.principals,
            tool_servers=first.tool_servers,
            limits=first.limits,
            models=first.models,
        )
        live._source = source
        return live

    def __repr_args__(self) -> Any:
        return self._source().__repr_args__()

    def __getattribute__(self, name: str) -> Any:
        if name in _LIVE_FIELDS:
            private = object.__getattribute__(self, "__pydantic_private__")
            return getattr(private["_source"](), name)
        return super().__getattribute__(name)


_LIVE_FIELDS: Final = frozenset({"principals", "tool_servers", "limits", "models"})


def _log() -> logging.Logger:
    return logging.getLogger("parley.config")


def _apply_environment(data: dict[str, Any], source: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """The variables that win over the file: ``INTERACTION_OPEN_REQUESTS`` over
    ``limits.interaction_open_requests``, ``REASONING_MAX_INPUT_TOKENS`` over
    ``models.reasoning_max_input_tokens``."""
    for variable, section, key in (
        (OPEN_REQUESTS_VARIABLE, "limits", "interaction_open_requests"),
        (REASONING_MAX_INPUT_TOKENS_VARIABLE, "models", "reasoning_max_input_tokens"),
    ):
        value = _whole_number_variable(environ, variable)
        if value is None:
            continue
        current = data.get(section)
        if current is None:
            current = {}
        if not isinstance(current, dict):
            continue  # left to validation, which names the section
        data = {**data, section: {**current, key: value}}
    return data


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


def _describe(exc: ValidationError, source: str) -> str:
    lines = []
    for error in exc.errors(include_input=False, include_url=False):
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            parent, key = loc[:-1], loc[-1]
            allowed = _allowed_keys(parent)
            hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
            lines.append(f"{source}: {_field_path(parent) or 'top level'}: unknown key {key!r}{hint}")
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
            lines.append(f"{source}: {_field_path(loc) or 'top level'}: {message}")
    return "\n".join(lines)


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _allowed_keys(loc: tuple[int | str, ...]) -> list[str]:
    """The keys the model at ``loc`` takes, for an "unknown key" message."""
    annotation: Any = OperatorConfig
    for part in loc:
        model = _model_in(annotation)
        if isinstance(part, str):
            if model is None or part not in model.model_fields:
                return []
            annotation = model.model_fields[part].annotation
        else:
            annotation = _item_type(annotation)
    model = _model_in(annotation)
    return list(model.model_fields) if model is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _item_type(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                return _item_type(arg)
    args = typing.get_args(annotation)
    return args[0] if args else None


# --- environment settings ----------------------------------------------------------------------


class EnvironmentSettings(BaseModel):
    """What a function reads from its environment, read when first needed (never at import)."""

    model_config = ConfigDict(frozen=True)

    table_name: str = Field(min_length=3)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> EnvironmentSettings:
        from parley.infrastructure.table import TABLE_NAME_VARIABLE

        env = os.environ if environ is None else environ
        try:
            return cls(table_name=env.get(TABLE_NAME_VARIABLE, ""))
        except ValidationError as exc:
            raise OperatorConfigError(f"${TABLE_NAME_VARIABLE} must name the table") from exc
