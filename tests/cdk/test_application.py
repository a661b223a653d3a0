"""Building the app from its context: the stage and the deployment's options (``parley_cdk.options``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley_cdk.options import (
    EMPTY_OPERATOR_CONFIG,
    MAX_OPERATOR_CONFIG_BYTES,
    DeploymentOptions,
    OidcIssuer,
    OptionsError,
    default_tool_server_secrets,
    options_from_context,
)
from parley_cdk.settings import stage_settings

CONFIG = """principals:
  - id: 0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d
    grants:
      - { org: acme, playbook: campaigns, role: write }
tool_servers:
  - name: chat
    url: https://chat.example.com/mcp
    orgs: [acme]
    headers: { Authorization: "Bearer {{resolve:secretsmanager:parley/prod/tool-servers/chat}}" }
"""


def options(**context: Any) -> DeploymentOptions:
    return options_from_context(context.get)


def test_without_context_the_stack_makes_its_user_pool_and_an_empty_configuration() -> None:
    chosen = options()

    assert chosen == DeploymentOptions()
    assert chosen.oidc is None
    assert chosen.principal_claim == "sub"
    assert chosen.tool_server_secrets is None
    assert chosen.operator_config == EMPTY_OPERATOR_CONFIG
    assert default_tool_server_secrets("prod") == ("parley/prod/tool-servers/*",)


def test_the_empty_configuration_is_one_the_functions_accept() -> None:
    from parley.config import parse_operator_config

    config = parse_operator_config(EMPTY_OPERATOR_CONFIG, "parameter", environ={}, aws=True)

    assert (config.principals, config.tool_servers) == ((), ())


def test_an_existing_oidc_issuer_with_its_audiences() -> None:
    chosen = options(
        oidc_issuer="https://login.example.com/",
        oidc_audience="api, cli",
        oidc_jwks_uri="https://login.example.com/keys",
        principal_claim="email",
    )

    assert chosen.oidc == OidcIssuer(
        "https://login.example.com/", ("api", "cli"), "https://login.example.com/keys"
    )
    assert chosen.principal_claim == "email"


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"oidc_issuer": "https://login.example.com/"}, "oidc_audience: required"),
        ({"oidc_issuer": "http://login.example.com/", "oidc_audience": "a"}, "oidc_issuer: an https://"),
        ({"oidc_issuer": "https://x/", "oidc_audience": "a", "oidc_jwks_uri": "ftp://x"}, "oidc_jwks_uri"),
        ({"oidc_audience": "a"}, "only with oidc_issuer"),
        ({"alarm_email": "nobody"}, "alarm_email: an email address"),
    ],
)
def test_context_mistakes_name_the_key(context: dict[str, str], message: str) -> None:
    with pytest.raises(OptionsError, match=message):
        options(**context)


def test_secrets_and_alarm_address() -> None:
    chosen = options(
        tool_server_secrets="arn:aws:secretsmanager:eu-west-1:1:secret:a-AbCdEf, shared/b",
        alarm_email="ops@example.com",
    )

    assert chosen.tool_server_secrets == ("arn:aws:secretsmanager:eu-west-1:1:secret:a-AbCdEf", "shared/b")
    assert chosen.alarm_email == "ops@example.com"


def test_an_operator_config_file_becomes_the_parameters_first_value(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text(CONFIG)

    assert options(operator_config=str(path)).operator_config == CONFIG


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("principals: 3\n", r"operator\.yaml: principals"),
        # A local file's tokens would end up in the template and the parameter: refused.
        ("principals: [{id: a, token: dev-token}]\n", "a token is for the local server only"),
        (
            "tool_servers: [{name: c, url: 'https://x', orgs: [a], headers: {X-Key: literal-key}}]\n",
            "takes its secret from Secrets Manager",
        ),
    ],
)
def test_an_operator_config_the_functions_would_refuse_fails_the_synth(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text(text)

    with pytest.raises(OptionsError, match=message) as caught:
        options(operator_config=str(path))
    assert "dev-token" not in str(caught.value) and "literal-key" not in str(caught.value)


def test_an_operator_config_too_large_for_a_parameter_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text(f"{CONFIG}{'#' * MAX_OPERATOR_CONFIG_BYTES}\n")

    with pytest.raises(OptionsError, match="larger than 8192 bytes"):
        options(operator_config=str(path))


def test_a_missing_operator_config_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(OptionsError, match=r"missing\.yaml"):
        options(operator_config=str(tmp_path / "missing.yaml"))


def test_only_dev_and_prod_are_stages() -> None:
    assert stage_settings("prod").retain_data is True
    assert stage_settings("dev").retain_data is False
    with pytest.raises(ValueError, match="dev, prod"):
        stage_settings("staging")
