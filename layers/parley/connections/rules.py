"""A connection's status under the operator's rules (``http-api.md``, "Connections"; issue 32): the rules
themselves, ``connections.allowed_urls`` and ``connections.require_approval`` with their URL patterns,
are a section of the operator configuration (``parley.config.connections``), offered here too."""

from __future__ import annotations

from parley.config.connections import LOOPBACK_HOST as LOOPBACK_HOST
from parley.config.connections import ConnectionRules as ConnectionRules
from parley.config.connections import UrlRefused as UrlRefused
from parley.config.connections import allowed_by as allowed_by
from parley.config.connections import check_pattern as check_pattern
from parley.config.connections import check_url as check_url
from parley.config.connections import url_allowed as url_allowed
from parley.connections.model import Connection, ConnectionStatus

__all__ = [
    "LOOPBACK_HOST",
    "ConnectionRules",
    "UrlRefused",
    "allowed_by",
    "check_pattern",
    "check_url",
    "status_under",
    "url_allowed",
]


def status_under(connection: Connection, rules: ConnectionRules) -> ConnectionStatus:
    """The connection's status as the operator's current rules have it: ``not_allowed`` when
    ``connections.allowed_urls`` no longer allows its URL, else its stored status."""
    if not url_allowed(connection.url, rules):
        return "not_allowed"
    return connection.status
