"""Connections (``http-api.md``, "Connections"; issue 32): MCP servers that people add to their org, which
its functions then name as they name the operator's tool servers.

- ``model``: the record (:class:`Connection`), its statuses and bounds;
- ``rules``: a connection's status under the operator's ``connections`` rules (:func:`status_under`; the
  rules themselves are a section of the configuration, ``parley.config.connections``);
- ``store``: the records in the one table, under the org (:class:`ConnectionStore`);
- ``secrets``: a connection's headers and OAuth tokens, kept as secrets (:class:`ConnectionSecrets`:
  Secrets Manager on AWS, encrypted in the data folder locally, in memory with ``--data none``);
- ``credentials``: the one place a credential becomes headers (:func:`headers_for`);
- ``oauth``: the MCP authorization flow (``begin_authorization``, ``finish_authorization``, refresh).

The operations (add, list, get, approve, authorize, remove) are the API's (``parley.api.connections``,
``parley.api.oauth``); a connection serves tools through ``parley.tools.connected``.

Offers: :class:`Connection`, :func:`status_under`, :class:`ConnectionStore` (:class:`ConnectionExists`,
:class:`ConnectionMissing`), :class:`ConnectionSecrets` (:class:`SecretUnreadable`), :func:`headers_for`.

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.connections.credentials import headers_for
    from parley.connections.model import Connection
    from parley.connections.rules import status_under
    from parley.connections.secrets import ConnectionSecrets, SecretUnreadable
    from parley.connections.store import ConnectionExists, ConnectionMissing, ConnectionStore

__all__ = [
    "Connection",
    "ConnectionExists",
    "ConnectionMissing",
    "ConnectionSecrets",
    "ConnectionStore",
    "SecretUnreadable",
    "headers_for",
    "status_under",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "credentials": ("headers_for",),
            "model": ("Connection",),
            "rules": ("status_under",),
            "secrets": ("ConnectionSecrets", "SecretUnreadable"),
            "store": ("ConnectionExists", "ConnectionMissing", "ConnectionStore"),
        },
    )
