"""Who is calling, and what they may do (``http-api.md``, "Base and auth").

- No ``Authorization: Bearer <token>``, or a token no principal holds: ``401 unauthenticated`` with
  ``WWW-Authenticate: Bearer``.
- A playbook the principal holds no role on: ``404 not_found``, worded as for a playbook that does not
  exist, so that callers cannot learn which playbooks exist.
- A write with only the ``read`` role: ``403 forbidden``.

Locally the tokens come from the operator configuration and are compared in constant time; on AWS a
JWT authorizer will name the principal instead (a later issue), and only :func:`authenticate` changes.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Final, Literal

from parley.errors import Problem

if TYPE_CHECKING:  # the configuration models load with the runtime, not with this module
    from parley.config import OperatorConfig, Principal

CHALLENGE: Final = {"WWW-Authenticate": "Bearer"}


def authenticate(authorization: str | None, config: OperatorConfig) -> Principal:
    """The principal whose token the ``Authorization`` header value carries."""
    token = _bearer_token(authorization)
    if token is None:
        raise Problem(
            "unauthenticated",
            "Send the header Authorization: Bearer <token>.",
            headers=dict(CHALLENGE),
        )
    presented = token.encode("utf-8")
    found: Principal | None = None
    # Compare with every principal's token, without stopping at a match, so the time taken does not
    # tell how much of a token was right nor which principal it belongs to.
    for principal in config.principals:
        if hmac.compare_digest(presented, principal.token.get_secret_value().encode("utf-8")):
            found = principal
    if found is None:
        raise Problem("unauthenticated", "The bearer token is not valid.", headers=dict(CHALLENGE))
    return found


def authorize(principal: Principal, org: str, playbook: str, needs: Literal["read", "write"]) -> None:
    """Raise unless ``principal`` may make a call that ``needs`` the role on the playbook."""
    role = principal.role_on(org, playbook)
    if role is None:
        raise playbook_not_found(org, playbook)
    if needs == "write" and role != "write":
        raise Problem("forbidden", f"Changing playbook {playbook!r} of org {org!r} takes the write role.")


def playbook_not_found(org: str, playbook: str) -> Problem:
    """The one wording for a playbook that does not exist or that the caller cannot read."""
    return Problem("not_found", f"Org {org!r} has no playbook {playbook!r}.")


def _bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token
