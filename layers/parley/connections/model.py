"""A connection's record (``http-api.md``, "Connections"): an MCP server a person added to an org.

The record holds no secret: a connection's headers and OAuth tokens are kept apart
(:mod:`parley.connections.secrets`), and :meth:`Connection.public` is what every response shows.
``status`` is the status as stored (``pending``, ``active`` or ``broken``); ``not_allowed`` is never
stored but read against the operator's current rules (:func:`parley.connections.rules.status_under`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from parley.config.connections import URL_MAX_LENGTH as URL_MAX_LENGTH

ConnectionStatus = Literal["pending", "active", "broken", "not_allowed"]
ConnectionAuth = Literal["none", "headers", "oauth"]

#: The statuses a record holds (``not_allowed`` is read, never stored).
STORED_STATUSES: Final = ("pending", "active", "broken")
STATUSES: Final = ("pending", "active", "broken", "not_allowed")
AUTHS: Final = ("none", "headers", "oauth")
#: A connection's name follows a tool server's name rules (``http-api.md``, "Operator configuration").
CONNECTION_NAME: Final = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
CONNECTION_NAME_RULE: Final = "a connection name is 1 to 32 of a-z, 0-9 and '-', starting with a letter"
#: The longest URL a connection may have.
#: The most headers a connection may send, and the longest header name and value.
MAX_CONNECTION_HEADERS: Final = 20
HEADER_NAME_MAX: Final = 128
HEADER_VALUE_MAX: Final = 8192
#: The most playbooks a connection may name.
MAX_CONNECTION_PLAYBOOKS: Final = 100


@dataclass(frozen=True)
class Connection:
    """One connection of an org, as stored (no secret)."""

    org: str
    name: str
    url: str
    #: As stored: ``pending``, ``active`` or ``broken``.
    status: ConnectionStatus
    #: The playbooks of the org that see it; ``None``: every playbook of the org.
    playbooks: tuple[str, ...] | None
    added_by: str
    #: RFC 3339, as runs' times.
    added_at: str
    approved_by: str | None
    approved_at: str | None
    auth: ConnectionAuth

    def serves(self, playbook: str) -> bool:
        """Whether a playbook of the connection's org sees it."""
        return self.playbooks is None or playbook in self.playbooks

    def public(self) -> dict[str, Any]:
        """The route's JSON: every field but the org, and no secret (there is none in the record)."""
        return {
            "name": self.name,
            "url": self.url,
            "status": self.status,
            "playbooks": list(self.playbooks) if self.playbooks is not None else None,
            "added_by": self.added_by,
            "added_at": self.added_at,
            "approved_by": self.approved_by,
            "approved_at": self.approved_at,
            "auth": self.auth,
        }
