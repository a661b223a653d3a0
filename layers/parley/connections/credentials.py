"""The headers a call to a connection sends (``http-api.md``, "Connections"; issue 32): read from the
connection's secret each time the connection is looked up for a run, a ``search`` or an ``execute``, so
a secret put again (a connection removed and added, OAuth tokens kept anew) is sent at the next use.

- ``auth: none``: no header, and no secret is read;
- ``auth: headers``: the secret's ``{"headers": {name: value}}``, as the person gave them;
- ``auth: oauth``: ``Authorization: Bearer <access_token>`` from the secret's ``{"oauth": {...}}``,
  refreshed first when it is about to expire (:func:`parley.connections.oauth.fresh_oauth_headers`, given
  the ``store``: a refresh the authorization server refuses makes the connection ``broken``).

:func:`headers_for` is the one place a connection's credential becomes headers. It raises
:class:`~parley.connections.secrets.SecretUnreadable` when the secret cannot be read or does not hold
what ``auth`` says, and a run then ends ``tool_not_offered`` with ``because: connection_broken``.

The values returned are secrets: the caller sends them to the connection's server and scrubs them from
everything it keeps (:class:`parley.tools.servers.ResolvedServer`); nothing here logs or shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from parley.connections.secrets import SecretUnreadable

if TYPE_CHECKING:
    from datetime import datetime

    from parley.connections.model import Connection
    from parley.connections.secrets import ConnectionSecrets
    from parley.connections.store import ConnectionStore


def headers_for(
    connection: Connection,
    secrets: ConnectionSecrets,
    now: datetime,
    store: ConnectionStore | None = None,
) -> dict[str, str]:
    """The headers to send to ``connection``'s server; :class:`SecretUnreadable` when its credential
    cannot be read (its words name the connection, never a value). With ``store``, an OAuth token about
    to expire is refreshed first (issue 32, part 4)."""
    if connection.auth == "none":
        return {}
    if connection.auth == "oauth" and store is not None:
        from parley.connections.oauth import fresh_oauth_headers

        return fresh_oauth_headers(connection, secrets, store, now)
    value = secrets.read(connection.org, connection.name)
    if connection.auth == "headers":
        return _headers(connection, value.get("headers"))
    return {"Authorization": f"Bearer {_access_token(connection, value.get('oauth'))}"}


def _headers(connection: Connection, headers: Any) -> dict[str, str]:
    if not isinstance(headers, Mapping) or not all(
        isinstance(name, str) and isinstance(value, str) for name, value in headers.items()
    ):
        raise SecretUnreadable(f"The secret of the connection {connection.name!r} holds no headers.")
    return dict(headers)


def _access_token(connection: Connection, oauth: Any) -> str:
    token = oauth.get("access_token") if isinstance(oauth, Mapping) else None
    if not isinstance(token, str) or not token:
        raise SecretUnreadable(
            f"The connection {connection.name!r} holds no OAuth access token; authorize it "
            "(authorize_connection), or remove it and add it again."
        )
    return token
