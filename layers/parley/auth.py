"""Who is calling, and what they may do (``http-api.md``, "Base and auth").

- No ``Authorization: Bearer <token>``, or a token no principal holds: ``401 unauthenticated`` with
  ``WWW-Authenticate: Bearer``.
- A playbook the principal holds no role on: ``404 not_found``, worded as for a playbook that does not
  exist, so that callers cannot learn which playbooks exist.
- A write with only the ``read`` role: ``403 forbidden``.

Locally the tokens come from the operator configuration and are compared in constant time
(:func:`authenticate`). On AWS the API's JWT authorizer (``parley.authorizer``) checks the token before
the request reaches the function and names the principal; the function takes that name and looks up
its grants in the operator configuration (:func:`authorized_principal`). Either way :func:`authorize`
decides what the principal may do.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Final, Literal

from parley.errors import Problem

if TYPE_CHECKING:  # the configuration models load with the runtime, not with this module
    from parley.config import OperatorConfig, Principal

CHALLENGE: Final = {"WWW-Authenticate": "Bearer"}
#: A principal's id is 1 to 128 characters (``parley.config.Principal``).
MAX_PRINCIPAL_ID_LENGTH: Final = 128


def authenticate(authorization: str | None, config: OperatorConfig) -> Principal:
    """The principal whose token the ``Authorization`` header value carries."""
    token = bearer_token(authorization)
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
        if principal.token is None:  # a deployed configuration's principal: the JWT names it
            continue
        if hmac.compare_digest(presented, principal.token.get_secret_value().encode("utf-8")):
            found = principal
    if found is None:
        raise Problem("unauthenticated", "The bearer token is not valid.", headers=dict(CHALLENGE))
    return found


def authorized_principal(principal_id: str | None, config: OperatorConfig) -> Principal:
    """The principal the API's authorizer named (``requestContext.authorizer.principalId``), with the
    grants the operator configuration gives it; none when it names nobody the configuration knows.

    API Gateway only calls the function once its authorizer accepted the token, and clients cannot set
    the authorizer's context, so the name is trusted. An empty one is refused all the same.
    """
    if not principal_id or len(principal_id) > MAX_PRINCIPAL_ID_LENGTH:
        raise Problem("unauthenticated", "The bearer token is not valid.", headers=dict(CHALLENGE))
    return config.principal_named(principal_id)


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


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value (any case of ``Bearer``), else ``None``."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token
