"""``principals`` (``http-api.md``, "Operator configuration"): who calls the API and their grants.

Locally each principal holds its bearer token; on AWS the JWT names the principal, so principals carry no
``token``. Org and playbook ids are read here for every section (:data:`identifier`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from parley.config.rules import refuse_duplicates
from parley.reading import Reading, bounded_text, choice, items, optional, reads, record, secret, text, then
from parley.secret import Secret

#: An org or playbook id (a part of table keys: no ``#`` or ``/``).
IDENTIFIER: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _identifier(value: str) -> str:
    # Org and playbook ids become parts of table keys (``PB#{org}#{playbook}``), so ``#`` and ``/`` are out.
    if not IDENTIFIER.match(value):
        raise ValueError(
            "an org or playbook id is 1 to 128 of A-Z, a-z, 0-9, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return value


identifier = then(text, _identifier)
Role = Literal["read", "write"]
#: A grant's role: per playbook ``read`` or ``write``; per org (no playbook) ``admin``, which approves and
#: removes the org's connections (``http-api.md``, "Connections") and gives no role on any playbook.
GrantRole = Literal["read", "write", "admin"]


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
    refuse_duplicates(((g.org, g.playbook or "(admin)") for g in grants), "grant for org/playbook")
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


def distinct_principals(principals: tuple[Principal, ...]) -> tuple[Principal, ...]:
    refuse_duplicates((p.id for p in principals), "principal id")
    tokens = [p.token.get_secret_value() for p in principals if p.token is not None]
    if len(set(tokens)) != len(tokens):
        raise ValueError("two principals share a token; each token names one principal")
    return principals


__all__ = ["IDENTIFIER", "Grant", "GrantRole", "Principal", "Role", "distinct_principals", "identifier"]
