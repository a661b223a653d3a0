"""What a deployment chooses through CDK context (``-c key=value``), checked before anything is built.

- ``stage``: ``dev`` or ``prod`` (``settings``); ``dev`` by default.
- ``oidc_issuer``: an existing OIDC issuer (``https://…``) whose JWTs the API accepts; without it the
  stack makes a Cognito user pool. ``oidc_audience``: its client ids the tokens must name (``aud``, or
  ``client_id``), comma-separated, required with it. ``oidc_jwks_uri``: its JWKS (default: found by OIDC
  discovery).
- ``principal_claim``: the claim that names the principal (``sub``).
- ``tool_server_secrets``: the Secrets Manager secrets tool server headers may read, comma-separated
  ARNs or names (``*`` allowed); by default every secret named ``parley/<stage>/tool-servers/*``.
- ``bedrock_models``: the Amazon Bedrock models the reason function may call, comma-separated model
  ids (``anthropic.claude-sonnet-4-5-20250929-v1:0``) or cross-region inference profile ids
  (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``); none by default, and then no Bedrock grant at all
  (``parley_cdk.models``).
- ``alarm_email``: an address the alarm topic mails (otherwise subscribe to the topic yourself).
- ``operator_config``: a file whose text is the operator configuration parameter's first value
  (otherwise: principals and tool servers left empty).

The operator configuration is checked as the deployed functions read it (``parse_operator_config(…,
aws=True)``): principals without tokens, header values as Secrets Manager references. Its text becomes
the SSM parameter's value only when the stack creates the parameter or when this text changes; the
operator then edits the parameter itself (docs/deploy.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from parley.config import OperatorConfigError, parse_operator_config
from parley_cdk.models import BedrockModelError, bedrock_model_id

STAGE_KEY: Final = "stage"
OIDC_ISSUER_KEY: Final = "oidc_issuer"
OIDC_AUDIENCE_KEY: Final = "oidc_audience"
OIDC_JWKS_URI_KEY: Final = "oidc_jwks_uri"
PRINCIPAL_CLAIM_KEY: Final = "principal_claim"
TOOL_SERVER_SECRETS_KEY: Final = "tool_server_secrets"
BEDROCK_MODELS_KEY: Final = "bedrock_models"
ALARM_EMAIL_KEY: Final = "alarm_email"
OPERATOR_CONFIG_KEY: Final = "operator_config"

#: SSM's largest parameter value (an advanced parameter; up to 4 KB it stays a free standard one).
MAX_OPERATOR_CONFIG_BYTES: Final = 8192

#: The parameter's value when no ``operator_config`` is given: valid, and saying where to go next.
EMPTY_OPERATOR_CONFIG: Final = """\
# Parley operator configuration (http-api.md, "Operator configuration"); docs/deploy.md says how to
# change it. Principals are named by their JWT's claim (sub unless principal_claim says otherwise) and
# carry no token; tool server headers take their secrets from Secrets Manager.
principals: []
tool_servers: []
"""


class OptionsError(ValueError):
    """A context value that cannot be deployed; the message names the context key."""


@dataclass(frozen=True)
class OidcIssuer:
    """An existing OIDC issuer (instead of the stack's Cognito user pool)."""

    issuer: str
    audiences: tuple[str, ...]
    jwks_uri: str | None = None


@dataclass(frozen=True)
class DeploymentOptions:
    oidc: OidcIssuer | None = None
    principal_claim: str = "sub"
    #: ``None``: the stage's name prefix (:func:`default_tool_server_secrets`).
    tool_server_secrets: tuple[str, ...] | None = None
    #: Bedrock model and inference profile ids the reason function may invoke; empty: no Bedrock grant.
    bedrock_models: tuple[str, ...] = ()
    alarm_email: str | None = None
    operator_config: str = EMPTY_OPERATOR_CONFIG


def default_tool_server_secrets(stage: str) -> tuple[str, ...]:
    """Every secret named under ``parley/<stage>/tool-servers/``."""
    return (f"parley/{stage}/tool-servers/*",)


def connection_secrets_prefix(stage: str) -> str:
    """Where the connections' secrets are named (``parley.connections.secrets``): one per connection,
    ``parley/<stage>/connections/<org>/<name>``."""
    return f"parley/{stage}/connections/"


def default_model_secrets(stage: str) -> tuple[str, ...]:
    """Every secret named under ``parley/<stage>/models/``: the model providers' keys and gateway
    headers, which the operator configuration names as ``{{resolve:secretsmanager:…}}`` references."""
    return (f"parley/{stage}/models/*",)


def _https(url: str, key: str) -> str:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise OptionsError(f"context {key}: an https:// URL, not {url!r}")
    return url


def _listed(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


def options_from_context(get: Callable[[str], Any]) -> DeploymentOptions:
    """The options of the context values ``get(key)`` gives (``app.node.try_get_context``)."""

    def text(key: str) -> str | None:
        value = get(key)
        if value is None or str(value).strip() == "":
            return None
        return str(value).strip()

    oidc = None
    issuer = text(OIDC_ISSUER_KEY)
    audience = text(OIDC_AUDIENCE_KEY)
    jwks_uri = text(OIDC_JWKS_URI_KEY)
    if issuer is not None:
        audiences = _listed(audience or "")
        if not audiences:
            raise OptionsError(
                f"context {OIDC_AUDIENCE_KEY}: required with {OIDC_ISSUER_KEY} (its client ids)"
            )
        oidc = OidcIssuer(
            issuer=_https(issuer, OIDC_ISSUER_KEY),
            audiences=audiences,
            jwks_uri=_https(jwks_uri, OIDC_JWKS_URI_KEY) if jwks_uri else None,
        )
    elif audience is not None or jwks_uri is not None:
        raise OptionsError(f"context {OIDC_AUDIENCE_KEY}/{OIDC_JWKS_URI_KEY}: only with {OIDC_ISSUER_KEY}")

    secrets = text(TOOL_SERVER_SECRETS_KEY)
    models = _listed(text(BEDROCK_MODELS_KEY) or "")
    try:
        bedrock_models = tuple(dict.fromkeys(bedrock_model_id(model) for model in models))
    except BedrockModelError as exc:
        raise OptionsError(f"context {BEDROCK_MODELS_KEY}: {exc}") from None
    email = text(ALARM_EMAIL_KEY)
    if email is not None and "@" not in email:
        raise OptionsError(f"context {ALARM_EMAIL_KEY}: an email address, not {email!r}")
    path = text(OPERATOR_CONFIG_KEY)
    return DeploymentOptions(
        oidc=oidc,
        principal_claim=text(PRINCIPAL_CLAIM_KEY) or "sub",
        tool_server_secrets=_listed(secrets) if secrets else None,
        bedrock_models=bedrock_models,
        alarm_email=email,
        operator_config=read_operator_config(Path(path)) if path else EMPTY_OPERATOR_CONFIG,
    )


def read_operator_config(path: Path) -> str:
    """The text of the operator configuration file ``path``, once it is known to serve on AWS."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OptionsError(f"context {OPERATOR_CONFIG_KEY}: cannot read {path}: {exc.strerror}") from exc
    try:
        parse_operator_config(text, str(path), environ={}, aws=True)
    except OperatorConfigError as exc:
        raise OptionsError(f"context {OPERATOR_CONFIG_KEY}: {exc}") from exc
    if len(text.encode("utf-8")) > MAX_OPERATOR_CONFIG_BYTES:
        raise OptionsError(
            f"context {OPERATOR_CONFIG_KEY}: {path} is larger than {MAX_OPERATOR_CONFIG_BYTES} bytes, "
            "the most an SSM parameter holds"
        )
    return text
