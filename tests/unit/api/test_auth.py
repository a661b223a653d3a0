"""Who is calling and what they may do (http-api.md, "Base and auth")."""

from __future__ import annotations

import pytest

from parley.auth import authenticate, authorize
from parley.config import parse_operator_config
from parley.errors import Problem

CONFIG = parse_operator_config(
    """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }
""",
    "test",
    environ={},
)


@pytest.mark.parametrize(
    ("header", "principal"),
    [("Bearer dev-token", "dev"), ("bearer viewer-token", "viewer"), ("  Bearer   dev-token  ", "dev")],
)
def test_a_bearer_token_names_its_principal(header: str, principal: str) -> None:
    assert authenticate(header, CONFIG).id == principal


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Token dev-token",
        "dev-token",
        "Bearer dev-token2",
        "Bearer dev-toke",
        "Bearer DEV-TOKEN",
    ],
)
def test_no_or_an_invalid_token_is_401_with_a_bearer_challenge(header: str | None) -> None:
    with pytest.raises(Problem) as caught:
        authenticate(header, CONFIG)

    assert (caught.value.status, caught.value.reason) == (401, "unauthenticated")
    assert caught.value.headers == {"WWW-Authenticate": "Bearer"}


def test_roles() -> None:
    dev, viewer = CONFIG.principals

    authorize(dev, "acme", "campaigns", "write")
    authorize(viewer, "acme", "campaigns", "read")
    with pytest.raises(Problem) as forbidden:
        authorize(viewer, "acme", "campaigns", "write")
    assert (forbidden.value.status, forbidden.value.reason) == (403, "forbidden")


@pytest.mark.parametrize(("org", "playbook"), [("acme", "other"), ("other", "campaigns")])
def test_a_playbook_without_a_grant_is_not_found(org: str, playbook: str) -> None:
    for principal in CONFIG.principals:
        for needs in ("read", "write"):
            with pytest.raises(Problem) as caught:
                authorize(principal, org, playbook, needs)  # type: ignore[arg-type]
            assert (caught.value.status, caught.value.reason) == (404, "not_found")
