"""Who the caller is, on AWS and locally (``parley.auth``; http-api.md, "Base and auth")."""

from __future__ import annotations

import pytest

from parley.auth import authenticate, authorized_principal, bearer_token
from parley.config import Principal, parse_operator_config
from parley.errors import Problem

DEPLOYED = parse_operator_config(
    """
principals:
  - id: 0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d
    grants: [{ org: acme, playbook: campaigns, role: write }]
  - id: maria@example.com
    grants: [{ org: acme, playbook: campaigns, role: read }]
""",
    "parameter",
    environ={},
    aws=True,
)


def test_the_authorizers_principal_gets_its_grants_from_the_configuration() -> None:
    principal = authorized_principal("maria@example.com", DEPLOYED)

    assert principal.id == "maria@example.com"
    assert principal.role_on("acme", "campaigns") == "read"


def test_a_principal_the_configuration_does_not_name_has_no_grant() -> None:
    principal = authorized_principal("someone-else", DEPLOYED)

    assert principal == Principal(id="someone-else")
    assert principal.role_on("acme", "campaigns") is None


@pytest.mark.parametrize("principal_id", [None, "", "x" * 129])
def test_an_empty_principal_is_unauthenticated(principal_id: str | None) -> None:
    with pytest.raises(Problem) as caught:
        authorized_principal(principal_id, DEPLOYED)

    assert (caught.value.status, caught.value.headers) == (401, {"WWW-Authenticate": "Bearer"})


def test_a_deployed_configuration_has_no_tokens_so_no_bearer_token_names_anyone() -> None:
    for header in ("Bearer 0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d", "Bearer maria@example.com", "Bearer None"):
        with pytest.raises(Problem) as caught:
            authenticate(header, DEPLOYED)
        assert caught.value.status == 401


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("BEARER abc", "abc"),
        ("Bearer", None),
        ("Basic abc", None),
        (None, None),
    ],
)
def test_the_bearer_token_of_a_header(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_locally_a_principal_needs_a_token_and_on_aws_has_none() -> None:
    from parley.config import OperatorConfigError

    with pytest.raises(OperatorConfigError, match=r"principals\[0\]\.token: Field required"):
        parse_operator_config("principals: [{id: a}]", "local.yaml", environ={})
    with pytest.raises(OperatorConfigError, match="a token is for the local server only"):
        parse_operator_config("principals: [{id: a, token: t}]", "parameter", environ={}, aws=True)
